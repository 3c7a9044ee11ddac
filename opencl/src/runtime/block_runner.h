// Enqueues the steps of a BlockPlan: kernel launches ordered by events, and static loops whose
// iterations are enqueued back to back without a host round trip. Every buffer a block run
// makes comes from the device's pool, so a long loop recycles its carries instead of growing.
#pragma once

#include <CL/cl.h>

#include <memory>
#include <span>
#include <unordered_map>
#include <vector>

#include "weft/opencl/buffer.h"
#include "weft/opencl/cl_handle.h"
#include "weft/opencl/program_plan.h"

namespace weft::opencl {

class OpenCLDevice;

namespace detail {

using Slot = std::shared_ptr<OpenCLBuffer>;

class BlockRunner {
 public:
  // `kernels` maps each launch of the plan to its kernel object. The caller holds the kernels'
  // argument state (the executable's run mutex) while a runner enqueues.
  BlockRunner(OpenCLDevice& device, const std::unordered_map<const LaunchPlan*, cl_kernel>& kernels,
              std::vector<ClEvent>* launch_events)
      : device_(device), kernels_(kernels), launch_events_(launch_events) {}

  // Enqueues one run of `block` on its parameters' buffers (null for parameters no step
  // reads) and returns its outputs' buffers, ready when their events complete.
  std::vector<Slot> run(const BlockPlan& block, std::span<const Slot> params);

 private:
  struct Hazards {
    ClEvent last_write;
    std::vector<ClEvent> reads;
  };
  struct BlockState {
    std::vector<Slot> slots;
    std::vector<Hazards> hazards;
  };
  void launch(const LaunchPlan& launch, BlockState& state);
  void run_loop(const BlockPlan& block, const StepPlan& step, BlockState& state);
  // Copies `bytes` from `source` at `source_offset` into `target` at `target_offset` after
  // `wait`; returns the copy's event.
  ClEvent copy(const Slot& source, std::size_t source_offset, const Slot& target,
               std::size_t target_offset, std::size_t bytes, std::vector<cl_event>& wait);
  // A fresh i32 buffer holding `value`.
  Slot scalar_i32(std::int32_t value);

  OpenCLDevice& device_;
  const std::unordered_map<const LaunchPlan*, cl_kernel>& kernels_;
  std::vector<ClEvent>* launch_events_;  // every launch's event, while a cache write waits
  std::vector<cl_event> wait_list_;
};

}  // namespace detail
}  // namespace weft::opencl
