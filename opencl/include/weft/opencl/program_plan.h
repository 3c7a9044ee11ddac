// What codegen hands the runtime: one OpenCL C program, the buffers a run needs, and the
// kernel launches in dependency order. Device-specific, graph-free.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "weft/backend.h"

namespace weft::opencl {

struct BufferPlan {
  enum class Role { Input, Output, Temp };
  Role role = Role::Temp;
  int index = 0;          // parameter index (Input) or output index (Output)
  std::size_t bytes = 0;  // may be 0 (empty arrays); the runtime allocates at least 1 byte
};

struct LaunchPlan {
  std::string kernel;           // kernel function name in the program
  std::vector<int> args;        // BufferPlan indices, in kernel argument order
  std::vector<int> writes;      // which of those the kernel writes
  std::size_t global_size = 0;  // 1-D; a multiple of local_size (0 launches are skipped)
  std::size_t local_size = 0;   // 0 lets the driver choose
};

struct ProgramPlan {
  std::string source;         // OpenCL C 1.2
  std::string build_options;  // passed to clBuildProgram
  std::vector<BufferPlan> buffers;
  std::vector<LaunchPlan> launches;  // in an order that respects data dependencies
  std::vector<int> outputs;          // buffer per graph output (an Input buffer when aliased)
  CompiledInfo info;
};

// What codegen needs to know about a device.
struct DeviceCaps {
  bool fp64 = false;
  std::size_t max_work_group_size = 256;
  std::size_t local_mem_bytes = 32768;
  std::uint32_t compute_units = 1;
  bool is_gpu = false;
};

}  // namespace weft::opencl
