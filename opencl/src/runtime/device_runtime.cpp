#include "runtime/device_runtime.h"

#include "weft/log.h"
#include "weft/opencl/cl_error.h"
#include "weft/telemetry/telemetry.h"

namespace weft::opencl::detail {

namespace {

struct Resumption {
  DeviceRuntime* runtime;
  std::coroutine_handle<> paused;
  cl_int* status;
};

// Called by the driver on one of its threads: only hands the coroutine over.
void CL_CALLBACK on_event_done(cl_event, cl_int status, void* user_data) {
  auto* resumption = static_cast<Resumption*>(user_data);
  *resumption->status = status;
  std::coroutine_handle<> paused = resumption->paused;
  DeviceRuntime* runtime = resumption->runtime;
  delete resumption;
  runtime->post([paused] { paused.resume(); });
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

void DeviceRuntime::resume_after(cl_event event, std::coroutine_handle<> paused, cl_int* status) {
  auto* resumption = new Resumption{this, paused, status};
  if (cl_int err = clSetEventCallback(event, CL_COMPLETE, on_event_done, resumption)) {
    delete resumption;
    throw_cl_error(err, "clSetEventCallback", label_);
  }
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
