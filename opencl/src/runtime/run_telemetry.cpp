#include "runtime/run_telemetry.h"

#include <algorithm>
#include <exception>
#include <map>
#include <mutex>
#include <vector>

#include "weft/opencl/cl_handle.h"
#include "weft/opencl/device.h"
#include "weft/opencl/executable.h"

namespace weft::opencl::detail {

namespace {

thread_local std::int64_t t_dispatches = 0;

// Completed commands become spans here. The telemetry thread collects them before each delivery
// (it runs when a core is idle), so no run waits for a profile and no thread of its own wakes
// up between a dispatch and its kernel.
class CommandProfiler {
 public:
  struct Pending {
    OpenCLDevice* device = nullptr;
    ClEvent event;
    telemetry::Span span;
    std::int64_t enqueued_ns = 0;  // host time right after the enqueue returned
  };

  void add(Pending pending) {
    bool backlog = false;
    {
      std::lock_guard lock(mutex_);
      pending_.push_back(std::move(pending));
      backlog = pending_.size() >= collect_at_;
    }
    // The telemetry thread gets no CPU while the program keeps every core busy; then the
    // recording thread collects, so retained events stay bounded.
    if (backlog) collect();
  }

  // Emits every completed command; keeps the rest.
  void collect() {
    std::lock_guard collecting(collect_mutex_);
    std::vector<Pending> batch;
    {
      std::lock_guard lock(mutex_);
      batch.swap(pending_);
    }
    std::vector<Pending> waiting;
    std::vector<telemetry::Span> done;
    done.reserve(batch.size());
    for (Pending& p : batch) {
      if (!finish(p))
        waiting.push_back(std::move(p));
      else
        done.push_back(std::move(p.span));
    }
    batch.clear();  // releases the events before taking the lock below
    telemetry::emit(std::move(done));
    std::lock_guard lock(mutex_);
    pending_.insert(pending_.begin(), std::make_move_iterator(waiting.begin()),
                    std::make_move_iterator(waiting.end()));
    // Commands still running are not collected again until as many more have been added.
    collect_at_ = std::max(kBacklogLimit, 2 * pending_.size());
  }

  static CommandProfiler& instance() {
    static CommandProfiler* profiler = [] {
      auto* p = new CommandProfiler;  // never destroyed: exit handlers use it
      telemetry::add_collector([] { CommandProfiler::instance().collect(); });
      return p;
    }();
    return *profiler;
  }

 private:
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

  // Completes `p.span` once its command has finished: false while it is still running. The
  // profile is read first because that needs no lock in the driver; only a command without one
  // is asked for its status (still running, or failed).
  bool finish(Pending& p) {
    telemetry::Span& span = p.span;
    const cl_event e = p.event.get();
    cl_ulong queued = 0, submit = 0, start = 0, end = 0;
    const bool timed =
        clGetEventProfilingInfo(e, CL_PROFILING_COMMAND_END, sizeof end, &end, nullptr) ==
            CL_SUCCESS &&
        clGetEventProfilingInfo(e, CL_PROFILING_COMMAND_QUEUED, sizeof queued, &queued, nullptr) ==
            CL_SUCCESS &&
        clGetEventProfilingInfo(e, CL_PROFILING_COMMAND_SUBMIT, sizeof submit, &submit, nullptr) ==
            CL_SUCCESS &&
        clGetEventProfilingInfo(e, CL_PROFILING_COMMAND_START, sizeof start, &start, nullptr) ==
            CL_SUCCESS;
    cl_int status = CL_COMPLETE;
    if (!timed) {
      if (clGetEventInfo(e, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, nullptr) !=
          CL_SUCCESS)
        status = CL_INVALID_EVENT;
      if (status > CL_COMPLETE) return false;
    }
    span.track = queue_track(*p.device);
    if (timed && queued != 0 && start >= queued && end >= start) {
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
    return true;
  }

  std::mutex collect_mutex_;  // one collection at a time keeps each device's spans in order
  static constexpr std::size_t kBacklogLimit = 1 << 14;
  std::mutex mutex_;  // pending_, collect_at_
  std::vector<Pending> pending_;
  std::size_t collect_at_ = kBacklogLimit;
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
  if (!ran_on_.empty()) span.args.emplace_back("ran_on", ran_on_);
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

}  // namespace weft::opencl::detail
