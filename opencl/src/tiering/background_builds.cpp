#include "tiering/background_builds.h"

#include <atomic>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>

#include "weft/opencl/executable.h"
#include "weft/telemetry/telemetry.h"

namespace weft::opencl::detail {

namespace {

class BackgroundBuilds {
 public:
  void schedule(std::weak_ptr<OpenCLExecutable> executable) {
    std::lock_guard lock(mutex_);
    if (stopped_) return;
    queue_.push_back(std::move(executable));
    if (!thread_.joinable()) thread_ = std::thread([this] { loop(); });
    wake_.notify_all();
  }

  void stop() {
    stopping_.store(true, std::memory_order_relaxed);
    std::unique_lock lock(mutex_);
    stopped_ = true;
    queue_.clear();
    wake_.notify_all();
    std::thread thread = std::move(thread_);
    lock.unlock();
    if (thread.joinable()) thread.join();
  }

  bool stopping() const { return stopping_.load(std::memory_order_relaxed); }

  void wait_idle() {
    std::unique_lock lock(mutex_);
    idle_.wait(lock, [&] { return queue_.empty() && !busy_; });
  }

 private:
  void loop() {
    telemetry::set_thread_name("background builds");
    std::unique_lock lock(mutex_);
    for (;;) {
      wake_.wait(lock, [&] { return stopped_ || !queue_.empty(); });
      if (stopped_) break;
      std::weak_ptr<OpenCLExecutable> next = std::move(queue_.front());
      queue_.pop_front();
      busy_ = true;
      lock.unlock();
      if (std::shared_ptr<OpenCLExecutable> executable = next.lock())
        executable->build_in_background();
      lock.lock();
      busy_ = false;
      idle_.notify_all();
    }
    busy_ = false;
    idle_.notify_all();
  }

  std::mutex mutex_;
  std::condition_variable wake_, idle_;
  std::deque<std::weak_ptr<OpenCLExecutable>> queue_;
  std::thread thread_;
  bool busy_ = false;
  bool stopped_ = false;
  std::atomic<bool> stopping_{false};
};

// Never destroyed: the exit drain stops it before static destructors run.
BackgroundBuilds& builds() {
  static auto* instance = new BackgroundBuilds();
  return *instance;
}

}  // namespace

void schedule_background_build(std::weak_ptr<OpenCLExecutable> executable) {
  builds().schedule(std::move(executable));
}

void stop_background_builds() {
  builds().stop();
}

void wait_for_background_builds() {
  builds().wait_idle();
}

bool background_builds_stopping() {
  return builds().stopping();
}

}  // namespace weft::opencl::detail
