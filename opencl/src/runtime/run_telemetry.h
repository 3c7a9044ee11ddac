// Telemetry from the device runtime: what a traced run needs to label its records, and the
// profiler that turns completed commands into spans timed by OpenCL profiling, mapped onto the
// host clock. Everything here runs only while telemetry::enabled().
#pragma once

#include <CL/cl.h>

#include <cstdint>
#include <string>
#include <unordered_map>

#include "weft/telemetry/telemetry.h"

namespace weft::opencl {

class OpenCLDevice;
class OpenCLExecutable;

namespace detail {

// One traced run: created by the dispatch, read by the block runner and its host steps.
struct RunTelemetry {
  telemetry::Id dispatch = 0;
  telemetry::Id program = 0;
  std::string device;  // "cpu:0"
  std::string thread;  // the dispatching thread's row
  // Program order of host steps: the dispatch's number among this thread's dispatches, then
  // the step's number within the run (seq = ordinal << 32 | step).
  std::int64_t dispatch_ordinal = 0;
  std::int64_t next_host_step = 0;
  const std::unordered_map<std::string, std::string>* fused_ops = nullptr;  // by kernel name
  std::string iteration;  // "3", or "3/1" in a nested loop, while a loop body runs

  std::int64_t next_effect_seq() { return (dispatch_ordinal << 32) | ++next_host_step; }
};

// Emits the dispatch span when it goes out of scope; holds the run's RunTelemetry.
class DispatchRecord {
 public:
  explicit DispatchRecord(OpenCLExecutable& executable);
  ~DispatchRecord();
  DispatchRecord(const DispatchRecord&) = delete;
  DispatchRecord& operator=(const DispatchRecord&) = delete;
  RunTelemetry& run() { return run_; }
  // A call tiered execution ran on the interpreter: "interpreter (build pending)" and the
  // like, the dispatch's "ran_on" argument (the kernels' calls have none).
  void set_ran_on(std::string ran_on) { ran_on_ = std::move(ran_on); }

 private:
  RunTelemetry run_;
  std::int64_t start_ns_;
  std::string function_, location_, ran_on_;
  int uncaught_;
};

// The row of `device`'s command queue.
telemetry::Track queue_track(const OpenCLDevice& device);

// Emits `span` (id, kind, name, parent and args filled in; the track becomes the device's
// queue) once `event`'s command has completed, with its profiling times: start and end on the
// host clock, and "queue_wait_ns" / "submit_wait_ns" args. Call right after enqueueing.
void record_command(OpenCLDevice& device, cl_event event, telemetry::Span span);

}  // namespace detail
}  // namespace weft::opencl
