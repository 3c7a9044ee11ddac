// Pinning PoCL's CPU worker threads (POCL_AFFINITY) unless the user or the machine says not to.
#pragma once

namespace weft::opencl::detail {

// Sets POCL_AFFINITY=1 before the ICD loader starts PoCL, unless POCL_AFFINITY is already set
// (the user's choice, 0 included) or this process may not run on every CPU of the machine.
// Returns whether it set the variable.
bool pin_pocl_workers_by_default();

}  // namespace weft::opencl::detail
