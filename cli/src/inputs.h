// The inputs of `weft run`: one per parameter of the function, read from a .npy file given with
// --input or filled with seeded random data, after checking that they fit the device and the
// host. Nothing is read or generated before those checks pass, and a .npy file's header is
// checked against the parameter before its data is read.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "weft/backend.h"
#include "weft/host_array.h"

namespace weft::cli {

struct Param {
  std::string name;  // as written in the file, without '%'; "arg<i>" if unknown
  DType dtype;
  Shape shape;
  std::string source;      // the .npy path, or "random (seed N)"
  bool from_file = false;  // given by --input
};

// How much memory inputs may take; 0 means unknown (no check).
struct MemoryLimits {
  std::string device;              // the device's weft name, for messages
  std::uint64_t max_alloc_bytes;   // CL_DEVICE_MAX_MEM_ALLOC_SIZE: the largest single buffer
  std::uint64_t global_mem_bytes;  // CL_DEVICE_GLOBAL_MEM_SIZE: all buffers together
  std::uint64_t host_bytes;        // the machine's physical memory
};
MemoryLimits memory_limits(const Device& device);

// Throws InvalidArgumentError when one input is larger than the device's largest buffer, or all
// of them together exceed the device's global memory or the host's memory. The message names
// the parameter, its type, its size and the limit. `file` is the .weft file.
void check_input_sizes(const std::vector<Param>& params, const MemoryLimits& limits,
                       const std::string& file);

// Resolves the --input specs (NAME=PATH.npy or INDEX=PATH.npy), checks every input's size,
// then reads the files (header first, checked against the parameter) and generates random data
// for the other parameters. Sets each Param's source.
std::vector<HostArray> load_inputs(const std::vector<std::string>& specs, std::uint64_t seed,
                                   const std::string& file, const MemoryLimits& limits,
                                   std::vector<Param>& params);

}  // namespace weft::cli
