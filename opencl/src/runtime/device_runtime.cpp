#include "runtime/device_runtime.h"

#include <atomic>
#include <memory>
#include <mutex>

#include "weft/log.h"
#include "weft/opencl/buffer.h"
#include "weft/opencl/cl_error.h"
#include "weft/telemetry/telemetry.h"

namespace weft::opencl::detail {

namespace {

// One paused run waiting for an event. Several parties may resume it: the driver's callback,
// resume_after itself when the event has already finished by the time the callback is
// registered, and the source buffer's failure (a driver need not call a callback of a user
// event set to an error). The first claim resumes.
struct Resumption {
  Resumption(DeviceRuntime* r, std::coroutine_handle<> p, cl_int* s)
      : runtime(r), paused(p), status(s) {}
  DeviceRuntime* runtime;
  std::coroutine_handle<> paused;
  cl_int* status;
  std::atomic<bool> claimed{false};

  void resume(cl_int final_status) {
    if (claimed.exchange(true)) return;
    *status = final_status;
    std::coroutine_handle<> run = paused;
    runtime->post([run] { run.resume(); });
  }
};

// What each registered callback receives, kept here until the callback comes: a driver may
// never call back for a user event set to an error (PoCL does not), and such a holder must
// stay reachable rather than leak. A handful of bytes per failed wait, for the process's life.
// An intrusive list: linking and unlinking allocate nothing and hash nothing on this per-wait
// path.
struct Holder {
  std::shared_ptr<Resumption> resumption;
  Holder* prev = nullptr;
  Holder* next = nullptr;
};

std::mutex holders_mutex;
Holder* pending_holders = nullptr;  // the list's head

Holder* hold(std::shared_ptr<Resumption> resumption) {
  auto* holder = new Holder{std::move(resumption)};
  std::lock_guard lock(holders_mutex);
  holder->next = pending_holders;
  if (pending_holders) pending_holders->prev = holder;
  pending_holders = holder;
  return holder;
}

void release(Holder* holder) {
  {
    std::lock_guard lock(holders_mutex);
    if (holder->prev)
      holder->prev->next = holder->next;
    else
      pending_holders = holder->next;
    if (holder->next) holder->next->prev = holder->prev;
  }
  delete holder;
}

// Called by the driver on one of its threads: only hands the coroutine over.
void CL_CALLBACK on_event_done(cl_event, cl_int status, void* user_data) {
  auto* holder = static_cast<Holder*>(user_data);
  holder->resumption->resume(status);
  release(holder);
}

}  // namespace

DeviceRuntime::~DeviceRuntime() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void DeviceRuntime::post(std::function<void()> work) {
  {
    std::unique_lock lock(mutex_);
    if (stopped_) {
      lock.unlock();
      work();
      return;
    }
    ready_.push_back(std::move(work));
    if (!thread_.joinable()) thread_ = std::thread([this] { loop(); });
  }
  wake_.notify_one();
}

bool EventPause::await_ready() noexcept {
  if (!event) return true;  // nothing to wait for: status stays CL_COMPLETE
  if (source && source->failure()) {
    status = CL_INVALID_OPERATION;
    return true;
  }
  cl_int now = CL_QUEUED;
  if (clGetEventInfo(event, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof now, &now, nullptr) !=
      CL_SUCCESS)
    return false;
  if (now > CL_COMPLETE) return false;
  status = now;
  return true;
}

void DeviceRuntime::resume_after(cl_event event, std::coroutine_handle<> paused, cl_int* status,
                                 OpenCLBuffer* source) {
  auto resumption = std::make_shared<Resumption>(this, paused, status);
  auto* holder = hold(resumption);
  if (cl_int err = clSetEventCallback(event, CL_COMPLETE, on_event_done, holder)) {
    release(holder);
    throw_cl_error(err, "clSetEventCallback", label_);
  }
  if (source) source->on_failure([resumption] { resumption->resume(CL_INVALID_OPERATION); });
  // The event may have finished (failed, above all) between the caller's check and the
  // registration; then the callback may never come.
  cl_int now = CL_QUEUED;
  if (clGetEventInfo(event, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof now, &now, nullptr) ==
          CL_SUCCESS &&
      now <= CL_COMPLETE)
    resumption->resume(now);
}

void DeviceRuntime::run_started() {
  std::lock_guard lock(mutex_);
  ++in_flight_;
}

void DeviceRuntime::run_finished() {
  {
    std::lock_guard lock(mutex_);
    --in_flight_;
  }
  idle_.notify_all();
}

void DeviceRuntime::wait_idle() {
  std::unique_lock lock(mutex_);
  idle_.wait(lock, [&] { return in_flight_ == 0; });
}

void DeviceRuntime::shut_down() {
  std::thread thread;
  {
    std::unique_lock lock(mutex_);
    idle_.wait(lock, [&] { return in_flight_ == 0; });
    stopping_ = true;
    stopped_ = true;
    thread = std::move(thread_);
  }
  wake_.notify_all();
  if (thread.joinable()) thread.join();
}

int DeviceRuntime::runs_in_flight() {
  std::lock_guard lock(mutex_);
  return in_flight_;
}

void DeviceRuntime::loop() {
  telemetry::set_thread_name("runtime " + device_, telemetry::TrackKind::runtime, device_);
  std::unique_lock lock(mutex_);
  while (true) {
    wake_.wait(lock, [&] { return stopping_ || !ready_.empty(); });
    if (ready_.empty()) return;  // stopping
    std::function<void()> work = std::move(ready_.front());
    ready_.pop_front();
    lock.unlock();
    try {
      work();
    } catch (const std::exception& e) {
      // Runs catch their own errors; this is a last resort that keeps the thread alive.
      log::warning("runtime", label_ + ": " + e.what());
    }
    lock.lock();
  }
}

}  // namespace weft::opencl::detail
