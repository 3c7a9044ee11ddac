#include "runtime/run_telemetry.h"

#include <algorithm>
#include <condition_variable>
#include <exception>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

#include "weft/opencl/cl_handle.h"
#include "weft/opencl/device.h"
#include "weft/opencl/executable.h"

namespace weft::opencl::detail {

namespace {

using namespace std::chrono_literals;

thread_local std::int64_t t_dispatches = 0;

// Completed commands become spans here, on a thread of its own, so no run waits for a profile.
class CommandProfiler {
 public:
  struct Pending {
    OpenCLDevice* device = nullptr;
    ClEvent event;
    telemetry::Span span;
    std::int64_t enqueued_ns = 0;  // host time right after the enqueue returned
  };

  void add(Pending pending) {
    std::lock_guard lock(mutex_);
    pending_.push_back(std::move(pending));
    if (!thread_.joinable() && !stopped_) thread_ = std::thread([this] { loop(); });
    if (pending_.size() == 1) wake_.notify_one();
  }

  // Emits every completed command; keeps the rest.
  void collect() {
    std::vector<Pending> batch;
    {
      std::lock_guard lock(mutex_);
      batch.swap(pending_);
    }
    std::vector<Pending> waiting;
    for (Pending& p : batch) {
      cl_int status = CL_COMPLETE;
      clGetEventInfo(p.event.get(), CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status,
                     nullptr);
      if (status > CL_COMPLETE) {
        waiting.push_back(std::move(p));
        continue;
      }
      emit(p, status);
    }
    std::lock_guard lock(mutex_);
    pending_.insert(pending_.begin(), std::make_move_iterator(waiting.begin()),
                    std::make_move_iterator(waiting.end()));
  }

  void stop() {
    std::thread thread;
    {
      std::lock_guard lock(mutex_);
      stopped_ = true;
      thread = std::move(thread_);
    }
    wake_.notify_all();
    if (thread.joinable()) thread.join();
    collect();
  }

  static CommandProfiler& instance() {
    static CommandProfiler* profiler = [] {
      auto* p = new CommandProfiler;  // never destroyed: exit handlers use it
      telemetry::add_flush_hook([] { CommandProfiler::instance().collect(); });
      return p;
    }();
    return *profiler;
  }

 private:
  void loop() {
    std::unique_lock lock(mutex_);
    while (!stopped_) {
      wake_.wait(lock, [&] { return stopped_ || !pending_.empty(); });
      if (stopped_) break;
      lock.unlock();
      collect();
      std::this_thread::sleep_for(2ms);
      lock.lock();
    }
  }

  // Device timestamps onto the host clock: the offset is the smallest "host time after the
  // enqueue returned minus the device's queued time" seen, which approaches the true offset
  // from above (the command was queued before the enqueue returned).
  std::int64_t to_host(OpenCLDevice* device, std::int64_t enqueued_ns, cl_ulong queued) {
    const std::int64_t candidate = enqueued_ns - static_cast<std::int64_t>(queued);
    std::lock_guard lock(offset_mutex_);
    auto [it, fresh] = offsets_.emplace(device, candidate);
    if (!fresh) it->second = std::min(it->second, candidate);
    return it->second;
  }

  void emit(Pending& p, cl_int status) {
    telemetry::Span& span = p.span;
    span.track = queue_track(*p.device);
    cl_ulong queued = 0, submit = 0, start = 0, end = 0;
    const cl_event e = p.event.get();
    const bool timed =
        status == CL_COMPLETE &&
        clGetEventProfilingInfo(e, CL_PROFILING_COMMAND_QUEUED, sizeof queued, &queued, nullptr) ==
            CL_SUCCESS &&
        clGetEventProfilingInfo(e, CL_PROFILING_COMMAND_SUBMIT, sizeof submit, &submit, nullptr) ==
            CL_SUCCESS &&
        clGetEventProfilingInfo(e, CL_PROFILING_COMMAND_START, sizeof start, &start, nullptr) ==
            CL_SUCCESS &&
        clGetEventProfilingInfo(e, CL_PROFILING_COMMAND_END, sizeof end, &end, nullptr) ==
            CL_SUCCESS &&
        queued != 0 && start >= queued && end >= start;
    if (timed) {
      const std::int64_t offset = to_host(p.device, p.enqueued_ns, queued);
      span.start_ns = static_cast<std::int64_t>(start) + offset;
      span.end_ns = static_cast<std::int64_t>(end) + offset;
      span.args.emplace_back("queue_wait_ns", std::to_string(start - queued));
      span.args.emplace_back("submit_wait_ns",
                             std::to_string(start >= submit ? start - submit : 0));
    } else {
      // No profile (a failed command): a mark where it was enqueued.
      span.start_ns = span.end_ns = p.enqueued_ns;
      span.args.emplace_back("status", status == CL_COMPLETE
                                           ? "no profiling information"
                                           : "failed (" + std::to_string(status) + ")");
    }
    telemetry::emit(std::move(span));
  }

  std::mutex mutex_;
  std::condition_variable wake_;
  std::vector<Pending> pending_;
  std::thread thread_;
  bool stopped_ = false;
  std::mutex offset_mutex_;
  std::map<OpenCLDevice*, std::int64_t> offsets_;
};

}  // namespace

DispatchRecord::DispatchRecord(OpenCLExecutable& executable)
    : start_ns_(telemetry::now_ns()), uncaught_(std::uncaught_exceptions()) {
  const OpenCLExecutable::TelemetryProgram& program = executable.telemetry_program();
  run_.dispatch = telemetry::next_id();
  run_.program = program.id;
  run_.fused_ops = &program.fused_ops;
  run_.device = executable.device().name();
  run_.thread = telemetry::this_thread_track().name;
  run_.dispatch_ordinal = ++t_dispatches;
  if (const telemetry::CallSite* site = telemetry::current_call_site()) {
    function_ = site->function;
    location_ = site->location;
  } else {
    function_ = program.function;
  }
}

DispatchRecord::~DispatchRecord() {
  telemetry::Span span;
  span.id = run_.dispatch;
  span.kind = telemetry::SpanKind::dispatch;
  span.track = telemetry::this_thread_track();
  span.name = function_;
  span.start_ns = start_ns_;
  span.end_ns = telemetry::now_ns();
  span.args = {{"device", run_.device}, {"program", std::to_string(run_.program)}};
  if (!location_.empty()) span.args.emplace_back("location", location_);
  if (std::uncaught_exceptions() > uncaught_) span.args.emplace_back("status", "failed");
  try {
    telemetry::emit(std::move(span));
  } catch (...) {
    // A destructor must not throw; losing one record is acceptable.
  }
}

telemetry::Track queue_track(const OpenCLDevice& device) {
  return {telemetry::TrackKind::queue, device.name() + " queue", device.name()};
}

void record_command(OpenCLDevice& device, cl_event event, telemetry::Span span) {
  if (!event) return;
  CommandProfiler::Pending pending;
  pending.device = &device;
  pending.event = ClEvent::retain(event);
  pending.span = std::move(span);
  pending.enqueued_ns = telemetry::now_ns();
  CommandProfiler::instance().add(std::move(pending));
}

void stop_command_profiler() {
  CommandProfiler::instance().stop();
}

}  // namespace weft::opencl::detail
