// Reading and writing NumPy .npy files (format versions 1.0, 2.0 and 3.0), the CLI's exchange
// format for inputs and outputs. Supported: little-endian <f4 <f8 <f2 <i4 <i8 <u4 <u8 <i2 <u2,
// |i1 |u1 |b1, and <V2 as bf16 (what np.save writes for JAX's bfloat16), C order, any rank.
// Everything else is rejected with an InvalidArgumentError that names the file and what is wrong,
// never read approximately.
//
// .npy bytes are untrusted: the header is read with a bounded read and checked (magic, version,
// header length, dict, dtype, order, shape, element count) before any data is read, and nothing
// is allocated from a size that has not been checked against the file, the header limit or the
// machine's memory.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "weft/host_array.h"

namespace weft::npy {

// The longest header weft reads (numpy's own headers are a few hundred bytes; a rank-30000
// array, the largest weft writes in tests, needs about 90 KiB).
inline constexpr std::uint32_t kMaxHeaderBytes = 1u << 20;

// The numpy descr of a dtype: "<f4", "|b1", ...
std::string descr_of(DType dtype);

// What a checked header says.
struct Header {
  DType dtype = DType::F32;
  Shape shape;
  int major_version = 1;
  std::uint64_t data_offset = 0;  // bytes before the data: prefix and header
  std::uint64_t data_bytes = 0;   // what the shape needs: elements * dtype size, checked
};

// Reads a .npy file in two steps, so a caller can check the header (against a program's
// signature, say) before any data is read or allocated: the constructor reads and validates
// the header only; read_data() then reads exactly the bytes the shape needs into a new
// HostArray. Regular files and memory must hold exactly that much data (checked before
// anything is allocated); a pipe or device file is read for exactly that many bytes and must
// not end sooner, and whatever follows is left unread.
class Reader {
 public:
  // Opens `path`; a missing, unreadable or directory path is an InvalidArgumentError.
  explicit Reader(const std::filesystem::path& path);
  // Bytes in memory, named `source` in messages. With `as_stream`, they are read as a pipe
  // would deliver them: size unknown in advance (tests and the fuzzer use this).
  Reader(std::span<const std::byte> bytes, std::string source, bool as_stream = false);
  ~Reader();
  Reader(Reader&&) noexcept;
  Reader& operator=(Reader&&) noexcept;

  const Header& header() const { return header_; }
  const std::string& source() const { return source_; }
  // Reads the data; call once.
  HostArray read_data();

  class Input;  // where the bytes come from: memory, a regular file, a pipe (npy.cpp)

 private:
  std::unique_ptr<Input> input_;
  std::string source_;
  Header header_;
};

// Parses the bytes of a whole .npy file; `source` names it in error messages.
HostArray parse(std::span<const std::byte> bytes, const std::string& source);
// Reads a .npy file; a missing or unreadable file is an InvalidArgumentError too.
HostArray read(const std::filesystem::path& path);

// The bytes of a .npy file holding `array`: version 1.0, or 2.0 when the header would not fit
// 1.0's 16-bit length.
std::vector<std::byte> serialize(const HostArray& array);
// Writes `array` to `path`, replacing any file there.
void write(const std::filesystem::path& path, const HostArray& array);

}  // namespace weft::npy
