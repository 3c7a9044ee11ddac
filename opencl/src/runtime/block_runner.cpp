#include "runtime/block_runner.h"

#include "cache_writer.h"
#include "runtime/device_runtime.h"
#include "runtime/host_tasks.h"
#include "runtime/pocl_grid_order.h"

#include <algorithm>
#include <cstring>
#include <shared_mutex>
#include <string>

#include "weft/error.h"
#include "weft/log.h"
#include "weft/opencl/cl_error.h"
#include "weft/opencl/device.h"

namespace weft::opencl::detail {

namespace {

using Role = BufferPlan::Role;

bool contains(const std::vector<int>& values, int value) {
  return std::find(values.begin(), values.end(), value) != values.end();
}

}  // namespace

bool needs_host_values(const BlockPlan& block) {
  for (const StepPlan& step : block.steps) {
    if (step.kind == StepPlan::Kind::While || step.kind == StepPlan::Kind::Cond) return true;
    if (step.kind == StepPlan::Kind::Host && !step.host.returns.empty()) return true;
    for (const BlockPlan& region : step.regions)
      if (needs_host_values(region)) return true;
  }
  return false;
}

bool has_host_steps(const BlockPlan& block) {
  for (const StepPlan& step : block.steps) {
    if (step.kind == StepPlan::Kind::Host) return true;
    for (const BlockPlan& region : step.regions)
      if (has_host_steps(region)) return true;
  }
  return false;
}

RunTask<std::vector<Slot>> BlockRunner::run(const BlockPlan& block, std::vector<Slot> params) {
  BlockState state;
  state.slots.resize(block.buffers.size());
  state.prior_uses.resize(block.buffers.size());
  for (std::size_t b = 0; b < block.buffers.size(); ++b) {
    const BufferPlan& buffer = block.buffers[b];
    Slot& slot = state.slots[b];
    switch (buffer.role) {
      case Role::Input:
        slot = params[static_cast<std::size_t>(buffer.index)];
        break;
      case Role::Output:
      case Role::Temp:
        slot = device_.allocate(buffer.bytes);
        // Pooled memory may still be in use by commands of its previous owner.
        state.prior_uses[b] = slot->take_prior_uses();
        break;
      case Role::Result:
        continue;  // bound by its step
    }
  }
  // Host steps whose results are still on their way: a step reading one waits for it (pausing
  // on the runtime thread); steps that do not are enqueued meanwhile.
  std::vector<PendingHostResults> pending;
  for (const StepPlan& step : block.steps) {
    if (!pending.empty()) co_await collect_results_read_by(step, pending, state);
    switch (step.kind) {
      case StepPlan::Kind::Launch:
        launch(step.launch, state);
        break;
      case StepPlan::Kind::Loop:
        co_await run_loop(block, step, state);
        break;
      case StepPlan::Kind::While:
        co_await run_while(step, state);
        break;
      case StepPlan::Kind::Cond:
        co_await run_cond(step, state);
        break;
      case StepPlan::Kind::Host:
        if (std::optional<PendingHostResults> later = start_host(step, state))
          pending.push_back(std::move(*later));
        break;
      case StepPlan::Kind::Join:
        run_join(step, state);
        break;
    }
  }
  for (PendingHostResults& later : pending) co_await collect_results(later, state);
  std::vector<Slot> outputs;
  outputs.reserve(block.outputs.size());
  for (int output : block.outputs) outputs.push_back(state.slots[static_cast<std::size_t>(output)]);
  co_return outputs;
}

RunTask<bool> BlockRunner::collect_results_read_by(const StepPlan& step,
                                                   std::vector<PendingHostResults>& pending,
                                                   BlockState& state) {
  const std::vector<int>& reads =
      step.kind == StepPlan::Kind::Launch ? step.launch.args : step.operands;
  for (std::size_t p = 0; p < pending.size();) {
    const std::vector<int>& results = pending[p].step->results;
    const bool read = std::any_of(reads.begin(), reads.end(), [&](int b) {
      return std::find(results.begin(), results.end(), b) != results.end();
    });
    if (!read) {
      ++p;
      continue;
    }
    co_await collect_results(pending[p], state);
    pending.erase(pending.begin() + static_cast<std::ptrdiff_t>(p));
  }
  co_return true;
}

void BlockRunner::launch(const LaunchPlan& launch, BlockState& state) {
  // An empty launch writes nothing; its buffers stay valid, empty and ready.
  if (launch.global_size == 0) return;
  cl_kernel kernel = kernels_.at(&launch);
  // Kernel arguments are shared state, and the cache writer's binary reads exclude enqueues.
  std::unique_lock<std::mutex> arguments;
  std::shared_lock<std::shared_mutex> gate;
  if (launch_mutex_) {
    arguments = std::unique_lock(*launch_mutex_);
    gate = std::shared_lock(launch_gate());
  }
  wait_list_.clear();
  for (std::size_t a = 0; a < launch.args.size(); ++a) {
    const auto b = static_cast<std::size_t>(launch.args[a]);
    cl_mem mem = state.slots[b]->mem();
    // Messages are built only on failure: this is the per-call dispatch path.
    if (cl_int err = clSetKernelArg(kernel, static_cast<cl_uint>(a), sizeof(cl_mem), &mem))
      throw_cl_error(err, "clSetKernelArg(" + launch.kernel + ", " + std::to_string(a) + ")",
                     device_.label());
    // Every command waits for the buffer's last writer (a bulk launch before its tail); the
    // first writer also for the commands of the pooled memory's previous life. No launch
    // writes a buffer after another read it (validate_plan).
    if (cl_event written = state.slots[b]->ready_event()) wait_list_.push_back(written);
    if (contains(launch.writes, launch.args[a]))
      for (const ClEvent& use : state.prior_uses[b]) wait_list_.push_back(use.get());
  }
  // A pooled output's prior uses often repeat an operand's writer: list each event once.
  if (wait_list_.size() > 1) {
    std::sort(wait_list_.begin(), wait_list_.end());
    wait_list_.erase(std::unique(wait_list_.begin(), wait_list_.end()), wait_list_.end());
  }
  // PoCL's CPU drivers: a launch wider than every earlier one of its kernel runs alone.
  KernelGridOrder* grid_order = nullptr;
  if (auto found = grid_orders_.find(&launch); found != grid_orders_.end())
    grid_order = found->second;
  std::unique_lock<std::mutex> grid_lock;
  bool widens = false;
  if (grid_order) {
    grid_lock = grid_order->lock();
    widens = grid_order->before_launch(launch.global_size, wait_list_);
  }
  cl_event done = nullptr;
  if (cl_int err = clEnqueueNDRangeKernel(device_.queue(), kernel, 1, nullptr, &launch.global_size,
                                          launch.local_size ? &launch.local_size : nullptr,
                                          static_cast<cl_uint>(wait_list_.size()),
                                          wait_list_.empty() ? nullptr : wait_list_.data(), &done))
    throw_cl_error(err, "clEnqueueNDRangeKernel(" + launch.kernel + ")", device_.label());
  ClEvent event(done);
  if (grid_order) {
    grid_order->after_launch(widens, launch.global_size, done);
    grid_lock.unlock();
  }
  if (first_run_) first_run_->add(event);
  if (RunTelemetry* t = host_.telemetry) {
    telemetry::Args args = {{"device", t->device},
                            {"program", std::to_string(t->program)},
                            {"global_size", std::to_string(launch.global_size)},
                            {"local_size", std::to_string(launch.local_size)}};
    if (t->fused_ops)
      if (auto ops = t->fused_ops->find(launch.kernel); ops != t->fused_ops->end())
        args.emplace_back("fused_ops", ops->second);
    if (!t->iteration.empty()) args.emplace_back("iteration", t->iteration);
    record(event.get(), telemetry::SpanKind::kernel, launch.kernel, std::move(args));
  }
  for (int arg : launch.args) {
    const auto b = static_cast<std::size_t>(arg);
    if (contains(launch.writes, arg)) {
      state.prior_uses[b].clear();
      state.slots[b]->set_ready_event(event);
    } else {
      state.slots[b]->add_reader(event);
    }
  }
}

ClEvent BlockRunner::copy(const Slot& source, std::size_t source_offset, const Slot& target,
                          std::size_t target_offset, std::size_t bytes,
                          std::vector<cl_event>& wait) {
  std::shared_lock<std::shared_mutex> gate;
  if (launch_mutex_) gate = std::shared_lock(launch_gate());
  cl_event done = nullptr;
  if (cl_int err = clEnqueueCopyBuffer(device_.queue(), source->mem(), target->mem(), source_offset,
                                       target_offset, bytes, static_cast<cl_uint>(wait.size()),
                                       wait.empty() ? nullptr : wait.data(), &done))
    throw_cl_error(err, "clEnqueueCopyBuffer", device_.label());
  ClEvent event(done);
  source->add_reader(event);
  if (host_.telemetry)
    record(event.get(), telemetry::SpanKind::transfer, "copy", {{"bytes", std::to_string(bytes)}});
  return event;
}

void BlockRunner::record(cl_event event, telemetry::SpanKind kind, std::string name,
                         telemetry::Args args) {
  telemetry::Span span;
  span.id = telemetry::next_id();
  span.parent = host_.telemetry->dispatch;
  span.kind = kind;
  span.name = std::move(name);
  span.args = std::move(args);
  if (kind != telemetry::SpanKind::kernel)
    span.args.emplace_back("device", host_.telemetry->device);
  record_command(device_, event, std::move(span));
}

void BlockRunner::record_here(telemetry::SpanKind kind, std::string name, std::int64_t start_ns,
                              telemetry::Args args) {
  telemetry::Span span;
  span.id = telemetry::next_id();
  span.parent = host_.telemetry->dispatch;
  span.kind = kind;
  span.track = telemetry::this_thread_track();
  span.name = std::move(name);
  span.start_ns = start_ns;
  span.end_ns = telemetry::now_ns();
  span.args = std::move(args);
  span.args.emplace_back("device", host_.telemetry->device);
  telemetry::emit(std::move(span));
}

namespace {

// Labels the kernels of a loop body with the iteration ("3", "3/1" when nested).
class IterationLabel {
 public:
  explicit IterationLabel(RunTelemetry* run) : run_(run) {
    if (run_) saved_ = run_->iteration;
  }
  ~IterationLabel() {
    if (run_) run_->iteration = std::move(saved_);
  }
  void set(std::int64_t iteration) {
    if (run_) run_->iteration = (saved_.empty() ? "" : saved_ + "/") + std::to_string(iteration);
  }

 private:
  RunTelemetry* run_;
  std::string saved_;
};

}  // namespace

Slot BlockRunner::scalar_i32(std::int32_t value) {
  Slot slot = device_.allocate(sizeof value);
  std::vector<ClEvent> prior = slot->take_prior_uses();
  std::vector<cl_event> wait;
  for (const ClEvent& e : prior) wait.push_back(e.get());
  if (slot->ready_event()) wait.push_back(slot->ready_event());
  std::shared_lock<std::shared_mutex> gate;
  if (launch_mutex_) gate = std::shared_lock(launch_gate());
  cl_event done = nullptr;
  // The pattern is copied before clEnqueueFillBuffer returns.
  if (cl_int err = clEnqueueFillBuffer(device_.queue(), slot->mem(), &value, sizeof value, 0,
                                       sizeof value, static_cast<cl_uint>(wait.size()),
                                       wait.empty() ? nullptr : wait.data(), &done))
    throw_cl_error(err, "clEnqueueFillBuffer", device_.label());
  slot->set_ready_event(ClEvent(done));
  return slot;
}

RunTask<bool> BlockRunner::run_loop(const BlockPlan& block, const StepPlan& step,
                                    BlockState& state) {
  const BlockPlan& body = step.regions.at(0);
  const auto n = static_cast<std::size_t>(step.carries);
  const auto m = static_cast<std::size_t>(step.xs);
  const std::int64_t length = step.length;
  auto operand = [&](std::size_t k) -> const Slot& {
    return state.slots[static_cast<std::size_t>(step.operands[k])];
  };
  // The iteration number and the rows of xs are made only when the body reads them.
  std::vector<bool> used(static_cast<std::size_t>(body.num_params), false);
  for (const BufferPlan& b : body.buffers)
    if (b.role == Role::Input) used[static_cast<std::size_t>(b.index)] = true;

  std::vector<Slot> params(static_cast<std::size_t>(body.num_params));
  for (std::size_t k = 0; k < n; ++k) params[1 + k] = operand(k);
  for (std::size_t k = n + m; k < step.operands.size(); ++k) params[1 + k] = operand(k);
  std::vector<std::size_t> x_row_bytes(m);
  for (std::size_t j = 0; j < m; ++j)
    x_row_bytes[j] = length > 0 ? operand(n + j)->bytes() / static_cast<std::size_t>(length) : 0;

  // The stacked results, written one row per iteration, each copy after the one before.
  std::vector<Slot> stacked;
  std::vector<std::size_t> y_row_bytes;
  for (std::size_t j = n; j < step.results.size(); ++j) {
    const std::size_t bytes = block.buffers[static_cast<std::size_t>(step.results[j])].bytes;
    stacked.push_back(device_.allocate(bytes));
    y_row_bytes.push_back(length > 0 ? bytes / static_cast<std::size_t>(length) : 0);
  }
  std::vector<ClEvent> stacked_prior(stacked.size());
  std::vector<std::vector<ClEvent>> stacked_first_wait(stacked.size());
  for (std::size_t j = 0; j < stacked.size(); ++j)
    stacked_first_wait[j] = stacked[j]->take_prior_uses();

  std::vector<cl_event> wait;
  IterationLabel label(host_.telemetry);
  for (std::int64_t iteration = 0; iteration < length; ++iteration) {
    label.set(iteration);
    const std::int64_t row = step.reverse ? length - 1 - iteration : iteration;
    if (used[0]) params[0] = scalar_i32(static_cast<std::int32_t>(row));
    for (std::size_t j = 0; j < m; ++j) {
      if (!used[1 + n + j]) continue;
      const Slot& xs = operand(n + j);
      Slot x = device_.allocate(x_row_bytes[j]);
      std::vector<ClEvent> prior = x->take_prior_uses();
      if (x_row_bytes[j] > 0) {
        wait.clear();
        for (const ClEvent& e : prior) wait.push_back(e.get());
        if (xs->ready_event()) wait.push_back(xs->ready_event());
        x->set_ready_event(
            copy(xs, static_cast<std::size_t>(row) * x_row_bytes[j], x, 0, x_row_bytes[j], wait));
      }
      params[1 + n + j] = std::move(x);
    }
    std::vector<Slot> outputs = co_await run(body, params);
    for (std::size_t k = 0; k < n; ++k) params[1 + k] = outputs[k];
    for (std::size_t j = 0; j < stacked.size(); ++j) {
      if (y_row_bytes[j] == 0) continue;
      const Slot& y = outputs[n + j];
      wait.clear();
      if (y->ready_event()) wait.push_back(y->ready_event());
      if (stacked_prior[j]) wait.push_back(stacked_prior[j].get());
      for (const ClEvent& e : stacked_first_wait[j]) wait.push_back(e.get());
      stacked_prior[j] = copy(y, 0, stacked[j], static_cast<std::size_t>(row) * y_row_bytes[j],
                              y_row_bytes[j], wait);
      stacked_first_wait[j].clear();
    }
  }
  for (std::size_t j = 0; j < stacked.size(); ++j)
    if (stacked_prior[j]) stacked[j]->set_ready_event(std::move(stacked_prior[j]));

  // The final carries (an operand's own buffer after zero iterations: arrays are
  // immutable) and the stacked rows.
  std::vector<Slot> results(params.begin() + 1,
                            params.begin() + 1 + static_cast<std::ptrdiff_t>(n));
  results.insert(results.end(), stacked.begin(), stacked.end());
  bind_results(step, state, std::move(results));
  co_return true;
}

void BlockRunner::bind_results(const StepPlan& step, BlockState& state, std::vector<Slot> values) {
  for (std::size_t k = 0; k < step.results.size(); ++k) {
    const auto b = static_cast<std::size_t>(step.results[k]);
    state.slots[b] = std::move(values[k]);
  }
}

RunTask<std::int64_t> BlockRunner::host_value(const Slot& slot, DType dtype) {
  if (!runtime_)
    throw DeviceError("weft: internal error: a while or cond step ran off the device runtime");
  const std::size_t bytes = dtype == DType::Bool ? 1 : dtype_size(dtype);
  const std::int64_t start_ns = host_.telemetry ? telemetry::now_ns() : 0;
  auto value = std::make_unique<std::uint8_t[]>(8);
  cl_event done = nullptr;
  {
    std::shared_lock gate(launch_gate());
    cl_event ready = slot->ready_event();
    if (cl_int err =
            clEnqueueReadBuffer(device_.queue(), slot->mem(), CL_FALSE, 0, bytes, value.get(),
                                ready ? 1 : 0, ready ? &ready : nullptr, &done))
      throw_cl_error(err, "clEnqueueReadBuffer (a predicate)", device_.label());
    // The read must reach the device before this run pauses for it.
    if (cl_int err = clFlush(device_.queue())) throw_cl_error(err, "clFlush", device_.label());
  }
  ClEvent event(done);
  slot->add_reader(event);
  if (host_.telemetry)
    record(event.get(), telemetry::SpanKind::transfer, "read", {{"bytes", std::to_string(bytes)}});
  const cl_int status = co_await EventPause{runtime_, event.get()};
  if (status != CL_COMPLETE)
    throw_cl_error(status, "computing a while predicate or cond index", device_.label());
  std::int64_t result = 0;
  switch (dtype) {
    case DType::Bool:
      result = value[0] != 0;
      break;
    case DType::I32: {
      std::int32_t v;
      std::memcpy(&v, value.get(), sizeof v);
      result = v;
      break;
    }
    case DType::U32: {
      std::uint32_t v;
      std::memcpy(&v, value.get(), sizeof v);
      result = v;
      break;
    }
    case DType::U8:
      result = value[0];
      break;
    case DType::I8:
      result = static_cast<std::int8_t>(value[0]);
      break;
    case DType::U16: {
      std::uint16_t v;
      std::memcpy(&v, value.get(), sizeof v);
      result = v;
      break;
    }
    case DType::I16: {
      std::int16_t v;
      std::memcpy(&v, value.get(), sizeof v);
      result = v;
      break;
    }
    default:  // i64, and u64 as its bit pattern
      std::memcpy(&result, value.get(), sizeof result);
      break;
  }
  if (host_.telemetry)
    record_here(telemetry::SpanKind::predicate_read, dtype == DType::Bool ? "predicate" : "index",
                start_ns, {{"value", std::to_string(result)}});
  co_return result;
}

RunTask<bool> BlockRunner::run_while(const StepPlan& step, BlockState& state) {
  const auto n = static_cast<std::size_t>(step.carries);
  std::vector<Slot> params;
  for (int operand : step.operands)
    params.push_back(state.slots[static_cast<std::size_t>(operand)]);
  IterationLabel label(host_.telemetry);
  for (std::int64_t iteration = 0;; ++iteration) {
    const std::int64_t start_ns = host_.telemetry ? telemetry::now_ns() : 0;
    label.set(iteration);
    std::vector<Slot> predicate = co_await run(step.regions.at(0), params);
    if (co_await host_value(predicate.at(0), DType::Bool) == 0) break;
    std::vector<Slot> next = co_await run(step.regions.at(1), params);
    for (std::size_t k = 0; k < n; ++k) params[k] = std::move(next[k]);
    if (host_.telemetry)
      record_here(telemetry::SpanKind::loop_iteration, "iteration", start_ns,
                  {{"index", std::to_string(iteration)}});
  }
  params.resize(n);
  bind_results(step, state, std::move(params));
  co_return true;
}

RunTask<bool> BlockRunner::run_cond(const StepPlan& step, BlockState& state) {
  const Slot& index = state.slots[static_cast<std::size_t>(step.operands.at(0))];
  const std::int64_t value = co_await host_value(index, step.index_dtype);
  // An out-of-range index picks the nearest branch, as lax.switch does.
  const auto last = static_cast<std::int64_t>(step.regions.size()) - 1;
  // A u64 index of 2^63 or more is negative as an int64: past the last branch.
  const std::int64_t branch =
      step.index_dtype == DType::U64 && value < 0 ? last : std::clamp<std::int64_t>(value, 0, last);
  std::vector<Slot> params;
  for (std::size_t k = 1; k < step.operands.size(); ++k)
    params.push_back(state.slots[static_cast<std::size_t>(step.operands[k])]);
  std::vector<Slot> results = co_await run(step.regions[static_cast<std::size_t>(branch)], params);
  bind_results(step, state, std::move(results));
  co_return true;
}

std::optional<BlockRunner::PendingHostResults> BlockRunner::start_host(const StepPlan& step,
                                                                       BlockState& state) {
  const HostPlan& plan = step.host;
  auto slot = [&](std::size_t k) -> const Slot& {
    return state.slots[static_cast<std::size_t>(step.operands[k])];
  };
  Slot token_in = plan.token_in ? slot(0) : nullptr;
  std::vector<Slot> args;
  for (std::size_t k = plan.token_in ? 1 : 0; k < step.operands.size(); ++k)
    args.push_back(slot(k));
  std::shared_ptr<const HostCallback> callback;
  if (!plan.is_print) {
    if (!host_.callbacks || plan.callback < 0 ||
        static_cast<std::size_t>(plan.callback) >= host_.callbacks->size())
      throw InvalidArgumentError("weft: a host_call names callback slot " +
                                 std::to_string(plan.callback) +
                                 " but the executable has no such callback");
    callback = (*host_.callbacks)[static_cast<std::size_t>(plan.callback)];
  }
  if (!host_.inline_tasks && inline_callbacks()) {
    static std::once_flag said;
    std::call_once(said, [&] {
      log::info("callback",
                "WEFT_CALLBACK_INLINE=1: callbacks in runs with while loops, conds or callback "
                "results run on the receiver thread of " +
                    device_.label() + ", not inline (the runtime thread must not block)");
    });
  }
  std::shared_ptr<HostTask> task;
  {
    std::shared_lock<std::shared_mutex> gate;
    if (launch_mutex_) gate = std::shared_lock(launch_gate());
    task = start_host_task(device_, plan, std::move(callback), args, token_in,
                           carries_failure(token_in), host_.level, host_.inline_tasks,
                           host_.telemetry);
    // The reads must reach the device before anything waits for them.
    if (!plan.returns.empty())
      if (cl_int err = clFlush(device_.queue())) throw_cl_error(err, "clFlush", device_.label());
  }
  if (plan.returns.empty()) {
    if (plan.token_out) bind_results(step, state, {task->token});
    return std::nullopt;
  }
  if (!runtime_)
    throw DeviceError("weft: internal error: a host step with results ran off the runtime");
  // The token is ready when the callback has run; the values come later (collect_results).
  if (plan.token_out) state.slots[static_cast<std::size_t>(step.results.at(0))] = task->token;
  return PendingHostResults{&step, std::move(task)};
}

RunTask<bool> BlockRunner::collect_results(const PendingHostResults& pending, BlockState& state) {
  const StepPlan& step = *pending.step;
  const std::shared_ptr<HostTask>& task = pending.task;
  std::vector<Slot> results;
  {
    co_await EventPause{runtime_, task->done.get()};
    if (task->failure) std::rethrow_exception(task->failure);
    std::shared_lock<std::shared_mutex> gate;
    if (launch_mutex_) gate = std::shared_lock(launch_gate());
    for (HostArray& value : task->results) {
      Slot out = device_.allocate(value.nbytes());
      std::vector<ClEvent> prior = out->take_prior_uses();
      if (value.nbytes() > 0) {
        std::vector<cl_event> wait;
        for (const ClEvent& e : prior) wait.push_back(e.get());
        if (out->ready_event()) wait.push_back(out->ready_event());
        cl_event written = nullptr;
        if (cl_int err = clEnqueueWriteBuffer(
                device_.queue(), out->mem(), CL_FALSE, 0, value.nbytes(), value.raw(),
                static_cast<cl_uint>(wait.size()), wait.empty() ? nullptr : wait.data(), &written))
          throw_cl_error(err, "clEnqueueWriteBuffer (a callback result)", device_.label());
        ClEvent event(written);
        // The host copy must live until the write has read it.
        auto* keep = new std::shared_ptr<HostTask>(task);
        if (clSetEventCallback(
                written, CL_COMPLETE,
                [](cl_event, cl_int, void* data) {
                  delete static_cast<std::shared_ptr<HostTask>*>(data);
                },
                keep) != CL_SUCCESS) {
          clWaitForEvents(1, &written);
          delete keep;
        }
        out->set_ready_event(std::move(event));
      }
      results.push_back(std::move(out));
    }
  }
  const std::size_t first = step.host.token_out ? 1 : 0;
  for (std::size_t k = 0; k < results.size(); ++k)
    state.slots[static_cast<std::size_t>(step.results.at(first + k))] = std::move(results[k]);
  co_return true;
}

bool BlockRunner::carries_failure(const Slot& token) const {
  return token && std::find(host_.input_tokens.begin(), host_.input_tokens.end(), token.get()) ==
                      host_.input_tokens.end();
}

void BlockRunner::run_join(const StepPlan& step, BlockState& state) {
  std::vector<Slot> tokens, carried;
  for (int operand : step.operands) {
    const Slot& token = state.slots[static_cast<std::size_t>(operand)];
    tokens.push_back(token);
    if (carries_failure(token)) carried.push_back(token);
  }
  bind_results(step, state, {join_tokens(device_, tokens, carried)});
}

}  // namespace weft::opencl::detail
