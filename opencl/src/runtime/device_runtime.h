// The thread that drives runs whose steps need a value on the host: it reads a while loop's
// predicate or a cond's index when the device has computed it, then enqueues what follows.
// Callers never wait for it: their outputs become ready through events. One per device;
// runs in flight on it interleave, each resumed when its value arrives, so one long loop
// does not hold back another.
#pragma once

#include <CL/cl.h>

#include <condition_variable>
#include <coroutine>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

namespace weft::opencl {
class OpenCLBuffer;
}

namespace weft::opencl::detail {

class DeviceRuntime {
 public:
  DeviceRuntime(std::string device, std::string label)
      : device_(std::move(device)), label_(std::move(label)) {}
  DeviceRuntime(const DeviceRuntime&) = delete;
  DeviceRuntime& operator=(const DeviceRuntime&) = delete;
  ~DeviceRuntime();

  // Runs `work` on the runtime thread, after the work posted before it. Work must not block
  // on the device: it enqueues and, to wait for a value, pauses with resume_after.
  void post(std::function<void()> work);
  // Resumes `paused` on the runtime thread once `event` has completed or failed; `*status`
  // then holds the event's final status (CL_COMPLETE or a negative error). `source`, when
  // given, is the runtime output whose ready event `event` is: its failure resumes too.
  void resume_after(cl_event event, std::coroutine_handle<> paused, cl_int* status,
                    OpenCLBuffer* source = nullptr);

  // Counts runs in flight, for wait_idle.
  void run_started();
  void run_finished();
  // Blocks until no run is in flight (process exit drains through it).
  void wait_idle();
  // Ends the thread once idle (at process exit, so that no thread of ours is left running
  // while exit handlers and leak checkers walk the process). Work posted afterwards runs on the
  // posting thread.
  void shut_down();
  int runs_in_flight();

 private:
  void loop();

  std::string device_;  // "cpu:0", for the thread's telemetry row
  std::string label_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::condition_variable idle_;
  std::deque<std::function<void()>> ready_;
  int in_flight_ = 0;
  bool stopping_ = false;
  bool stopped_ = false;  // shut_down has joined the thread
  std::thread thread_;    // started by the first post
};

// `co_await EventPause{runtime, event}` pauses a run on the runtime thread until `event` has
// completed or failed; the result is its final status.
struct EventPause {
  DeviceRuntime* runtime;
  cl_event event;
  cl_int status = CL_COMPLETE;
  OpenCLBuffer* source = nullptr;  // the runtime output `event` readies, if it is one
  // An event that has already completed or failed needs no pause (and a callback registered
  // on an event that has already failed is not called by every driver).
  bool await_ready() noexcept;
  void await_suspend(std::coroutine_handle<> paused) {
    runtime->resume_after(event, paused, &status, source);
  }
  cl_int await_resume() const noexcept { return status; }
};

}  // namespace weft::opencl::detail
