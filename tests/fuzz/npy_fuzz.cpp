// libFuzzer target for the .npy reader: any bytes must either read or throw a weft::Error, never
// crash, hang or allocate beyond what the header and the input justify. What reads must
// serialize and read back to the same array, and reading the same bytes as a stream (a pipe,
// size unknown) must agree with reading them as a file.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <string>

#include "npy.h"
#include "weft/error.h"

namespace {

bool same(const weft::HostArray& a, const weft::HostArray& b) {
  return a.dtype() == b.dtype() && a.shape() == b.shape() && a.nbytes() == b.nbytes() &&
         (a.nbytes() == 0 || std::memcmp(a.raw(), b.raw(), a.nbytes()) == 0);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::span<const std::byte> bytes(reinterpret_cast<const std::byte*>(data), size);

  std::optional<weft::HostArray> as_file;
  try {
    as_file = weft::npy::parse(bytes, "fuzz.npy");
  } catch (const weft::Error&) {
    // Rejecting malformed bytes is the expected outcome for most inputs.
  }

  // As a stream, only the header bounds the data, and the reader allocates what it promises
  // (the CLI checks it against the program first). Keep that within the input's size here so
  // a header promising gigabytes does not trip libFuzzer's allocation limit.
  std::optional<weft::HostArray> as_stream;
  try {
    weft::npy::Reader reader(bytes, "fuzz.npy", /*as_stream=*/true);
    if (reader.header().data_bytes <= size) as_stream = reader.read_data();
  } catch (const weft::Error&) {
  }

  if (as_file) {
    // A complete file reads the same way from a pipe.
    if (!as_stream || !same(*as_file, *as_stream)) __builtin_trap();
    const weft::HostArray again = weft::npy::parse(weft::npy::serialize(*as_file), "again.npy");
    if (!same(*as_file, again)) __builtin_trap();
  }
  return 0;
}
