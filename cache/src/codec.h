// Compression and checksums of stored program binaries.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

namespace weft::cache::detail {

// XXH3-64 of `bytes`.
std::uint64_t checksum(std::span<const std::uint8_t> bytes);

// zstd frame of `bytes` at `level`.
std::vector<std::uint8_t> compress(std::span<const std::uint8_t> bytes, int level);

// The `expected_size` bytes `frame` decompresses to, or nothing when zstd rejects the frame or
// it does not decompress to exactly `expected_size` bytes.
std::optional<std::vector<std::uint8_t>> decompress(std::span<const std::uint8_t> frame,
                                                    std::uint64_t expected_size);

}  // namespace weft::cache::detail
