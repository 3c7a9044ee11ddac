// Callbacks that do not return. A callback blocked for good would otherwise block every wait on
// its results, effects_barrier() and process exit without a word. The watchdog watches every
// running callback and print: one still running after WEFT_CALLBACK_WARN_AFTER (default 10 s)
// is named on stderr (what, where it was staged, device, how long); with WEFT_CALLBACK_TIMEOUT
// set, one still running after that long is timed out: its owner fails its step with a
// CallbackException, raised where the computation is waited for. A thread cannot be stopped
// from outside, so the callback's thread is abandoned: it runs on until the callback returns
// (its results are then dropped) or the process ends.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

namespace weft::opencl::detail {

struct WatchedCallback {
  std::string what;    // "io_callback at f.cpp:12 (main)", "debug_print \"x = {}\""
  std::string device;  // the device's label
  // Called once, on the watchdog's thread, when the callback outlives WEFT_CALLBACK_TIMEOUT:
  // fails the step with `message` (original_message: `original`) and abandons the thread.
  std::function<void(const std::string& message, const std::string& original)> on_timeout;
};

// Watches a callback while it is alive (scoped to the callback's run). Without a warning delay
// and a timeout (both turned off) it does nothing.
class CallbackWatch {
 public:
  explicit CallbackWatch(WatchedCallback callback);
  ~CallbackWatch();
  CallbackWatch(const CallbackWatch&) = delete;
  CallbackWatch& operator=(const CallbackWatch&) = delete;

 private:
  std::uint64_t id_ = 0;  // 0: not watched
};

// WEFT_CALLBACK_WARN_AFTER: after how long a running callback is named on stderr (default
// 10 s; "0" or "off": never). WEFT_CALLBACK_TIMEOUT: after how long it fails (default off).
// Both take "1.5s", "500ms", "2m", "1h" or plain seconds.
std::optional<std::chrono::milliseconds> callback_warn_after();
std::optional<std::chrono::milliseconds> callback_timeout();

// Ends the watchdog's thread (process exit, after the callbacks have been waited for).
void stop_callback_watchdog();

}  // namespace weft::opencl::detail
