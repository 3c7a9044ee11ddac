// The memory a process holds and its peak over a phase, for the tests and benchmarks that bound
// host memory (tests/runtime_memory_test.cpp, bench/bench_runtime_memory.cpp).
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <fstream>
#include <string>
#include <thread>

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define WEFT_MEASURES_LIVE_HEAP 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define WEFT_MEASURES_LIVE_HEAP 1
#endif
#endif

#ifdef WEFT_MEASURES_LIVE_HEAP
// The sanitizer runtimes' (GCC ships no header declaring it; clang's allocator_interface.h).
extern "C" std::size_t __sanitizer_get_current_allocated_bytes();
#endif

namespace weft::testing {

// The memory this process holds: its resident set (VmRSS), or -1 when /proc cannot tell. Under
// a sanitizer the resident set grows with allocation churn alone (ASan holds freed memory back
// in its quarantine), so there it is the heap's live bytes, which grow only with what is kept.
inline long long resident_bytes() {
#ifdef WEFT_MEASURES_LIVE_HEAP
  return static_cast<long long>(__sanitizer_get_current_allocated_bytes());
#else
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line))
    if (line.rfind("VmRSS:", 0) == 0) return std::stoll(line.substr(6)) * 1024;
  return -1;
#endif
}

// The highest resident set seen from construction to stop(), sampled every few milliseconds
// on a thread of its own: the peak of one phase, without what came before it.
class PeakResident {
 public:
  PeakResident() : peak_(resident_bytes()), sampler_([this] { sample(); }) {}
  ~PeakResident() { stop(); }
  PeakResident(const PeakResident&) = delete;
  PeakResident& operator=(const PeakResident&) = delete;

  long long stop() {
    if (sampler_.joinable()) {
      done_ = true;
      sampler_.join();
    }
    return peak_;
  }

 private:
  void sample() {
    while (!done_) {
      peak_ = std::max(peak_.load(), resident_bytes());
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    peak_ = std::max(peak_.load(), resident_bytes());
  }
  std::atomic<bool> done_{false};
  std::atomic<long long> peak_;
  std::thread sampler_;
};

}  // namespace weft::testing
