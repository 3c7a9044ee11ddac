// Compiling a program's kernels for their launches before the program runs. PoCL's CPU
// drivers compile a kernel's work-group function at its first launch, specialised for the
// launch's local size, zero global offset and grid width (narrower than 65535 work-items or
// not); done there, every first launch of a deferred build would wait in the queue while PoCL
// compiles. Instead, once a background build has the kernels, each distinct (kernel, local
// size, grid class) is launched once on a private queue over zero-filled scratch buffers, on
// as few work-groups as give it the same specialisation; the compiled functions stay in PoCL's
// process-wide cache, so the program's real launches only load them.
#pragma once

#include <CL/cl.h>

#include <string>
#include <unordered_map>

#include "weft/opencl/program_plan.h"

namespace weft::opencl {
class OpenCLDevice;
}

namespace weft::opencl::detail {

// Scratch memory one launch may take: a kernel whose buffers are larger compiles at its
// first real launch, as without warming.
inline constexpr std::size_t kMaxWarmupBytes = std::size_t{256} << 20;
// PoCL's grid-width specialisation limit (USHRT_MAX in PoCL 3.1 through 6).
inline constexpr std::size_t kPoclSmallGridLimit = 65535;

class KernelGridOrder;

// Launches each kernel of `plan` once as described above and waits for them; returns how many
// launches it made. Failures (a scratch allocation the device refuses) skip that launch. A
// launch with a grid order (PoCL's CPU drivers, runtime/pocl_grid_order.h) is ordered by it
// like a real launch: another program of the same source may be running that kernel.
int warm_up_kernels(OpenCLDevice& device, const ProgramPlan& plan,
                    const std::unordered_map<const LaunchPlan*, cl_kernel>& kernels,
                    const std::unordered_map<const LaunchPlan*, KernelGridOrder*>& grid_orders);

// The global size a warm-up of `launch` uses: one work-group where the real grid is narrower
// than PoCL's limit, else the smallest multiple of the local size at or past it.
std::size_t warmup_global_size(const LaunchPlan& launch);

}  // namespace weft::opencl::detail
