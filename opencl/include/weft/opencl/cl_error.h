// OpenCL status codes turned into weft's typed exceptions with actionable messages.
#pragma once

#include <CL/cl.h>

#include <string_view>

namespace weft::opencl {

// "CL_OUT_OF_RESOURCES" for every OpenCL 1.2 status (and the common extension codes);
// "unknown OpenCL error" otherwise.
std::string_view cl_error_name(cl_int status);

// True for the statuses that mean memory ran out (device, resources or host).
bool is_out_of_memory(cl_int status);

// Throws OutOfMemoryError for the out-of-memory statuses, DeviceError otherwise. `call` is the
// API call that failed ("clCreateBuffer"); `where` names the device, e.g.
// "cpu:0 (pthread-haswell-AMD EPYC)", as OpenCLDevice::label() spells it.
[[noreturn]] void throw_cl_error(cl_int status, std::string_view call, std::string_view where);

inline void check_cl(cl_int status, std::string_view call, std::string_view where) {
  if (status != CL_SUCCESS) throw_cl_error(status, call, where);
}

}  // namespace weft::opencl
