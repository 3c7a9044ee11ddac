// Host steps at run time: a host step's arguments are read into host memory without blocking
// anyone; once the reads and the step's input token have completed, a receiver thread of the
// device runs the print or callback, in the order steps become ready, then completes the
// step's `done` user event (the ready event of its output token). No queued command ever waits
// on such an event: tokens are waited for on the host only, and a block whose kernels need a
// callback's results runs on the device runtime's thread, which enqueues them once the results
// are on the host (see BlockRunner::run_host).
//
// Receivers come in levels: a callback that itself dispatches work with host steps (a jitted
// function, an eager op) sends them to the next level's receiver, so it can wait for them
// without waiting for itself.
#pragma once

#include <CL/cl.h>

#include <atomic>
#include <cstddef>
#include <exception>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "weft/host_array.h"
#include "weft/ir/host_callback.h"
#include "weft/opencl/buffer.h"
#include "weft/opencl/cl_handle.h"
#include "weft/opencl/program_plan.h"
#include "weft/telemetry/telemetry.h"

namespace weft::opencl {

class OpenCLDevice;

namespace detail {

struct RunTelemetry;

struct HostTask {
  OpenCLDevice* device = nullptr;
  HostPlan plan;
  std::shared_ptr<const HostCallback> callback;  // host_call
  int level = 0;                                 // the receiver level it runs at
  std::vector<HostArray> args;                   // filled by the reads
  std::vector<HostArray> results;                // filled by the callback
  ClEvent done;                                  // user event: the host has run it (or failed)
  std::shared_ptr<OpenCLBuffer> token;           // its output token, when the plan has one
  std::exception_ptr failure;                    // set before `done` completes
  std::atomic<bool> settled{false};              // results or failure set (see run_task)
  std::size_t bytes = 0;                         // reserved against the queue limit
  std::atomic<int> waiting{0};                   // reads and the input token still pending
  // Inline tasks only: what run_inline_tasks waits for.
  std::vector<ClEvent> reads;
  std::shared_ptr<OpenCLBuffer> token_in;
  // The input token whose failure the output token inherits (see start_host_task).
  std::shared_ptr<OpenCLBuffer> carry_from;
  // Tasks whose input token is this task's output token: started by this task's finish.
  std::mutex successors_mutex;
  bool finished = false;
  std::vector<std::shared_ptr<HostTask>> successors;
  // Telemetry, while recording: the callback span's id and labels, and the input token whose
  // sources become its edges (read once the token is ready).
  struct Trace {
    telemetry::Id id = 0;
    telemetry::Id dispatch = 0;
    std::int64_t seq = -1;
    std::string thread;
    std::int64_t runnable_ns = 0;
    std::shared_ptr<OpenCLBuffer> token_in;
  };
  std::unique_ptr<Trace> trace;
};

// The receiver level of work dispatched from this thread: 0, or one more than the level of the
// callback this thread is running.
int current_callback_level();
// Whether this thread is running a callback (a receiver thread, or an inline callback).
bool inside_callback();

// Starts a host step on `device`: allocates its host arrays and output token, enqueues the
// reads of `args` (after their writers) and arranges for the task to run once they and
// `token_in` (may be null) have completed; with `carry`, a failure recorded on `token_in`
// becomes its output token's too (so a dispatch's output token reports every failed step). The
// device's queue is not flushed. With WEFT_CALLBACK_INLINE=1 and `inline_tasks` (the dispatching
// thread, which runs no callback while it holds the executable's locks: the callback may dispatch
// the same function), the task is appended there instead, for run_inline_tasks once the locks are
// released.
std::shared_ptr<HostTask> start_host_task(OpenCLDevice& device, const HostPlan& plan,
                                          std::shared_ptr<const HostCallback> callback,
                                          const std::vector<std::shared_ptr<OpenCLBuffer>>& args,
                                          const std::shared_ptr<OpenCLBuffer>& token_in, bool carry,
                                          int level,
                                          std::vector<std::shared_ptr<HostTask>>* inline_tasks,
                                          RunTelemetry* telemetry = nullptr);

// Runs the tasks start_host_task deferred, in order, on this thread: each once its arguments
// and input token are ready (flushing `device`'s queue first).
void run_inline_tasks(OpenCLDevice& device, std::vector<std::shared_ptr<HostTask>>& tasks);

// Backpressure (WEFT_CALLBACK_MAX_QUEUE_BYTES): blocks while the callbacks pending hold more
// host memory than the limit. Called by a dispatching thread before it takes any lock, and
// never from inside a callback (the callbacks queued behind it could not run).
void wait_for_callback_queue_space();

// Refuses (CallbackNestingError) a dispatch to `device` whose callbacks would run more than
// kMaxCallbackNesting deep. Called before the backpressure wait, with no lock held.
void check_callback_nesting(const OpenCLDevice& device);

// Whether callbacks run inline on the dispatching thread (WEFT_CALLBACK_INLINE=1).
bool inline_callbacks();

// A token on `device` ready once every one of `tokens` is (any devices); failures of
// `carried` (some of `tokens`) carry over. No token: ready now.
std::shared_ptr<OpenCLBuffer> join_tokens(
    OpenCLDevice& device, const std::vector<std::shared_ptr<OpenCLBuffer>>& tokens,
    const std::vector<std::shared_ptr<OpenCLBuffer>>& carried);

// Completes `user_event` (the ready event of `to`) once `from` is ready, carrying its failure
// over: how a run on the runtime thread hands its output token to the one it returned early.
void forward_token(const std::shared_ptr<OpenCLBuffer>& from, ClEvent user_event,
                   std::shared_ptr<OpenCLBuffer> to);

// Host tasks started and not yet finished, process-wide.
std::size_t host_tasks_in_flight();
// Blocks until no host task is in flight (effects barriers, process exit). From inside a
// callback it waits only for tasks of deeper levels (it cannot wait for itself).
void wait_for_host_tasks();
// Ends the receiver threads once idle (process exit); later tasks run on the thread that
// completes them.
void shut_down_receivers();

// WEFT_CALLBACK_MAX_QUEUE_BYTES: the host memory pending callbacks may hold (default 256 MiB).
std::size_t callback_queue_limit();

}  // namespace detail
}  // namespace weft::opencl
