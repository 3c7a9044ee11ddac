// zstd compression and XXH3-64 checksums.
#include "codec.h"

#include <xxhash.h>
#include <zstd.h>

#include <new>

namespace weft::cache::detail {

std::uint64_t checksum(std::span<const std::uint8_t> bytes) {
  return XXH3_64bits(bytes.data(), bytes.size());
}

std::vector<std::uint8_t> compress(std::span<const std::uint8_t> bytes, int level) {
  std::vector<std::uint8_t> out(ZSTD_compressBound(bytes.size()));
  const std::size_t size = ZSTD_compress(out.data(), out.size(), bytes.data(), bytes.size(), level);
  // With a ZSTD_compressBound-sized output only an allocation failure can get here.
  if (ZSTD_isError(size)) throw std::bad_alloc();
  out.resize(size);
  return out;
}

std::optional<std::vector<std::uint8_t>> decompress(std::span<const std::uint8_t> frame,
                                                    std::uint64_t expected_size) {
  // compress() always records the content size; the row and the frame header must agree
  // before anything is allocated, so one corrupt field cannot ask for terabytes.
  const unsigned long long declared = ZSTD_getFrameContentSize(frame.data(), frame.size());
  if (declared == ZSTD_CONTENTSIZE_ERROR || declared == ZSTD_CONTENTSIZE_UNKNOWN ||
      declared != expected_size) {
    return std::nullopt;
  }
  std::vector<std::uint8_t> out(expected_size);
  const std::size_t size = ZSTD_decompress(out.data(), out.size(), frame.data(), frame.size());
  if (ZSTD_isError(size) || size != expected_size) return std::nullopt;
  return out;
}

}  // namespace weft::cache::detail
