// Internal: the process-wide list of OpenCL devices, shared by device_info.h and the backend.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "weft/opencl/device.h"

namespace weft::opencl::detail {

// Every usable device in naming order. Discovers platforms, devices, contexts and queues on
// the first call (thread-safe; retried after a failure) and keeps them for the life of the
// process. Throws weft::Error when there is no platform or no usable device.
const std::vector<OpenCLDevice*>& all_devices();
// Makes the main thread wait for every queue when the process exits (before any static
// destructor), so no driver thread compiles or runs work while libraries are torn down.
void arm_exit_drain();
// Why PoCL cannot create its kernel cache directory (POCL_CACHE_DIR, else XDG_CACHE_HOME or
// HOME), ending with `consequence` and the fix; nothing when it can.
std::optional<std::string> pocl_cache_problem(std::string_view consequence);

}  // namespace weft::opencl::detail
