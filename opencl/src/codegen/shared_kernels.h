// One copy of each kernel whose OpenCL C is the same as an earlier one's but for its name.
//
// Programs repeat themselves: a function called three times in a jitted step, a search
// unrolled into identical steps, a bulk launch and its tail over the same sizes. PoCL compiles
// each kernel of a program on its own (its work-group function and machine code are most of a
// cold build), so a copy costs a whole kernel's compile for nothing. The copies are dropped
// from the program and their launches run the kept function (LaunchPlan::function); telemetry
// and errors keep the launch's own name.
#pragma once

#include <string>

#include "weft/opencl/program_plan.h"

namespace weft::opencl::detail {

// Returns `kernels` (the program's kernel definitions, without its header) with each repeated
// kernel replaced by its comments and one naming the kernel that runs in its place, and points
// the launches of `plan` (every block) at the kept functions. A kernel is compared with the
// helpers emitted between it and the kernel before, comments aside and the names derived from
// its own (`k2_argsort`, `k2_argsort_key`) set aside. Only `__kernel` definitions that start a
// line are compared, and if code left behind still names a dropped kernel's helper, nothing is
// dropped.
std::string share_identical_kernels(const std::string& kernels, BlockPlan& plan);

}  // namespace weft::opencl::detail
