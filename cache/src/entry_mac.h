// Entry authentication: HMAC-SHA256, under the user's cache key, over everything a hit hands
// to the caller (the key it was stored under, the compressed binary and its size, the launch
// plan). Checked before any stored byte is decompressed or parsed.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string_view>

namespace weft::cache::detail {

using EntryMac = std::array<std::uint8_t, 32>;

EntryMac entry_mac(std::span<const std::uint8_t> secret, std::string_view key,
                   std::uint64_t uncompressed_size, std::span<const std::uint8_t> frame,
                   std::span<const std::uint8_t> metadata);

// Compares in constant time; false when the sizes differ.
bool same_mac(std::span<const std::uint8_t> stored, const EntryMac& expected);

}  // namespace weft::cache::detail
