#include "runtime/callback_watchdog.h"

#include <algorithm>
#include <cctype>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <thread>
#include <tuple>
#include <vector>

#include "runtime/host_tasks.h"
#include "weft/log.h"

namespace weft::opencl::detail {

namespace {

constexpr std::string_view kComponent = "callback";

using Clock = std::chrono::steady_clock;

// "1.5s", "500ms", "2m", "1h", "10" (seconds); "0" and "off" turn the setting off (nullopt).
// Anything else: nullopt.
std::optional<std::optional<std::chrono::milliseconds>> parse_delay(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (text == "off") return std::optional<std::chrono::milliseconds>();
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  if (end == text.c_str() || !(value >= 0) || value > 1e9) return std::nullopt;
  const std::string unit(end);
  double seconds_per_unit = 0;
  if (unit.empty() || unit == "s")
    seconds_per_unit = 1;
  else if (unit == "ms")
    seconds_per_unit = 1e-3;
  else if (unit == "m")
    seconds_per_unit = 60;
  else if (unit == "h")
    seconds_per_unit = 3600;
  else
    return std::nullopt;
  const auto ms = std::chrono::milliseconds(static_cast<long long>(value * seconds_per_unit * 1e3));
  if (ms.count() == 0) return std::optional<std::chrono::milliseconds>();
  return std::optional<std::chrono::milliseconds>(ms);
}

std::optional<std::chrono::milliseconds> delay_from_environment(
    const char* variable, std::optional<std::chrono::milliseconds> fallback,
    const char* fallback_text) {
  const char* value = std::getenv(variable);
  if (!value || !*value) return fallback;
  if (auto parsed = parse_delay(value)) return *parsed;
  log::warning(kComponent, std::string(variable) + "=\"" + value +
                               "\" is not a delay (e.g. 1.5s, 500ms, 2m, or off); using " +
                               fallback_text);
  return fallback;
}

std::string seconds_text(Clock::duration d) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f s", std::chrono::duration<double>(d).count());
  return text;
}

class Watchdog {
 public:
  std::uint64_t watch(WatchedCallback callback) {
    std::lock_guard lock(mutex_);
    if (stopped_) return 0;
    const std::uint64_t id = ++next_id_;
    const bool was_idle = entries_.empty();
    entries_.emplace(id, Entry{std::move(callback), Clock::now()});
    // Entries all get the same delays, so a new one is never due before the ones already
    // watched: the thread needs waking only when it sleeps with nothing to watch.
    if (!thread_.joinable())
      thread_ = std::thread([this] { loop(); });
    else if (was_idle)
      wake_.notify_one();
    return id;
  }

  void unwatch(std::uint64_t id) {
    std::lock_guard lock(mutex_);
    entries_.erase(id);
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
  }

 private:
  struct Entry {
    WatchedCallback callback;
    Clock::time_point start;
    bool warned = false;
  };
  struct Due {
    std::string what, device;
    Clock::duration elapsed;
    std::function<void(const std::string&, const std::string&)> on_timeout;  // null: a warning
  };

  void loop() {
    std::unique_lock lock(mutex_);
    while (!stopped_) {
      const Clock::time_point now = Clock::now();
      std::optional<Clock::time_point> next;
      auto wake_at = [&](Clock::time_point t) { next = next ? std::min(*next, t) : t; };
      std::vector<Due> due;
      for (auto it = entries_.begin(); it != entries_.end();) {
        Entry& entry = it->second;
        const Clock::duration elapsed = now - entry.start;
        if (warn_after_ && !entry.warned) {
          if (elapsed >= *warn_after_) {
            entry.warned = true;
            due.push_back({entry.callback.what, entry.callback.device, elapsed, nullptr});
          } else {
            wake_at(entry.start + *warn_after_);
          }
        }
        if (timeout_) {
          if (elapsed >= *timeout_) {
            due.push_back({entry.callback.what, entry.callback.device, elapsed,
                           std::move(entry.callback.on_timeout)});
            it = entries_.erase(it);
            continue;
          }
          wake_at(entry.start + *timeout_);
        }
        ++it;
      }
      if (due.empty()) {
        if (next)
          wake_.wait_until(lock, *next);
        else
          wake_.wait(lock);
        continue;
      }
      // Outside the lock: failing a step takes the runtime's locks, and callbacks finishing
      // meanwhile must not wait for it.
      lock.unlock();
      for (const Due& d : due) d.on_timeout ? time_out(d) : warn(d);
      lock.lock();
    }
  }

  void warn(const Due& d) const {
    std::string advice =
        timeout_ ? "WEFT_CALLBACK_TIMEOUT fails it after " + seconds_text(*timeout_) + "."
                 : "A callback cannot be interrupted: make it return, or set "
                   "WEFT_CALLBACK_TIMEOUT (e.g. 60s) to fail it after that long.";
    log::warning(kComponent,
                 "the " + d.what + " on " + d.device + " has been running for " +
                     seconds_text(d.elapsed) +
                     " without returning; waits for its results, effects_barrier() and process "
                     "exit wait for it (" +
                     std::to_string(host_tasks_in_flight()) +
                     " callbacks and prints pending or running in all). " + advice);
  }

  void time_out(const Due& d) const {
    const std::string original = "did not return within " + seconds_text(*timeout_) +
                                 " (WEFT_CALLBACK_TIMEOUT); it had run " + seconds_text(d.elapsed);
    const std::string message =
        "weft: the " + d.what + " on " + d.device + " " + original +
        ", so its step failed. A thread cannot be stopped from outside: the callback's thread is "
        "abandoned and runs on until the callback returns (its results are dropped) or the "
        "process ends. Make the callback return, or raise WEFT_CALLBACK_TIMEOUT.";
    log::warning(kComponent, message.substr(std::string_view("weft: ").size()));
    d.on_timeout(message, original);
  }

  const std::optional<std::chrono::milliseconds> warn_after_ = callback_warn_after();
  const std::optional<std::chrono::milliseconds> timeout_ = callback_timeout();
  std::mutex mutex_;
  std::condition_variable wake_;
  std::map<std::uint64_t, Entry> entries_;
  std::uint64_t next_id_ = 0;
  bool stopped_ = false;
  std::thread thread_;  // started by the first watch
};

Watchdog& watchdog() {
  static Watchdog* instance = new Watchdog();  // used by exit handlers
  return *instance;
}

bool watching() {
  static const bool on = callback_warn_after() || callback_timeout();
  return on;
}

}  // namespace

std::optional<std::chrono::milliseconds> callback_warn_after() {
  static const std::optional<std::chrono::milliseconds> delay =
      delay_from_environment("WEFT_CALLBACK_WARN_AFTER", std::chrono::seconds(10), "10s");
  return delay;
}

std::optional<std::chrono::milliseconds> callback_timeout() {
  static const std::optional<std::chrono::milliseconds> delay =
      delay_from_environment("WEFT_CALLBACK_TIMEOUT", std::nullopt, "no timeout");
  return delay;
}

CallbackWatch::CallbackWatch(WatchedCallback callback) {
  if (watching()) id_ = watchdog().watch(std::move(callback));
}

CallbackWatch::~CallbackWatch() {
  if (id_) watchdog().unwatch(id_);
}

void stop_callback_watchdog() {
  if (watching()) watchdog().stop();
}

}  // namespace weft::opencl::detail
