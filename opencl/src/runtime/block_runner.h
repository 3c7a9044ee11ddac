// Enqueues the steps of a BlockPlan: kernel launches ordered by events, static loops whose
// iterations are enqueued back to back without a host round trip, and (on the device
// runtime's thread) while loops and conds that pause for a predicate or index computed on the
// device. Every buffer a block run makes comes from the device's pool, so a long loop
// recycles its carries instead of growing.
#pragma once

#include <CL/cl.h>

#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <unordered_map>
#include <vector>

#include "first_run_launches.h"
#include "runtime/run_task.h"
#include "runtime/run_telemetry.h"
#include "weft/dtype.h"
#include "weft/ir/host_callback.h"
#include "weft/opencl/buffer.h"
#include "weft/opencl/cl_handle.h"
#include "weft/opencl/program_plan.h"

namespace weft::opencl {

class OpenCLDevice;

namespace detail {

class DeviceRuntime;
using Slot = std::shared_ptr<OpenCLBuffer>;

// True when running the block needs values on the host (a while or cond step, or a host step
// whose results kernels read, nested too).
bool needs_host_values(const BlockPlan& block);
// True when the block has a host step (a print or callback), nested too.
bool has_host_steps(const BlockPlan& block);

struct HostTask;
class KernelGridOrder;

// What host steps need: the executable's callback table, the receiver level of the thread
// that dispatched the run, (runs on the dispatching thread) where callbacks to run inline
// after the run wait (see host_tasks.h), and its input tokens.
struct HostStepContext {
  const std::vector<std::shared_ptr<const HostCallback>>* callbacks = nullptr;
  int level = 0;
  std::vector<std::shared_ptr<HostTask>>* inline_tasks = nullptr;
  // The run's token inputs. A failure recorded on them belongs to an earlier dispatch, which
  // reported it through its own output token: steps order after them but do not inherit it.
  std::vector<const OpenCLBuffer*> input_tokens;
  // The run's telemetry; null when not recording.
  RunTelemetry* telemetry = nullptr;
};

class BlockRunner {
 public:
  // `kernels` maps each launch of the plan to its kernel object; `first_run`, when not null,
  // records the launches (a first run whose program the cache writer stores). With
  // `per_command_locks` null the caller holds the kernels' argument state (`launch_mutex`) and the
  // launch gate for the whole run; otherwise (runs on the runtime thread, which pause) each command
  // takes them.
  BlockRunner(OpenCLDevice& device, const std::unordered_map<const LaunchPlan*, cl_kernel>& kernels,
              const std::unordered_map<const LaunchPlan*, KernelGridOrder*>& grid_orders,
              FirstRunLaunches* first_run, std::mutex* per_command_locks = nullptr,
              DeviceRuntime* runtime = nullptr, HostStepContext host = {})
      : device_(device),
        kernels_(kernels),
        grid_orders_(grid_orders),
        first_run_(first_run),
        launch_mutex_(per_command_locks),
        runtime_(runtime),
        host_(host) {}

  // Enqueues one run of `block` on its parameters' buffers (null for parameters no step
  // reads); the task's value is the outputs' buffers, ready when their events complete. The
  // task finishes before returning unless the block needs host values.
  RunTask<std::vector<Slot>> run(const BlockPlan& block, std::vector<Slot> params);

 private:
  // A buffer's writer is its ready event; what its first write must also wait for are the
  // commands of the pooled memory's previous life.
  struct BlockState {
    std::vector<Slot> slots;
    std::vector<std::vector<ClEvent>> prior_uses;
    BlockState() = default;
    BlockState(const BlockState&) = delete;
    BlockState& operator=(const BlockState&) = delete;
    // A buffer that nothing wrote (no launch named it, or the run failed first) keeps its
    // prior uses, or its memory would return to the pool as if they were done.
    ~BlockState() {
      for (std::size_t b = 0; b < slots.size() && b < prior_uses.size(); ++b)
        if (slots[b] && !prior_uses[b].empty())
          slots[b]->restore_prior_uses(std::move(prior_uses[b]));
    }
  };
  void launch(const LaunchPlan& launch, BlockState& state);
  RunTask<bool> run_loop(const BlockPlan& block, const StepPlan& step, BlockState& state);
  RunTask<bool> run_while(const StepPlan& step, BlockState& state);
  RunTask<bool> run_cond(const StepPlan& step, BlockState& state);
  // A host step whose results the block reads, started and not yet collected.
  struct PendingHostResults {
    const StepPlan* step = nullptr;
    std::shared_ptr<HostTask> task;
  };
  // Starts a host step and binds its token; returns the step when its results come later.
  std::optional<PendingHostResults> start_host(const StepPlan& step, BlockState& state);
  // Waits (pausing on the runtime thread) for a host step's results and binds them on the
  // device.
  RunTask<bool> collect_results(const PendingHostResults& pending, BlockState& state);
  // Collects the pending results `step` reads.
  RunTask<bool> collect_results_read_by(const StepPlan& step,
                                        std::vector<PendingHostResults>& pending,
                                        BlockState& state);
  void run_join(const StepPlan& step, BlockState& state);
  void bind_results(const StepPlan& step, BlockState& state, std::vector<Slot> values);
  // Whether a failure recorded on `token` carries over to the tokens that follow it.
  bool carries_failure(const Slot& token) const;
  // Reads a scalar (bool, or an integer of `bytes` bytes) once the device has computed it,
  // pausing on the runtime thread meanwhile.
  RunTask<std::int64_t> host_value(const Slot& slot, DType dtype);
  // Copies `bytes` from `source` at `source_offset` into `target` at `target_offset` after
  // `wait`; returns the copy's event.
  ClEvent copy(const Slot& source, std::size_t source_offset, const Slot& target,
               std::size_t target_offset, std::size_t bytes, std::vector<cl_event>& wait);
  // A fresh i32 buffer holding `value`.
  Slot scalar_i32(std::int32_t value);
  // Telemetry (only while recording): a command's span once it completes, and a span of this
  // thread that ends now.
  void record(cl_event event, telemetry::SpanKind kind, std::string name, telemetry::Args args);
  void record_here(telemetry::SpanKind kind, std::string name, std::int64_t start_ns,
                   telemetry::Args args);

  OpenCLDevice& device_;
  const std::unordered_map<const LaunchPlan*, cl_kernel>& kernels_;
  const std::unordered_map<const LaunchPlan*, KernelGridOrder*>& grid_orders_;  // PoCL only
  FirstRunLaunches* first_run_;  // while a cache write waits for this run's launches
  std::mutex* launch_mutex_;
  DeviceRuntime* runtime_;
  HostStepContext host_;
  std::vector<cl_event> wait_list_;
};

}  // namespace detail
}  // namespace weft::opencl
