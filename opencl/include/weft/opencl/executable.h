// Runs a ProgramPlan on one device: allocates its buffers and enqueues its launches, ordered
// by events rather than by blocking.
#pragma once

#include <CL/cl.h>

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <exception>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "weft/backend.h"
#include "weft/ir/host_callback.h"
#include "weft/opencl/cl_handle.h"
#include "weft/opencl/program_plan.h"
#include "weft/telemetry/telemetry.h"

namespace weft::opencl {

class OpenCLDevice;
class OpenCLBuffer;
namespace detail {
struct CacheWrite;
struct RunTelemetry;
class KernelGridOrder;
class TierPolicy;
}  // namespace detail

class OpenCLExecutable final : public Executable,
                               public std::enable_shared_from_this<OpenCLExecutable> {
 public:
  // Builds plan.source for `device` (through its program cache) and creates one kernel per
  // distinct kernel name. Throws BuildError when the source does not compile and
  // InvalidArgumentError when the plan is inconsistent (bad indices, an Input written, an
  // argument count that does not match the kernel). The run takes one input per Input
  // parameter index up to the highest one.
  OpenCLExecutable(OpenCLDevice& device, ProgramPlan plan);
  // The same with a program already built (from a cached binary) instead of plan.source.
  OpenCLExecutable(OpenCLDevice& device, ProgramPlan plan, ClProgram program);
  // Tiered execution (weft/opencl/tiering.h): nothing is built yet. `policy` decides where
  // each call runs until the kernels are built: on the interpreter, which runs `graph` (the
  // graph the plan was made from), or on the kernels, built then.
  OpenCLExecutable(OpenCLDevice& device, ProgramPlan plan, Graph graph,
                   std::unique_ptr<detail::TierPolicy> policy);
  ~OpenCLExecutable() override;

  // Validates the inputs (count, device, byte sizes), enqueues every launch and returns the
  // outputs without waiting for them. Safe to call from several threads.
  std::vector<std::shared_ptr<Buffer>> run(
      std::span<const std::shared_ptr<Buffer>> inputs) override;
  const CompiledInfo& info() const override { return plan_.info; }
  // Where the latest call ran: "device", or, while tiered execution runs the calls on the
  // reference interpreter until the kernels are built, "interpreter (build pending)" and the
  // like (weft/opencl/tiering.h).
  std::string last_ran_on() const;

  OpenCLDevice& device() const { return *device_; }
  const ProgramPlan& plan() const { return plan_; }
  // The built program (built now when tiered execution has not built it yet).
  cl_program program() {
    build_now();
    return program_.get();
  }
  // Whether the kernels are built (always, unless tiered execution defers the build).
  bool built() const { return built_.load(std::memory_order_acquire); }
  // Builds the program and its kernels if they are not yet, or waits for the build under way.
  // Throws what the build threw (BuildError, OutOfMemoryError), now and on later calls.
  void build_now();
  // The background builder's call: build_now, logging a failure instead of throwing it (the
  // calls then go on on the interpreter).
  void build_in_background();
  std::size_t num_inputs() const { return num_inputs_; }
  // For the runtime: each launch's kernel, and the lock over the kernels' arguments.
  const std::unordered_map<const LaunchPlan*, cl_kernel>& launch_kernels() const {
    return launch_kernel_;
  }
  // Each launch's ordering against PoCL's grid-width hazard (runtime/pocl_grid_order.h); empty
  // on other drivers.
  const std::unordered_map<const LaunchPlan*, detail::KernelGridOrder*>& launch_grid_orders()
      const {
    return launch_grid_order_;
  }
  std::mutex& run_mutex() { return run_mutex_; }
  // The host functions its host_call steps name by slot (the compiled graph's table); kept
  // alive as long as the executable.
  const std::vector<std::shared_ptr<const HostCallback>>& callbacks() const { return callbacks_; }
  // Whether input `index` is a token (host steps wait for those on the host).
  bool is_token_input(std::size_t index) const {
    return index < token_inputs_.size() && token_inputs_[index];
  }
  // Telemetry's record of this program: emitted once (at compile when recording, with the IR
  // text; else at the first recorded dispatch) and each kernel's fused ops, by kernel name.
  struct TelemetryProgram {
    telemetry::Id id = 0;
    std::string function;
    std::unordered_map<std::string, std::string> fused_ops;  // "add,mul"
  };
  const TelemetryProgram& telemetry_program(const std::string& ir_text = {});
  // The token inputs among a run's parameters.
  std::vector<const OpenCLBuffer*> input_tokens(
      const std::vector<std::shared_ptr<OpenCLBuffer>>& params) const;

 private:
  friend class OpenCLDevice;
  // Set by OpenCLDevice::compile, which knows the graph's parameter count (a parameter no
  // kernel reads has no BufferPlan) and times planning as well as building.
  void set_compile_facts(std::size_t num_inputs, std::string function_name);
  // The phases compile() times itself: the cache lookup, and the build when it loaded a binary.
  void set_compile_time(double cache_lookup_seconds, std::optional<double> build_seconds);
  // Stores the program in the persistent cache once the first run has finished.
  void store_after_first_run(std::unique_ptr<detail::CacheWrite> write);
  void set_cache_outcome(std::string status, std::string key);
  // Binds the graph's callback table; throws InvalidArgumentError when a host step names a
  // slot the table does not have.
  void set_callbacks(std::vector<std::shared_ptr<const HostCallback>> callbacks);
  // What run() needs from the plan alone: input count, token inputs, host steps.
  void index_plan();
  void create_kernels();
  // Builds plan_.source and creates the kernels (build_now's work).
  void build_program_and_kernels();
  // A call while the kernels are not built: runs it on the interpreter when the tier policy
  // says so (nullopt: run the kernels, built by then).
  std::optional<std::vector<std::shared_ptr<Buffer>>> run_before_built(
      std::span<const std::shared_ptr<Buffer>> inputs);
  void validate_plan() const;
  // Runs with while or cond steps: the outputs are made now and filled by the device's
  // runtime thread, which reads predicates as the device computes them.
  std::vector<std::shared_ptr<Buffer>> run_on_device_runtime(
      std::vector<std::shared_ptr<OpenCLBuffer>> params,
      std::span<const std::shared_ptr<Buffer>> inputs, detail::RunTelemetry* telemetry);

  OpenCLDevice* device_;
  ProgramPlan plan_;
  std::size_t num_inputs_ = 0;
  ClProgram program_;
  std::vector<ClKernel> kernels_;                                   // one per distinct kernel name
  std::unordered_map<const LaunchPlan*, cl_kernel> launch_kernel_;  // into plan_, per launch
  std::vector<std::shared_ptr<detail::KernelGridOrder>> grid_orders_;  // per kernel name
  std::unordered_map<const LaunchPlan*, detail::KernelGridOrder*> launch_grid_order_;
  bool needs_host_values_ = false;  // a while, cond or returning host step in the plan
  bool has_host_steps_ = false;     // prints or callbacks, nested too
  std::vector<bool> token_inputs_;  // per input
  std::vector<std::shared_ptr<const HostCallback>> callbacks_;
  std::mutex run_mutex_;                             // cl_kernel arguments are shared state
  std::unique_ptr<detail::CacheWrite> cache_write_;  // until the first run (under run_mutex_)
  std::string function_name_;
  std::once_flag telemetry_once_;
  TelemetryProgram telemetry_program_;

  // Tiered execution; policy_ is null when the program was built at construction.
  std::optional<Graph> graph_;
  std::unique_ptr<detail::TierPolicy> policy_;
  std::atomic<bool> built_{true};
  std::mutex build_mutex_;
  std::condition_variable build_done_;
  bool building_ = false;            // under build_mutex_
  bool build_scheduled_ = false;     // under build_mutex_
  std::exception_ptr build_error_;   // under build_mutex_
  std::atomic<int> last_ran_on_{0};  // a RanOn (executable.cpp)
};

}  // namespace weft::opencl
