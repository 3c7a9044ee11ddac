// Reading and writing NumPy .npy files (format versions 1.0, 2.0 and 3.0), the CLI's exchange
// format for inputs and outputs. Supported: little-endian <f4 <f8 <i4 <i8 <u4 and |b1, C order,
// any rank. Everything else is rejected with an InvalidArgumentError that names the file and
// what is wrong, never read approximately.
#pragma once

#include <cstddef>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

#include "weft/host_array.h"

namespace weft::npy {

// The numpy descr of a dtype: "<f4", "|b1", ...
std::string descr_of(DType dtype);

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
