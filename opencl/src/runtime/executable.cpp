#include "weft/opencl/executable.h"

#include "cache_writer.h"
#include "discovery.h"
#include "runtime/block_runner.h"
#include "runtime/device_runtime.h"
#include "runtime/fork_guard.h"
#include "runtime/host_tasks.h"
#include "runtime/interpreted_run.h"
#include "runtime/pocl_grid_order.h"
#include "runtime/run_telemetry.h"
#include "tiering/background_builds.h"
#include "tiering/kernel_warmup.h"
#include "tiering/tier_policy.h"

#include <algorithm>
#include <chrono>
#include <coroutine>
#include <optional>
#include <shared_mutex>
#include <string>
#include <tuple>
#include <unordered_map>

#include "weft/error.h"
#include "weft/log.h"
#include "weft/opencl/buffer.h"
#include "weft/opencl/cl_error.h"
#include "weft/opencl/device.h"

namespace weft::opencl {

namespace {

using Role = BufferPlan::Role;

bool contains(const std::vector<int>& values, int value) {
  return std::find(values.begin(), values.end(), value) != values.end();
}

[[noreturn]] void bad_plan(const std::string& what) {
  throw InvalidArgumentError("weft: invalid ProgramPlan: " + what +
                             ". Plans come from weft codegen, so this is a weft bug; please "
                             "report it.");
}

}  // namespace

namespace {

// Where a call ran (last_ran_on).
enum class RanOn : int {
  nothing,
  device,
  interpreter_build_not_started,
  interpreter_build_pending,
  interpreter_build_failed,
  interpreter_only
};

std::string_view describe(RanOn ran_on) {
  switch (ran_on) {
    case RanOn::nothing:
      return "nothing yet";
    case RanOn::device:
      return "device";
    case RanOn::interpreter_build_not_started:
      return "interpreter (build not started)";
    case RanOn::interpreter_build_pending:
      return "interpreter (build pending)";
    case RanOn::interpreter_build_failed:
      return "interpreter (build failed)";
    case RanOn::interpreter_only:
      return "interpreter (WEFT_TIERED=interpreter)";
  }
  return "device";
}

}  // namespace

OpenCLExecutable::OpenCLExecutable(OpenCLDevice& device, ProgramPlan plan)
    : device_(&device), plan_(std::move(plan)) {
  validate_plan();
  index_plan();
  auto start = std::chrono::steady_clock::now();
  program_ = device.build_program(plan_.source, plan_.build_options);
  create_kernels();
  std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - start;
  plan_.info.compile_time.build = elapsed.count();
}

OpenCLExecutable::OpenCLExecutable(OpenCLDevice& device, ProgramPlan plan, ClProgram program)
    : device_(&device), plan_(std::move(plan)), program_(std::move(program)) {
  validate_plan();
  index_plan();
  create_kernels();
}

OpenCLExecutable::OpenCLExecutable(OpenCLDevice& device, ProgramPlan plan, Graph graph,
                                   std::unique_ptr<detail::TierPolicy> policy)
    : device_(&device),
      plan_(std::move(plan)),
      graph_(std::move(graph)),
      policy_(std::move(policy)),
      built_(false) {
  validate_plan();
  index_plan();
}

OpenCLExecutable::~OpenCLExecutable() = default;

std::string OpenCLExecutable::last_ran_on() const {
  if (!policy_) return "device";
  return std::string(describe(static_cast<RanOn>(last_ran_on_.load(std::memory_order_relaxed))));
}

void OpenCLExecutable::build_now() {
  std::unique_lock lock(build_mutex_);
  build_done_.wait(lock, [&] { return built_.load(std::memory_order_relaxed) || !building_; });
  if (built_.load(std::memory_order_relaxed)) return;
  if (build_error_) std::rethrow_exception(build_error_);
  building_ = true;
  lock.unlock();
  std::exception_ptr error;
  try {
    build_program_and_kernels();
  } catch (...) {
    error = std::current_exception();
  }
  lock.lock();
  building_ = false;
  if (error)
    build_error_ = error;
  else
    built_.store(true, std::memory_order_release);
  build_done_.notify_all();
  if (error) std::rethrow_exception(error);
}

void OpenCLExecutable::build_program_and_kernels() {
  const std::int64_t start_ns = telemetry::enabled() ? telemetry::now_ns() : 0;
  const auto start = std::chrono::steady_clock::now();
  program_ = device_->build_program(plan_.source, plan_.build_options);
  create_kernels();
  // PoCL's CPU drivers compile each kernel at its first launch: do that here, so that the
  // calls that switch to the kernels never wait for a compiler in the queue.
  int warmed = 0;
  if (detail::needs_grid_order(device_->info().platform_name,
                               device_->info().type == DeviceType::Cpu))
    warmed = detail::warm_up_kernels(*device_, plan_, launch_kernel_, launch_grid_order_);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  {
    std::lock_guard lock(run_mutex_);
    if (cache_write_) {
      cache_write_->program = ClProgram::retain(program_.get());
      cache_write_->build_seconds += seconds;
    }
  }
  if (start_ns) {
    // The deferred build, on the thread that ran it (the background builder's row, or the
    // caller's when a call could not wait).
    telemetry::Span span;
    span.id = telemetry::next_id();
    span.kind = telemetry::SpanKind::compile;
    span.track = telemetry::this_thread_track();
    span.name = function_name_;
    span.start_ns = start_ns;
    span.end_ns = telemetry::now_ns();
    span.args = {{"device", device_->name()},
                 {"cache", plan_.info.cache_status},
                 {"key", plan_.info.cache_key},
                 {"program", std::to_string(telemetry_program().id)},
                 {"kernels", std::to_string(plan_.info.kernels.size())},
                 {"warmed_launches", std::to_string(warmed)},
                 {"tier", "deferred build"}};
    telemetry::emit(std::move(span));
  }
}

void OpenCLExecutable::build_in_background() {
  try {
    build_now();
  } catch (const std::exception& e) {
    log::warning("tiering", "building " + function_name_ + " for " + device_->label() +
                                " in the background failed: " + e.what() +
                                "; its calls go on running on the reference interpreter");
  }
}

std::optional<std::vector<std::shared_ptr<Buffer>>> OpenCLExecutable::run_before_built(
    std::span<const std::shared_ptr<Buffer>> inputs) {
  bool build_started = false;
  {
    std::lock_guard lock(build_mutex_);
    build_started = build_scheduled_ || building_ || build_error_;
  }
  const detail::TierPolicy::Next next = policy_->next_call(build_started);
  if (next == detail::TierPolicy::Next::device) {
    build_now();
    return std::nullopt;
  }
  if (next == detail::TierPolicy::Next::interpret_then_build) {
    {
      std::lock_guard lock(build_mutex_);
      build_scheduled_ = true;
    }
    detail::schedule_background_build(weak_from_this());
  }
  RanOn ran_on = RanOn::interpreter_build_not_started;
  if (policy_->interpreter_only()) ran_on = RanOn::interpreter_only;
  {
    std::lock_guard lock(build_mutex_);
    if (build_error_)
      ran_on = RanOn::interpreter_build_failed;
    else if (build_scheduled_ || building_)
      ran_on = RanOn::interpreter_build_pending;
  }
  std::optional<detail::DispatchRecord> record;
  if (telemetry::enabled()) {
    record.emplace(*this);
    record->set_ran_on(std::string(describe(ran_on)));
  }
  const auto start = std::chrono::steady_clock::now();
  std::vector<std::shared_ptr<Buffer>> outputs =
      detail::run_on_interpreter(*device_, *graph_, inputs);
  policy_->interpreted(
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  last_ran_on_.store(static_cast<int>(ran_on), std::memory_order_relaxed);
  return outputs;
}

void OpenCLExecutable::store_after_first_run(std::unique_ptr<detail::CacheWrite> write) {
  std::lock_guard lock(run_mutex_);
  cache_write_ = std::move(write);
}

void OpenCLExecutable::set_cache_outcome(std::string status, std::string key) {
  plan_.info.cache_status = std::move(status);
  plan_.info.cache_key = std::move(key);
}

void OpenCLExecutable::index_plan() {
  for (const BufferPlan& buffer : plan_.buffers)
    if (buffer.role == Role::Input)
      num_inputs_ = std::max(num_inputs_, static_cast<std::size_t>(buffer.index) + 1);
  num_inputs_ = std::max(num_inputs_, static_cast<std::size_t>(plan_.num_params));
  if (plan_.info.source.empty()) plan_.info.source = plan_.source;
  needs_host_values_ = detail::needs_host_values(plan_);
  has_host_steps_ = detail::has_host_steps(plan_);
  token_inputs_.assign(num_inputs_, false);
  for (const BufferPlan& buffer : plan_.buffers)
    if (buffer.role == Role::Input && buffer.token)
      token_inputs_[static_cast<std::size_t>(buffer.index)] = true;
}

void OpenCLExecutable::create_kernels() {
  OpenCLDevice& device = *device_;
  std::unordered_map<std::string, cl_kernel> by_name;
  std::unordered_map<std::string, detail::KernelGridOrder*> order_by_name;
  const bool ordered =
      detail::needs_grid_order(device.info().platform_name, device.info().type == DeviceType::Cpu);
  for (const LaunchPlan* launch : all_launches(plan_)) {
    if (ordered) {
      auto order = order_by_name.find(launch->function_name());
      if (order == order_by_name.end()) {
        grid_orders_.push_back(detail::kernel_grid_order(
            device.context(), plan_.source, plan_.build_options, launch->function_name()));
        order = order_by_name.emplace(launch->function_name(), grid_orders_.back().get()).first;
      }
      launch_grid_order_.emplace(launch, order->second);
    }
    auto found = by_name.find(launch->function_name());
    if (found == by_name.end()) {
      cl_int status = CL_SUCCESS;
      ClKernel kernel(clCreateKernel(program_.get(), launch->function_name().c_str(), &status));
      check_cl(status, "clCreateKernel(\"" + launch->function_name() + "\")", device.label());
      cl_uint arity = 0;
      check_cl(clGetKernelInfo(kernel.get(), CL_KERNEL_NUM_ARGS, sizeof(arity), &arity, nullptr),
               "clGetKernelInfo", device.label());
      if (arity != launch->args.size())
        bad_plan("kernel " + launch->function_name() + " takes " + std::to_string(arity) +
                 " arguments but its launch passes " + std::to_string(launch->args.size()));
      found = by_name.emplace(launch->function_name(), kernel.get()).first;
      kernels_.push_back(std::move(kernel));
    }
    launch_kernel_.emplace(launch, found->second);
  }
}

namespace {

void check_callback_slots(const BlockPlan& block, std::size_t available) {
  for (const StepPlan& step : block.steps) {
    if (step.kind == StepPlan::Kind::Host && !step.host.is_print &&
        (step.host.callback < 0 || static_cast<std::size_t>(step.host.callback) >= available))
      throw InvalidArgumentError(
          "weft: the graph's host_call names callback slot " + std::to_string(step.host.callback) +
          " but its callback table (Graph::callbacks) has " + std::to_string(available) +
          " entries; a graph read from text carries no host functions, so bind them first");
    for (const BlockPlan& region : step.regions) check_callback_slots(region, available);
  }
}

}  // namespace

void OpenCLExecutable::set_callbacks(std::vector<std::shared_ptr<const HostCallback>> callbacks) {
  for (const auto& callback : callbacks)
    if (!callback) throw InvalidArgumentError("weft: the graph's callback table has a null entry");
  check_callback_slots(plan_, callbacks.size());
  callbacks_ = std::move(callbacks);
}

void OpenCLExecutable::set_compile_facts(std::size_t num_inputs, std::string function_name) {
  num_inputs_ = std::max(num_inputs_, num_inputs);
  function_name_ = std::move(function_name);
}

void OpenCLExecutable::set_compile_time(double cache_lookup_seconds,
                                        std::optional<double> build_seconds) {
  plan_.info.compile_time.cache_lookup = cache_lookup_seconds;
  if (build_seconds) plan_.info.compile_time.build = *build_seconds;
}

const OpenCLExecutable::TelemetryProgram& OpenCLExecutable::telemetry_program(
    const std::string& ir_text) {
  std::call_once(telemetry_once_, [&] {
    TelemetryProgram& record = telemetry_program_;
    record.id = telemetry::next_id();
    record.function = function_name_;
    telemetry::Program program;
    program.id = record.id;
    program.function = function_name_;
    program.device = device_->name();
    program.cache_key = plan_.info.cache_key;
    program.cache_status = plan_.info.cache_status;
    program.ir = ir_text;
    program.source = plan_.info.source;
    for (const KernelSummary& k : plan_.info.kernels) {
      std::string ops;
      for (const std::string& op : k.fused_ops) ops += (ops.empty() ? "" : ",") + op;
      record.fused_ops.emplace(k.name, ops);
      program.kernels.push_back({k.name, k.kind, k.fused_ops});
    }
    telemetry::emit(std::move(program));
  });
  return telemetry_program_;
}

namespace {

// Checks that every index a block names exists and that its steps fit their regions.
void validate_block(const BlockPlan& block, const std::string& where_block) {
  const int count = static_cast<int>(block.buffers.size());
  auto check_index = [&](int index, const std::string& where) {
    if (index < 0 || index >= count)
      bad_plan(where + " names buffer " + std::to_string(index) + " of " + std::to_string(count));
  };
  for (const BufferPlan& buffer : block.buffers)
    if (buffer.index < 0)
      bad_plan(where_block + "a buffer has the negative index " + std::to_string(buffer.index));
  std::vector<bool> read(block.buffers.size(), false);
  for (std::size_t s = 0; s < block.steps.size(); ++s) {
    const StepPlan& step = block.steps[s];
    if (step.kind != StepPlan::Kind::Launch) {
      const std::string where = where_block + "step " + std::to_string(s);
      for (int operand : step.operands) check_index(operand, where);
      for (int result : step.results) {
        check_index(result, where);
        if (block.buffers[static_cast<std::size_t>(result)].role != Role::Result)
          bad_plan(where + " binds buffer " + std::to_string(result) + ", which is not a result");
      }
      for (std::size_t r = 0; r < step.regions.size(); ++r)
        validate_block(step.regions[r], where + " region " + std::to_string(r) + ": ");
      if (step.kind == StepPlan::Kind::Host) {
        const HostPlan& host = step.host;
        if (step.operands.size() != host.args.size() + (host.token_in ? 1 : 0) ||
            step.results.size() != host.returns.size() + (host.token_out ? 1 : 0))
          bad_plan(where + " (host) has operands or results that do not match its arrays");
        for (std::size_t k = 0; k < host.args.size(); ++k) {
          const TensorType& t = host.args[k];
          const int b = step.operands[k + (host.token_in ? 1 : 0)];
          if (block.buffers[static_cast<std::size_t>(b)].bytes !=
              static_cast<std::size_t>(num_elements(t.shape)) * dtype_size(t.dtype))
            bad_plan(where + " (host) sends buffer " + std::to_string(b) + " as a " +
                     type_to_string(t) + " of another size");
        }
      }
      if (step.kind == StepPlan::Kind::Join && step.results.size() != 1)
        bad_plan(where + " (join) must have one result");
      continue;
    }
    const LaunchPlan& launch = step.launch;
    const std::string where =
        where_block + "launch " + std::to_string(s) + " (" + launch.kernel + ")";
    for (int arg : launch.args) check_index(arg, where);
    for (int written : launch.writes) {
      check_index(written, where);
      if (!contains(launch.args, written))
        bad_plan(where + " writes buffer " + std::to_string(written) + " it does not take");
      // Inputs belong to the caller and arrays are immutable.
      if (block.buffers[static_cast<std::size_t>(written)].role == Role::Input)
        bad_plan(where + " writes input buffer " + std::to_string(written));
      // The runtime orders a buffer's writers one after another and its readers after the
      // last of them; a write after a read would need the reads tracked too.
      if (read[static_cast<std::size_t>(written)])
        bad_plan(where + " writes buffer " + std::to_string(written) +
                 " after an earlier launch read it");
    }
    for (int arg : launch.args)
      if (!contains(launch.writes, arg)) read[static_cast<std::size_t>(arg)] = true;
    if (launch.local_size != 0 && launch.global_size % launch.local_size != 0)
      bad_plan(where + " has global size " + std::to_string(launch.global_size) +
               ", not a multiple of its local size " + std::to_string(launch.local_size));
  }
  for (int output : block.outputs) check_index(output, where_block + "an output");
}

}  // namespace

void OpenCLExecutable::validate_plan() const {
  validate_block(plan_, "");
}

std::vector<const OpenCLBuffer*> OpenCLExecutable::input_tokens(
    const std::vector<std::shared_ptr<OpenCLBuffer>>& params) const {
  std::vector<const OpenCLBuffer*> tokens;
  for (std::size_t i = 0; i < params.size(); ++i)
    if (params[i] && is_token_input(i)) tokens.push_back(params[i].get());
  return tokens;
}

std::vector<std::shared_ptr<Buffer>> OpenCLExecutable::run(
    std::span<const std::shared_ptr<Buffer>> inputs) {
  OpenCLDevice& device = *device_;
  detail::refuse_if_forked(device);
  if (inputs.size() != num_inputs_)
    throw InvalidArgumentError("weft: the compiled function takes " + std::to_string(num_inputs_) +
                               " inputs but was given " + std::to_string(inputs.size()));
  std::vector<std::shared_ptr<OpenCLBuffer>> given(inputs.size());
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i]) throw InvalidArgumentError("weft: parameter " + std::to_string(i) + " is null");
    given[i] = std::dynamic_pointer_cast<OpenCLBuffer>(inputs[i]);
    if (!given[i] || &given[i]->opencl_device() != &device)
      throw InvalidArgumentError("weft: parameter " + std::to_string(i) + " lives on " +
                                 inputs[i]->device().name() +
                                 " but the function was compiled for " + device.name() +
                                 "; move it there first (Device::copy_from)");
  }
  for (const BufferPlan& buffer : plan_.buffers) {
    if (buffer.role != Role::Input) continue;
    const auto& input = given[static_cast<std::size_t>(buffer.index)];
    if (input->bytes() != buffer.bytes)
      throw InvalidArgumentError("weft: parameter " + std::to_string(buffer.index) + " holds " +
                                 std::to_string(input->bytes()) +
                                 " bytes but the function was "
                                 "compiled for " +
                                 std::to_string(buffer.bytes) +
                                 "; its dtype or shape differs from the traced one");
  }

  detail::arm_exit_drain();
  if (!built()) {
    if (auto outputs = run_before_built(inputs)) return std::move(*outputs);
  }
  if (policy_) last_ran_on_.store(static_cast<int>(RanOn::device), std::memory_order_relaxed);
  std::optional<detail::DispatchRecord> record;
  if (telemetry::enabled()) record.emplace(*this);
  // Everything below touches the kernels' argument state.
  std::vector<detail::Slot> params(given.begin(), given.end());
  params.resize(std::max(params.size(), static_cast<std::size_t>(plan_.num_params)));
  // An input still being filled by a run on the runtime thread: this run goes there too and
  // starts when that input is ready (no queued command may wait on its user event).
  bool after_runtime_run = false;
  for (std::size_t i = 0; i < given.size(); ++i)
    after_runtime_run |= !is_token_input(i) && given[i]->pending_runtime_output();
  // Before any lock: the callbacks it waits for may dispatch this very function.
  if (has_host_steps_) {
    detail::check_callback_nesting(device);
    detail::wait_for_callback_queue_space();
  }
  if (needs_host_values_ || after_runtime_run)
    return run_on_device_runtime(std::move(params), inputs, record ? &record->run() : nullptr);
  // Declared before the locks: if the run fails part way, the callbacks it started still run
  // (and so finish), after the locks are released.
  std::vector<std::shared_ptr<detail::HostTask>> inline_tasks;
  struct RunLeftInlineTasks {
    OpenCLDevice& device;
    std::vector<std::shared_ptr<detail::HostTask>>& tasks;
    ~RunLeftInlineTasks() { detail::run_inline_tasks(device, tasks); }
  } run_left_inline_tasks{device, inline_tasks};
  std::unique_lock lock(run_mutex_);

  std::shared_lock gate(detail::launch_gate());
  detail::FirstRunLaunches first_run;  // only while a cache write waits for them
  if (cache_write_) cache_write_->first_run_start = std::chrono::steady_clock::now();
  detail::BlockRunner runner(device, launch_kernel_, launch_grid_order_,
                             cache_write_ ? &first_run : nullptr, nullptr, nullptr,
                             {&callbacks_, detail::current_callback_level(), &inline_tasks,
                              input_tokens(params), record ? &record->run() : nullptr});
  std::vector<detail::Slot> slots = runner.run(plan_, std::move(params)).take();
  // Without a flush some drivers hold the commands until the next blocking call.
  if (cl_int err = clFlush(device.queue())) throw_cl_error(err, "clFlush", device.label());
  gate.unlock();  // before scheduling: after exit the write runs on this thread and takes it
  std::unique_ptr<detail::CacheWrite> write = std::move(cache_write_);
  lock.unlock();
  if (write) {
    write->first_run_launches = std::move(first_run);
    detail::schedule_cache_write(std::move(*write));
  }
  // WEFT_CALLBACK_INLINE=1: the callbacks run here, with no lock held.
  detail::run_inline_tasks(device, inline_tasks);

  std::vector<std::shared_ptr<Buffer>> outputs;
  outputs.reserve(plan_.outputs.size());
  for (std::size_t o = 0; o < plan_.outputs.size(); ++o) {
    const BufferPlan& buffer = plan_.buffers[static_cast<std::size_t>(plan_.outputs[o])];
    // An output that is a parameter is the caller's own buffer: arrays are immutable.
    if (buffer.role == Role::Input)
      outputs.push_back(inputs[static_cast<std::size_t>(buffer.index)]);
    else
      outputs.push_back(std::move(slots[o]));
  }
  // Temps die with the runner's block state; OpenCL keeps their memory until the launches
  // finish.
  return outputs;
}

namespace {

// A coroutine nobody awaits: it frees itself when it finishes.
struct Detached {
  struct promise_type {
    Detached get_return_object() { return {}; }
    std::suspend_never initial_suspend() noexcept { return {}; }
    std::suspend_never final_suspend() noexcept { return {}; }
    void return_void() {}
    void unhandled_exception() { std::terminate(); }  // drive_run catches everything
  };
};

// An output handed to the caller before the run that fills it has finished: ready when
// `filled` (a user event) is set, which happens once the copy of the run's result into it
// completes.
struct PendingOutput {
  std::size_t output = 0;
  detail::Slot buffer;
  bool token = false;  // handed on when the run's token is ready, never copied
  ClEvent filled;
  std::vector<ClEvent> prior_uses;  // of the pooled memory, before the copy may write it
};

void CL_CALLBACK complete_user_event(cl_event, cl_int status, void* user_event) {
  auto event = static_cast<cl_event>(user_event);
  clSetUserEventStatus(event, status == CL_COMPLETE ? CL_COMPLETE : status);
  clReleaseEvent(event);
}

// Sets `pending`'s user event once `event` completes, with its status.
void complete_after(cl_event event, const PendingOutput& pending, const std::string& label) {
  cl_event user = pending.filled.get();
  clRetainEvent(user);
  if (cl_int err = clSetEventCallback(event, CL_COMPLETE, complete_user_event, user)) {
    clReleaseEvent(user);
    throw_cl_error(err, "clSetEventCallback", label);
  }
}

Detached drive_run(std::shared_ptr<OpenCLExecutable> executable, std::vector<detail::Slot> params,
                   std::vector<PendingOutput> pending,
                   std::unique_ptr<detail::CacheWrite> cache_write, int callback_level,
                   std::unique_ptr<detail::RunTelemetry> telemetry) {
  OpenCLDevice& device = executable->device();
  detail::FirstRunLaunches first_run;
  std::exception_ptr failure;
  try {
    // Inputs that other runtime runs fill: wait (without blocking the thread) until they are.
    for (std::size_t p = 0; p < params.size(); ++p) {
      const detail::Slot& param = params[p];
      // Host steps wait for tokens on the host themselves.
      if (!param || executable->is_token_input(p) || !param->pending_runtime_output()) continue;
      const cl_int status = co_await detail::EventPause{&device.runtime(), param->ready_event(),
                                                        CL_COMPLETE, param.get()};
      if (status != CL_COMPLETE) {
        param->rethrow_failure();
        throw_cl_error(status, "an input of this run", device.label());
      }
    }
    detail::BlockRunner runner(device, executable->launch_kernels(),
                               executable->launch_grid_orders(), cache_write ? &first_run : nullptr,
                               &executable->run_mutex(), &device.runtime(),
                               {&executable->callbacks(), callback_level, nullptr,
                                executable->input_tokens(params), telemetry.get()});
    std::vector<detail::Slot> results = co_await runner.run(executable->plan(), std::move(params));
    std::shared_lock gate(detail::launch_gate());
    for (PendingOutput& out : pending) {
      const detail::Slot& result = results.at(out.output);
      if (out.token) {
        detail::forward_token(result, out.filled, out.buffer);
        continue;
      }
      if (out.buffer->bytes() == 0) {
        clSetUserEventStatus(out.filled.get(), CL_COMPLETE);
        continue;
      }
      std::vector<cl_event> wait;
      for (const ClEvent& e : out.prior_uses) wait.push_back(e.get());
      if (result->ready_event()) wait.push_back(result->ready_event());
      cl_event copied = nullptr;
      if (cl_int err = clEnqueueCopyBuffer(device.queue(), result->mem(), out.buffer->mem(), 0, 0,
                                           out.buffer->bytes(), static_cast<cl_uint>(wait.size()),
                                           wait.empty() ? nullptr : wait.data(), &copied))
        throw_cl_error(err, "clEnqueueCopyBuffer (an output)", device.label());
      ClEvent event(copied);
      result->add_reader(event);
      complete_after(event.get(), out, device.label());
    }
    if (cl_int err = clFlush(device.queue())) throw_cl_error(err, "clFlush", device.label());
  } catch (...) {
    failure = std::current_exception();
  }
  if (failure) {
    // The caller has the outputs already: waiting on them rethrows the error. Outputs of
    // later work computed from them fail with the OpenCL status only, so say it here too.
    std::string what = "an unknown error";
    bool from_callback = false;
    try {
      std::rethrow_exception(failure);
    } catch (const CallbackException& e) {
      what = e.what();
      from_callback = true;
    } catch (const std::exception& e) {
      what = e.what();
    } catch (...) {
    }
    // A callback's own failure is the user's error, raised where they wait: no warning.
    const std::string line = "a run on the runtime thread of " + device.label() +
                             " failed: " + what + " (waiting for its outputs raises this error)";
    if (from_callback)
      log::debug("runtime", line);
    else
      log::warning("runtime", line);
    for (PendingOutput& out : pending) {
      out.buffer->set_failure(failure);
      // A token always completes: the next effect waits for it only to keep its order.
      clSetUserEventStatus(out.filled.get(), out.token ? CL_COMPLETE : CL_INVALID_OPERATION);
    }
  } else if (cache_write) {
    cache_write->first_run_launches = std::move(first_run);
    detail::schedule_cache_write(std::move(*cache_write));
  }
  device.runtime().run_finished();
}

}  // namespace

std::vector<std::shared_ptr<Buffer>> OpenCLExecutable::run_on_device_runtime(
    std::vector<std::shared_ptr<OpenCLBuffer>> params,
    std::span<const std::shared_ptr<Buffer>> inputs, detail::RunTelemetry* telemetry) {
  std::shared_ptr<OpenCLExecutable> self = weak_from_this().lock();
  if (!self)
    throw InvalidArgumentError(
        "weft: an executable with while or cond steps must be owned by a shared_ptr (as "
        "Device::compile returns it)");
  OpenCLDevice& device = *device_;
  std::vector<std::shared_ptr<Buffer>> outputs;
  std::vector<PendingOutput> pending;
  for (std::size_t o = 0; o < plan_.outputs.size(); ++o) {
    const BufferPlan& buffer = plan_.buffers[static_cast<std::size_t>(plan_.outputs[o])];
    if (buffer.role == Role::Input) {
      outputs.push_back(inputs[static_cast<std::size_t>(buffer.index)]);
      continue;
    }
    PendingOutput out;
    out.output = o;
    out.token = buffer.token;
    cl_int status = CL_SUCCESS;
    out.filled = ClEvent(clCreateUserEvent(device.context(), &status));
    check_cl(status, "clCreateUserEvent", device.label());
    if (out.token) {
      out.buffer = device.make_token(out.filled);
    } else {
      out.buffer = device.allocate(buffer.bytes);
      out.prior_uses = out.buffer->take_prior_uses();
      out.buffer->set_ready_event(out.filled);
    }
    out.buffer->mark_runtime_output();
    outputs.push_back(out.buffer);
    pending.push_back(std::move(out));
  }
  std::unique_ptr<detail::CacheWrite> write;
  {
    std::lock_guard lock(run_mutex_);
    write = std::move(cache_write_);
  }
  if (write) write->first_run_start = std::chrono::steady_clock::now();
  // Started under the launch gate, so the cache writer never drains the queues while this
  // run's outputs wait for its runtime thread (see cache_writer.cpp).
  std::shared_lock gate(detail::launch_gate());
  device.runtime().run_started();
  // std::function needs a copyable callable: the move-only parts travel in a shared_ptr.
  // The run's telemetry outlives this call: the run goes on on the runtime thread.
  auto work = std::make_shared<
      std::tuple<std::vector<detail::Slot>, std::vector<PendingOutput>,
                 std::unique_ptr<detail::CacheWrite>, std::unique_ptr<detail::RunTelemetry>>>(
      std::move(params), std::move(pending), std::move(write),
      telemetry ? std::make_unique<detail::RunTelemetry>(*telemetry) : nullptr);
  const int level = detail::current_callback_level();
  device.runtime().post([self, work, level] {
    drive_run(self, std::move(std::get<0>(*work)), std::move(std::get<1>(*work)),
              std::move(std::get<2>(*work)), level, std::move(std::get<3>(*work)));
  });
  return outputs;
}

}  // namespace weft::opencl
