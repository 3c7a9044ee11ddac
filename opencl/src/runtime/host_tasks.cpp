#include "runtime/host_tasks.h"

#include <algorithm>
#include <condition_variable>
#include <cstdlib>
#include <deque>
#include <map>
#include <mutex>
#include <thread>
#include <unordered_map>

#include "discovery.h"
#include "runtime/callback_watchdog.h"
#include "runtime/run_telemetry.h"
#include "weft/cache/settings.h"
#include "weft/callback.h"
#include "weft/debug.h"
#include "weft/error.h"
#include "weft/ir/effects.h"
#include "weft/log.h"
#include "weft/opencl/cl_error.h"
#include "weft/opencl/device.h"
#include "weft/print_format.h"
#include "weft/telemetry/telemetry.h"

namespace weft::opencl::detail {

namespace {

constexpr std::string_view kComponent = "callback";

// The host memory a pending call holds besides its arguments and results, charged against
// WEFT_CALLBACK_MAX_QUEUE_BYTES: the task, its user event and read command in the driver, its
// output token and the dispatch's bookkeeping. Measured as the resident-set growth per pending
// call while 30,000 to 300,000 one-scalar taps of a jitted function waited behind a blocked
// callback (PoCL 3.1, Release build): 1,255 to 1,308 bytes.
constexpr std::size_t kPendingCallOverheadBytes = 1280;

// The level of the callback this thread is running, -1 when none.
thread_local int t_running_level = -1;

struct RunningLevel {
  int saved;
  explicit RunningLevel(int level) : saved(std::exchange(t_running_level, level)) {}
  ~RunningLevel() { t_running_level = saved; }
};

class Receiver;

// Runs the print or callback of a task whose arguments are on the host, then completes it.
// `receiver`: the receiver whose thread runs it (null: inline, or after the receivers stopped).
void run_task(const std::shared_ptr<HostTask>& task, Receiver* receiver);

class Receiver {
 public:
  Receiver(std::string device, std::string label, int level)
      : device_(std::move(device)), label_(std::move(label)), level_(level) {}
  ~Receiver() { stop(); }

  void submit(std::shared_ptr<HostTask> task) {
    {
      std::unique_lock lock(mutex_);
      if (!stopped_) {
        queue_.push_back(std::move(task));
        if (!thread_.joinable()) start_thread();
        wake_.notify_one();
        return;
      }
    }
    RunningLevel running(level_);
    run_task(task, nullptr);
  }

  void stop() {
    std::thread thread;
    {
      std::lock_guard lock(mutex_);
      stopped_ = true;
      thread = std::move(thread_);
    }
    wake_.notify_all();
    if (!thread.joinable()) return;
    // A thread cannot join itself (std::exit called from one of its callbacks).
    if (thread.get_id() == std::this_thread::get_id())
      thread.detach();
    else
      thread.join();
  }

  // The callback that `stuck` runs timed out: that thread is left to it, and a new one runs
  // the tasks queued behind it. The old one ends when (if ever) the callback returns.
  void replace_stuck_thread(std::thread::id stuck) {
    std::lock_guard lock(mutex_);
    if (stopped_ || in_charge_ != stuck || !thread_.joinable()) return;
    thread_.detach();
    start_thread();
  }

 private:
  void loop() {
    RunningLevel running(level_);
    telemetry::set_thread_name("callbacks " + device_ + " level " + std::to_string(level_),
                               telemetry::TrackKind::callback, device_);
    std::unique_lock lock(mutex_);
    while (true) {
      wake_.wait(lock, [&] { return stopped_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopped, and every task before it ran
      std::shared_ptr<HostTask> task = std::move(queue_.front());
      queue_.pop_front();
      lock.unlock();
      run_task(task, this);
      task.reset();
      lock.lock();
      if (in_charge_ != std::this_thread::get_id()) return;  // timed out and replaced
    }
  }

  // Called with mutex_ held.
  void start_thread() {
    thread_ = std::thread([this] { loop(); });
    in_charge_ = thread_.get_id();
  }

  std::string device_;
  std::string label_;
  int level_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::shared_ptr<HostTask>> queue_;
  bool stopped_ = false;
  std::thread thread_;
  std::thread::id in_charge_;  // the thread that runs the queue (thread_ until it is stopped)
};

// Every receiver, and the accounting of tasks in flight and of the bytes they hold.
class Receivers {
 public:
  Receiver& receiver(OpenCLDevice& device, int level) {
    std::lock_guard lock(mutex_);
    auto& slot = receivers_[{&device, level}];
    if (!slot) slot = std::make_unique<Receiver>(device.name(), device.label(), level);
    return *slot;
  }

  // Counts a new task at `level` holding `bytes`.
  void reserve(std::size_t bytes, int level) {
    std::lock_guard lock(mutex_);
    queued_bytes_ += bytes;
    if (in_flight_.size() <= static_cast<std::size_t>(level)) in_flight_.resize(level + 1, 0);
    ++in_flight_[static_cast<std::size_t>(level)];
    record_levels();
  }

  void finished(std::size_t bytes, int level) {
    {
      std::lock_guard lock(mutex_);
      queued_bytes_ -= bytes;
      --in_flight_[static_cast<std::size_t>(level)];
      record_levels();
    }
    space_.notify_all();
    idle_.notify_all();
  }

  // Blocks while the pending tasks hold more than the limit.
  void wait_for_space() {
    std::unique_lock lock(mutex_);
    const std::size_t limit = callback_queue_limit();
    if (queued_bytes_ <= limit) return;
    log::debug(kComponent, "the callback queue holds " + std::to_string(queued_bytes_) +
                               " bytes (WEFT_CALLBACK_MAX_QUEUE_BYTES " + std::to_string(limit) +
                               "); waiting for callbacks to run");
    lock.unlock();
    // The pending tasks may wait for reads still held in a queue.
    for (OpenCLDevice* device : all_devices()) clFlush(device->queue());
    lock.lock();
    space_.wait(lock, [&] { return queued_bytes_ <= limit; });
  }

  std::size_t in_flight_from(int level) {
    std::lock_guard lock(mutex_);
    return count_from(level);
  }

  void wait_idle_from(int level) {
    std::unique_lock lock(mutex_);
    idle_.wait(lock, [&] { return count_from(level) == 0; });
  }

  void shut_down() {
    // Stopped outside the lock: a receiver finishing its last task takes it.
    std::vector<Receiver*> all;
    {
      std::lock_guard lock(mutex_);
      for (auto& [key, receiver] : receivers_) all.push_back(receiver.get());
    }
    for (Receiver* receiver : all) receiver->stop();
  }

 private:
  std::size_t count_from(int level) const {
    std::size_t count = 0;
    for (std::size_t l = static_cast<std::size_t>(std::max(level, 0)); l < in_flight_.size(); ++l)
      count += in_flight_[l];
    return count;
  }

  // The callback_queue_depth and callback_queue_bytes counters. Called with mutex_ held, so
  // the samples are queued in the order of the changes they show.
  void record_levels() const {
    if (!telemetry::enabled()) return;
    const std::int64_t now = telemetry::now_ns();
    telemetry::emit_counter("callback_queue_depth", "", now, static_cast<double>(count_from(0)));
    telemetry::emit_counter("callback_queue_bytes", "", now, static_cast<double>(queued_bytes_));
  }

  std::mutex mutex_;
  std::condition_variable space_, idle_;
  std::map<std::pair<OpenCLDevice*, int>, std::unique_ptr<Receiver>> receivers_;
  std::vector<std::size_t> in_flight_;  // per level
  std::size_t queued_bytes_ = 0;
};

Receivers& receivers() {
  // Never destroyed: exit handlers drain through it.
  static Receivers* instance = new Receivers();
  return *instance;
}

// Ordered steps in a chain: a task whose input token is the output token of a task still in
// flight is started by that task's finish directly, on the host. Through an event callback it
// would take one more thread hop per step (the driver may deliver callbacks on a thread of its
// own). Keyed by the tasks' `done` events, which are their output tokens' ready events.
class TaskChains {
 public:
  void add(const std::shared_ptr<HostTask>& task) {
    std::lock_guard lock(mutex_);
    by_event_[task->done.get()] = task;
  }
  void remove(const HostTask& task) {
    std::lock_guard lock(mutex_);
    by_event_.erase(task.done.get());
  }
  // Makes `task` a successor of the task whose output token becomes ready with `token`;
  // false when no such task is in flight.
  bool follow(cl_event token, const std::shared_ptr<HostTask>& task) {
    std::shared_ptr<HostTask> before;
    {
      std::lock_guard lock(mutex_);
      auto found = by_event_.find(token);
      if (found == by_event_.end()) return false;
      before = found->second.lock();
    }
    if (!before) return false;
    std::lock_guard lock(before->successors_mutex);
    if (before->finished) return false;
    before->successors.push_back(task);
    return true;
  }

 private:
  std::mutex mutex_;
  std::unordered_map<cl_event, std::weak_ptr<HostTask>> by_event_;
};

TaskChains& task_chains() {
  static TaskChains* instance = new TaskChains();  // used by exit handlers
  return *instance;
}

void arrive(const std::shared_ptr<HostTask>& task);

void finish(HostTask& task) {
  if (!task.failure && task.carry_from && task.token)
    if (std::exception_ptr earlier = task.carry_from->failure()) task.token->set_failure(earlier);
  task.carry_from.reset();
  if (task.failure) {
    if (task.token) task.token->set_failure(task.failure);
    try {
      std::rethrow_exception(task.failure);
    } catch (const std::exception& e) {
      log::debug(kComponent, std::string("a host step failed: ") + e.what() +
                                 " (raised at the next wait or effects barrier)");
    }
  }
  // Leaves the queue's accounting first: whoever waits on the done event (an effects barrier,
  // a read of the result) then sees the queue depth and bytes without this task.
  receivers().finished(task.bytes, task.level);
  clSetUserEventStatus(task.done.get(), CL_COMPLETE);
  std::vector<std::shared_ptr<HostTask>> successors;
  {
    std::lock_guard lock(task.successors_mutex);
    task.finished = true;
    successors = std::move(task.successors);
  }
  if (task.token) task_chains().remove(task);
  for (const std::shared_ptr<HostTask>& next : successors) arrive(next);
}

std::string shapes_of(const std::vector<TensorType>& types) {
  std::string text;
  for (const TensorType& t : types) text += (text.empty() ? "" : ", ") + type_to_string(t);
  return text;
}

// The callback's span, and an edge from each step whose token it waited for.
void record_task(const HostTask& task, std::int64_t start_ns, std::int64_t end_ns) {
  const HostTask::Trace& trace = *task.trace;
  const HostPlan& plan = task.plan;
  if (trace.token_in)
    for (telemetry::Id source : trace.token_in->trace_sources())
      telemetry::emit(telemetry::Edge{source, trace.id, plan.effect});
  telemetry::Span span;
  span.id = trace.id;
  span.parent = trace.dispatch;
  span.kind = telemetry::SpanKind::callback;
  span.track = telemetry::this_thread_track();
  span.name = plan.is_print ? "debug_print" : task.callback->api;
  span.effect = plan.effect;
  span.seq = trace.seq;
  span.start_ns = start_ns;
  span.end_ns = end_ns;
  std::string status = "ok";
  if (task.failure) {
    try {
      std::rethrow_exception(task.failure);
    } catch (const std::exception& e) {
      status = std::string("failed: ") + e.what();
    } catch (...) {
      status = "failed";
    }
  }
  span.args = {
      {"thread", trace.thread},
      {"ordered", plan.ordered ? "true" : "false"},
      {"device", task.device->name()},
      {"shapes", shapes_of(plan.args)},
      {"status", status},
      {"level", std::to_string(task.level)},
      {"receive_wait_ns",
       std::to_string(trace.runnable_ns ? std::max<std::int64_t>(0, start_ns - trace.runnable_ns)
                                        : 0)}};
  if (!plan.returns.empty()) span.args.emplace_back("returns", shapes_of(plan.returns));
  if (task.callback) span.args.emplace_back("origin", task.callback->origin);
  if (plan.is_print) span.args.emplace_back("format", plan.format);
  telemetry::emit(std::move(span));
}

// Whether this caller settles the task (sets its results or failure and finishes it): the
// thread that ran it, or the watchdog when it timed out first.
bool claim(HostTask& task) {
  return !task.settled.exchange(true);
}

// What the watchdog calls the task on stderr.
std::string describe_task(const HostTask& task) {
  if (!task.plan.is_print) return task.callback->describe();
  return "debug_print \"" + task.plan.format + "\"";
}

// Watches `task` while it runs; on a timeout, fails it and hands the receiver's queue to a
// new thread (the one running it is left to the callback).
CallbackWatch watch(const std::shared_ptr<HostTask>& task, Receiver* receiver) {
  return CallbackWatch(WatchedCallback{
      describe_task(*task), task->device->label(),
      [task, receiver, thread = std::this_thread::get_id()](const std::string& message,
                                                            const std::string& original) {
        if (!claim(*task)) return;  // it returned meanwhile
        task->failure = std::make_exception_ptr(CallbackException(message, original));
        if (receiver) receiver->replace_stuck_thread(thread);
        finish(*task);
      }});
}

void run_task(const std::shared_ptr<HostTask>& task_ptr, Receiver* receiver) {
  HostTask& task = *task_ptr;
  const std::int64_t start_ns = task.trace ? telemetry::now_ns() : 0;
  // Set by the arrivals before the task became runnable; the outcome is kept apart until the
  // task is claimed (a timeout may settle it first).
  std::exception_ptr failure = task.failure;
  std::vector<HostArray> results;
  if (!failure) {
    CallbackWatch watched = watch(task_ptr, receiver);
    try {
      if (task.plan.is_print) {
        std::vector<std::string> texts;
        for (const HostArray& a : task.args) texts.push_back(format_for_print(a));
        write_debug_print(apply_format(task.plan.format, texts));
      } else {
        results = invoke_host_callback(*task.callback, std::move(task.args),
                                       HostCallbackContext{task.device->name()}, task.plan.returns);
      }
    } catch (const CallbackException&) {
      failure = std::current_exception();
    } catch (const std::exception& e) {
      failure = std::make_exception_ptr(CallbackException(
          std::string("weft: a debug_print on ") + task.device->label() + " failed: " + e.what(),
          e.what()));
    }
  }
  task.args.clear();
  if (!claim(task)) {
    log::debug(kComponent, "the timed-out " + describe_task(task) + " on " + task.device->label() +
                               " returned; its results are dropped");
    return;
  }
  task.results = std::move(results);
  task.failure = std::move(failure);
  if (task.trace) {
    try {
      record_task(task, start_ns, telemetry::now_ns());
    } catch (...) {
      // Telemetry must never fail a callback.
    }
  }
  finish(task);
}

void arrive(const std::shared_ptr<HostTask>& task) {
  if (task->waiting.fetch_sub(1) != 1) return;
  if (task->trace) task->trace->runnable_ns = telemetry::now_ns();
  receivers().receiver(*task->device, task->level).submit(task);
}

struct Arrival {
  std::shared_ptr<HostTask> task;
  bool is_token = false;
};

std::mutex& failure_mutex() {
  static std::mutex* mutex = new std::mutex();
  return *mutex;
}

void CL_CALLBACK on_arrival(cl_event, cl_int status, void* data) {
  auto* arrival = static_cast<Arrival*>(data);
  std::shared_ptr<HostTask> task = std::move(arrival->task);
  const bool is_token = arrival->is_token;
  delete arrival;
  // A token only orders: a failed earlier step does not stop this one.
  if (status < 0 && !is_token) {
    std::lock_guard lock(failure_mutex());
    if (!task->failure)
      task->failure = std::make_exception_ptr(
          CallbackException("weft: an argument of a host step on " + task->device->label() +
                                " could not be computed (" + std::string(cl_error_name(status)) +
                                "); the callback did not run",
                            std::string(cl_error_name(status))));
  }
  arrive(task);
}

void wait_after(cl_event event, std::shared_ptr<HostTask> task, bool is_token,
                const std::string& label) {
  auto* arrival = new Arrival{std::move(task), is_token};
  if (cl_int err = clSetEventCallback(event, CL_COMPLETE, on_arrival, arrival)) {
    delete arrival;
    throw_cl_error(err, "clSetEventCallback", label);
  }
}

bool completed(cl_event event) {
  if (!event) return true;
  cl_int status = CL_COMPLETE;
  if (clGetEventInfo(event, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, nullptr) !=
      CL_SUCCESS)
    return false;
  return status == CL_COMPLETE || status < 0;
}

}  // namespace

bool inline_callbacks() {
  static const bool on = [] {
    const char* value = std::getenv("WEFT_CALLBACK_INLINE");
    return value && std::string_view(value) == "1";
  }();
  return on;
}

void wait_for_callback_queue_space() {
  if (!inside_callback()) receivers().wait_for_space();
}

void check_callback_nesting(const OpenCLDevice& device) {
  if (current_callback_level() < kMaxCallbackNesting) return;
  const std::string limit = std::to_string(kMaxCallbackNesting);
  throw CallbackNestingError(
      "weft: a dispatch to " + device.label() + " from inside " + limit +
          " nested callbacks (a callback calling a function whose callback calls one again, "
          "and so on) would nest its callbacks deeper than weft allows (kMaxCallbackNesting = " +
          limit +
          "; each level keeps a thread of its own). Recurse with a loop instead (while_loop, "
          "fori_loop, or a host loop around the calls), or stop the recursion earlier.",
      "callbacks nested deeper than " + limit);
}

int current_callback_level() {
  return t_running_level + 1;
}

bool inside_callback() {
  return t_running_level >= 0;
}

std::size_t callback_queue_limit() {
  static const std::size_t limit = [] {
    constexpr std::size_t kDefault = std::size_t{256} << 20;
    const char* value = std::getenv("WEFT_CALLBACK_MAX_QUEUE_BYTES");
    if (!value || !*value) return kDefault;
    if (std::optional<std::uint64_t> bytes = cache::parse_byte_size(value); bytes && *bytes > 0)
      return static_cast<std::size_t>(*bytes);
    log::warning(kComponent, std::string("WEFT_CALLBACK_MAX_QUEUE_BYTES=\"") + value +
                                 "\" is not a positive byte size (e.g. 64MiB); using 256MiB");
    return kDefault;
  }();
  return limit;
}

std::shared_ptr<HostTask> start_host_task(OpenCLDevice& device, const HostPlan& plan,
                                          std::shared_ptr<const HostCallback> callback,
                                          const std::vector<std::shared_ptr<OpenCLBuffer>>& args,
                                          const std::shared_ptr<OpenCLBuffer>& token_in, bool carry,
                                          int level,
                                          std::vector<std::shared_ptr<HostTask>>* inline_tasks,
                                          RunTelemetry* telemetry) {
  auto task = std::make_shared<HostTask>();
  if (telemetry) {
    task->trace = std::make_unique<HostTask::Trace>();
    task->trace->id = telemetry::next_id();
    task->trace->dispatch = telemetry->dispatch;
    task->trace->seq = telemetry->next_effect_seq();
    task->trace->thread = telemetry->thread;
    task->trace->token_in = token_in;
  }
  task->device = &device;
  task->plan = plan;
  task->callback = std::move(callback);
  task->level = level;
  if (carry) task->carry_from = token_in;
  for (const TensorType& t : plan.args) task->args.emplace_back(t.dtype, t.shape);
  task->bytes = kPendingCallOverheadBytes + plan.format.size();
  for (const HostArray& a : task->args) task->bytes += a.nbytes();
  for (const TensorType& t : plan.returns)
    task->bytes += static_cast<std::size_t>(num_elements(t.shape)) * dtype_size(t.dtype);
  receivers().reserve(task->bytes, level);

  cl_int status = CL_SUCCESS;
  task->done = ClEvent(clCreateUserEvent(device.context(), &status));
  if (status != CL_SUCCESS) {
    receivers().finished(task->bytes, level);
    throw_cl_error(status, "clCreateUserEvent", device.label());
  }
  if (plan.token_out) {
    task->token = device.make_token(task->done);
    if (task->trace) task->token->set_trace_sources({task->trace->id});
    if (!inline_tasks || !inline_callbacks()) task_chains().add(task);
  }

  const bool run_inline = inline_tasks && inline_callbacks();
  // One count for the setup itself, so the task cannot start before every wait is arranged.
  task->waiting = 1;
  std::vector<ClEvent> reads;
  try {
    for (std::size_t k = 0; k < args.size(); ++k) {
      HostArray& host = task->args[k];
      if (host.nbytes() == 0) continue;
      cl_event ready = args[k]->ready_event();
      cl_event read = nullptr;
      if (cl_int err =
              clEnqueueReadBuffer(device.queue(), args[k]->mem(), CL_FALSE, 0, host.nbytes(),
                                  host.raw(), ready ? 1 : 0, ready ? &ready : nullptr, &read))
        throw_cl_error(err, "clEnqueueReadBuffer (a callback argument)", device.label());
      ClEvent event(read);
      args[k]->add_reader(event);
      reads.push_back(event);
      if (!run_inline) {
        ++task->waiting;
        wait_after(read, task, false, device.label());
      }
    }
    cl_event token = token_in ? token_in->ready_event() : nullptr;
    if (!run_inline && !completed(token)) {
      ++task->waiting;
      if (!task_chains().follow(token, task)) wait_after(token, task, true, device.label());
    }
  } catch (...) {
    task->failure = std::current_exception();
    if (!run_inline)
      arrive(task);
    else if (claim(*task))
      finish(*task);
    throw;
  }
  if (run_inline) {
    task->token_in = token_in;
    task->reads = std::move(reads);
    inline_tasks->push_back(task);
  } else {
    arrive(task);
  }
  return task;
}

void run_inline_tasks(OpenCLDevice& device, std::vector<std::shared_ptr<HostTask>>& tasks) {
  if (tasks.empty()) return;
  clFlush(device.queue());
  for (const std::shared_ptr<HostTask>& task : tasks) {
    for (const ClEvent& read : task->reads) {
      cl_event e = read.get();
      if (cl_int err = clWaitForEvents(1, &e); err != CL_SUCCESS && !task->failure) {
        task->failure = std::make_exception_ptr(CallbackException(
            "weft: an argument of a host step on " + device.label() + " could not be computed (" +
                std::string(cl_error_name(err)) + "); the callback did not run",
            std::string(cl_error_name(err))));
      }
    }
    if (task->token_in && task->token_in->ready_event()) {
      cl_event e = task->token_in->ready_event();
      clWaitForEvents(1, &e);  // a failed token still orders
    }
    task->reads.clear();
    task->token_in.reset();
    if (task->trace) task->trace->runnable_ns = telemetry::now_ns();
    RunningLevel running(task->level);
    run_task(task, nullptr);
  }
  tasks.clear();
}

namespace {

struct Join {
  std::atomic<int> waiting{0};
  ClEvent user;
  std::vector<std::shared_ptr<OpenCLBuffer>> tokens;   // kept alive until the join completes
  std::vector<std::shared_ptr<OpenCLBuffer>> carried;  // whose failures the result inherits
  std::shared_ptr<OpenCLBuffer> result;
};

// The join's token stands for every step its inputs stand for (set before it is ready).
void join_trace_sources(const Join& join) {
  if (!telemetry::enabled()) return;
  std::vector<telemetry::Id> sources;
  for (const auto& token : join.tokens)
    for (telemetry::Id id : token->trace_sources())
      if (std::find(sources.begin(), sources.end(), id) == sources.end()) sources.push_back(id);
  join.result->set_trace_sources(std::move(sources));
}

void carry_failures(const Join& join) {
  for (const auto& token : join.carried) {
    if (std::exception_ptr failure = token->failure()) {
      join.result->set_failure(failure);
      return;
    }
  }
}

void CL_CALLBACK on_join_input(cl_event, cl_int, void* data) {
  auto* holder = static_cast<std::shared_ptr<Join>*>(data);
  std::shared_ptr<Join> join = std::move(*holder);
  delete holder;
  if (join->waiting.fetch_sub(1) != 1) return;
  carry_failures(*join);
  join_trace_sources(*join);
  clSetUserEventStatus(join->user.get(), CL_COMPLETE);
  join->carried.clear();
  join->tokens.clear();
}

// Completes join->user once every pending event has completed.
void complete_when_ready(const std::shared_ptr<Join>& join, const std::vector<cl_event>& pending,
                         const std::string& label) {
  join->waiting = static_cast<int>(pending.size());
  for (cl_event event : pending) {
    auto* holder = new std::shared_ptr<Join>(join);
    if (cl_int err = clSetEventCallback(event, CL_COMPLETE, on_join_input, holder)) {
      delete holder;
      // Counted as arrived, so the join still completes once the others have.
      on_join_input(nullptr, CL_COMPLETE, new std::shared_ptr<Join>(join));
      log::warning(kComponent, "clSetEventCallback failed (" + std::string(cl_error_name(err)) +
                                   ") on " + label + "; a token join may complete early");
    }
  }
}

std::vector<cl_event> pending_events(const std::vector<std::shared_ptr<OpenCLBuffer>>& tokens) {
  std::vector<cl_event> pending;
  for (const auto& token : tokens)
    if (!completed(token->ready_event())) pending.push_back(token->ready_event());
  return pending;
}

}  // namespace

std::shared_ptr<OpenCLBuffer> join_tokens(
    OpenCLDevice& device, const std::vector<std::shared_ptr<OpenCLBuffer>>& tokens,
    const std::vector<std::shared_ptr<OpenCLBuffer>>& carried) {
  const std::vector<cl_event> pending = pending_events(tokens);
  auto join = std::make_shared<Join>();
  join->tokens = tokens;
  join->carried = carried;
  if (pending.empty()) {
    join->result = device.make_token({});
    carry_failures(*join);
    join_trace_sources(*join);
    return join->result;
  }
  cl_int status = CL_SUCCESS;
  join->user = ClEvent(clCreateUserEvent(device.context(), &status));
  check_cl(status, "clCreateUserEvent", device.label());
  join->result = device.make_token(join->user);
  std::shared_ptr<OpenCLBuffer> result = join->result;
  complete_when_ready(join, pending, device.label());
  return result;
}

void forward_token(const std::shared_ptr<OpenCLBuffer>& from, ClEvent user_event,
                   std::shared_ptr<OpenCLBuffer> to) {
  auto join = std::make_shared<Join>();
  join->tokens = {from};
  join->carried = {from};
  join->user = std::move(user_event);
  join->result = std::move(to);
  const std::vector<cl_event> pending = pending_events(join->tokens);
  if (pending.empty()) {
    carry_failures(*join);
    join_trace_sources(*join);
    clSetUserEventStatus(join->user.get(), CL_COMPLETE);
    return;
  }
  complete_when_ready(join, pending, from->opencl_device().label());
}

std::size_t host_tasks_in_flight() {
  return receivers().in_flight_from(0);
}

void wait_for_host_tasks() {
  receivers().wait_idle_from(inside_callback() ? t_running_level + 1 : 0);
}

void shut_down_receivers() {
  receivers().shut_down();
  stop_callback_watchdog();
}

}  // namespace weft::opencl::detail
