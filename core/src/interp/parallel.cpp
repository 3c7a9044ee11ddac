#include "interp/parallel.h"

#include <algorithm>
#include <exception>
#include <mutex>
#include <system_error>
#include <thread>
#include <vector>

namespace weft::interp {

namespace {

// Starting and joining a thread costs tens of microseconds; a range below this many
// operations (a fifth of a millisecond of multiply-adds) is not worth one.
constexpr double kMinWorkPerThread = 1 << 20;
constexpr unsigned kMaxThreads = 16;

}  // namespace

void parallel_ranges(std::int64_t count, std::int64_t grain, double work,
                     const std::function<void(std::int64_t, std::int64_t)>& fn) {
  grain = std::max<std::int64_t>(grain, 1);
  const std::int64_t grains = (count + grain - 1) / grain;
  const unsigned cores = std::clamp(std::thread::hardware_concurrency(), 1u, kMaxThreads);
  const auto by_work = static_cast<std::int64_t>(work / kMinWorkPerThread);
  const std::int64_t threads = std::min<std::int64_t>({cores, by_work, grains});
  if (threads <= 1) {
    fn(0, count);
    return;
  }
  // Ranges of whole grains, as even as they divide.
  std::vector<std::int64_t> bounds(static_cast<std::size_t>(threads) + 1, count);
  for (std::int64_t t = 0; t < threads; ++t)
    bounds[static_cast<std::size_t>(t)] = std::min(count, grains * t / threads * grain);
  std::exception_ptr failure;
  std::mutex failure_mutex;
  auto run = [&](std::int64_t t) {
    try {
      fn(bounds[static_cast<std::size_t>(t)], bounds[static_cast<std::size_t>(t) + 1]);
    } catch (...) {
      std::lock_guard lock(failure_mutex);
      if (!failure) failure = std::current_exception();
    }
  };
  std::vector<std::thread> helpers;
  helpers.reserve(static_cast<std::size_t>(threads) - 1);
  std::int64_t started = 1;
  try {
    for (; started < threads; ++started) helpers.emplace_back(run, started);
  } catch (const std::system_error&) {
    // No thread to be had (a process at its limit): this thread takes the rest.
  }
  for (std::int64_t t = started; t < threads; ++t) run(t);
  run(0);
  for (std::thread& helper : helpers) helper.join();
  if (failure) std::rethrow_exception(failure);
}

}  // namespace weft::interp
