// Ordering that keeps PoCL's CPU drivers from aborting when one kernel runs over grids of
// different widths.
//
// PoCL (3.1 through at least 6.0) keeps each kernel's loaded work-group function in a
// process-wide table keyed by a hash of the program's content and the kernel's name, the local
// size, and the widest grid that function was compiled for. A launch wider than every loaded
// entry loads a new one at the front of the table; a finishing launch releases the *first*
// entry with its hash and local size, which is then the new one, not its own. Launches still
// running on the narrower entry drive the new entry's count to zero and the next release aborts
// the process (`pocl_release_dlhandle_cache: Assertion found->ref_count > 0`). Programs whose
// kernels need no bounds check have the same source at every size a multiple of the local size,
// so a loaded program (or a cached binary of it) meets several widths.
//
// The fix is ordering, only where a launch widens a kernel beyond every earlier launch of the
// same content: the widening launch waits for every earlier launch of that kernel, and later
// launches wait for it, so no launch of the old entry is in flight while the new one is loaded.
// Widening happens a few times per kernel per process; other launches only record their event.
#pragma once

#include <CL/cl.h>

#include <cstddef>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "weft/opencl/cl_handle.h"

namespace weft::opencl::detail {

class KernelGridOrder {
 public:
  // Serialises launches of this kernel content: hold it from before_launch to after_launch.
  std::unique_lock<std::mutex> lock() { return std::unique_lock(mutex_); }
  // Appends to `wait` what a launch over `width` work-items must follow; returns whether it
  // widens the kernel (and so must be passed to after_launch as such).
  bool before_launch(std::size_t width, std::vector<cl_event>& wait);
  // Records the enqueued launch's event.
  void after_launch(bool widens, std::size_t width, cl_event done);

 private:
  // Drops the events of launches that have finished.
  void forget_finished();

  std::mutex mutex_;
  std::size_t widest_ = 0;
  ClEvent widening_;               // the last widening launch, until it is seen finished
  std::vector<ClEvent> launches_;  // launches not yet seen finished
};

// Whether launches on `device` need the ordering (PoCL's CPU devices).
bool needs_grid_order(const std::string& platform_name, bool is_cpu);

// The ordering shared by every kernel `kernel_name` of a program with this source and build
// options in `context` (PoCL's hash covers exactly these). Lives while an executable holds it.
std::shared_ptr<KernelGridOrder> kernel_grid_order(cl_context context, const std::string& source,
                                                   const std::string& build_options,
                                                   const std::string& kernel_name);

}  // namespace weft::opencl::detail
