// A level kept by the code that changes it (bytes of device memory in use, a pool's size),
// recorded as a counter sample on each change while telemetry is on. The level is counted
// whether or not anything records, so a recording that starts late still shows true values;
// off, a change costs one atomic add and the relaxed load of telemetry::enabled().
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <utility>

#include "weft/telemetry/telemetry.h"

namespace weft::telemetry {

namespace detail {
// Emits `level` as it is when the sample is queued (read under the queue's lock): samples of
// one gauge are queued in the order their values were read, so the last one is the level
// after the last change, whichever thread changed it.
void emit_level(const std::string& name, const std::string& device,
                const std::atomic<std::int64_t>& level);
}  // namespace detail

class CounterGauge {
 public:
  CounterGauge(std::string name, std::string device)
      : name_(std::move(name)), device_(std::move(device)) {}
  CounterGauge(const CounterGauge&) = delete;
  CounterGauge& operator=(const CounterGauge&) = delete;

  void add(std::int64_t delta) {
    level_.fetch_add(delta, std::memory_order_relaxed);
    if (enabled()) detail::emit_level(name_, device_, level_);
  }
  std::int64_t value() const { return level_.load(std::memory_order_relaxed); }

 private:
  const std::string name_;
  const std::string device_;
  std::atomic<std::int64_t> level_{0};
};

}  // namespace weft::telemetry
