#include "counter_series.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <string_view>
#include <tuple>

namespace weft::monitor {

namespace {

constexpr std::array<std::string_view, 5> kKnownCounters = {
    "device_memory_bytes", "buffer_pool_bytes", "callback_queue_depth", "callback_queue_bytes",
    "cache_hit_rate"};

std::size_t known_rank(std::string_view name) {
  const auto found = std::find(kKnownCounters.begin(), kKnownCounters.end(), name);
  return static_cast<std::size_t>(found - kKnownCounters.begin());
}

}  // namespace

std::string CounterSeries::label() const {
  return device_.empty() ? name_ : device_ + " " + name_;
}

void CounterSeries::add(std::int64_t time_ns, double value) {
  peak_ = std::max(peak_, value);
  if (times_.empty() || time_ns >= times_.back()) {
    times_.push_back(time_ns);
    values_.push_back(value);
    return;
  }
  const auto at = std::upper_bound(times_.begin(), times_.end(), time_ns);
  const auto offset = at - times_.begin();
  times_.insert(at, time_ns);
  values_.insert(values_.begin() + offset, value);
}

std::optional<double> CounterSeries::value_at(std::int64_t time_ns) const {
  const auto after = std::upper_bound(times_.begin(), times_.end(), time_ns);
  if (after == times_.begin()) return std::nullopt;
  return values_[static_cast<std::size_t>(after - times_.begin() - 1)];
}

std::vector<CounterColumn> CounterSeries::columns(std::int64_t start_ns, double ns_per_px,
                                                  int width) const {
  std::vector<CounterColumn> out(static_cast<std::size_t>(std::max(width, 0)));
  if (out.empty() || times_.empty() || !(ns_per_px > 0)) return out;
  // The sample holding at the first column's start, then each sample once.
  auto next = std::upper_bound(times_.begin(), times_.end(), start_ns);
  std::size_t i = static_cast<std::size_t>(next - times_.begin());
  std::optional<double> holding;
  if (i > 0) holding = values_[i - 1];
  for (std::size_t column = 0; column < out.size(); ++column) {
    // In doubles: a hostile trace's times may lie near the int64 limits.
    const double column_end =
        static_cast<double>(start_ns) + static_cast<double>(column + 1) * ns_per_px;
    CounterColumn& c = out[column];
    if (holding) c = {true, *holding, *holding, *holding};
    for (; i < times_.size() && static_cast<double>(times_[i]) < column_end; ++i) {
      const double value = values_[i];
      c.min = c.known ? std::min(c.min, value) : value;
      c.max = c.known ? std::max(c.max, value) : value;
      c.known = true;
      holding = value;
    }
    if (holding) c.last = *holding;
  }
  return out;
}

std::vector<CounterSeries> build_counter_series(const std::vector<telemetry::Counter>& counters) {
  std::vector<CounterSeries> series;
  append_counter_samples(series, counters);
  return series;
}

void append_counter_samples(std::vector<CounterSeries>& series,
                            const std::vector<telemetry::Counter>& counters) {
  // Process counters (no device) after the devices': an empty device sorts last.
  using Key = std::tuple<bool, const std::string&, std::size_t, const std::string&>;
  auto key = [](const std::string& device, const std::string& name) {
    return Key(device.empty(), device, known_rank(name), name);
  };
  for (const telemetry::Counter& c : counters) {
    const auto wanted = key(c.device, c.name);
    auto at = std::lower_bound(
        series.begin(), series.end(), wanted,
        [&](const CounterSeries& s, const Key& k) { return key(s.device(), s.name()) < k; });
    if (at == series.end() || at->name() != c.name || at->device() != c.device)
      at = series.insert(at, CounterSeries(c.name, c.device));
    at->add(c.time_ns, c.value);
  }
}

std::string format_counter_value(const std::string& name, double value) {
  char text[48];
  if (name.ends_with("_bytes")) {
    static constexpr std::array<const char*, 5> kUnits = {"B", "KiB", "MiB", "GiB", "TiB"};
    double scaled = value;
    std::size_t unit = 0;
    while (std::fabs(scaled) >= 1024 && unit + 1 < kUnits.size()) {
      scaled /= 1024;
      ++unit;
    }
    if (unit == 0)
      std::snprintf(text, sizeof text, "%.0f B", value);
    else
      std::snprintf(text, sizeof text, "%.3g %s", scaled, kUnits[unit]);
  } else if (name.ends_with("_rate")) {
    std::snprintf(text, sizeof text, "%.3g%%", value * 100);
  } else {
    std::snprintf(text, sizeof text, "%.6g", value);
  }
  return text;
}

}  // namespace weft::monitor
