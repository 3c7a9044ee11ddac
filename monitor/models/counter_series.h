// Counter tracks for the timeline: a trace's counter samples (device memory, the buffer pool,
// the callback queue, the cache hit rate) as one step series per counter and device, reduced to
// one column per pixel for drawing, so a long recording draws in time proportional to the
// view's width.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "weft/telemetry/record.h"

namespace weft::monitor {

// The range a counter takes within one pixel column: what held at its start and every sample
// inside it.
struct CounterColumn {
  bool known = false;  // false before the counter's first sample
  double min = 0;
  double max = 0;
  double last = 0;  // the value at the column's end
};

class CounterSeries {
 public:
  CounterSeries(std::string name, std::string device)
      : name_(std::move(name)), device_(std::move(device)) {}

  const std::string& name() const { return name_; }
  const std::string& device() const { return device_; }
  // "cpu:0 device_memory_bytes", or the bare name of a counter of the whole process.
  std::string label() const;
  // Samples are expected in time order; one out of order is moved to its place.
  void add(std::int64_t time_ns, double value);
  std::size_t size() const { return times_.size(); }
  // The largest value (0 when there is none): the top of the chart's scale.
  double peak() const { return peak_; }

  // The value holding at `time_ns` (a step function); nullopt before the first sample.
  std::optional<double> value_at(std::int64_t time_ns) const;
  // Column i covers [start_ns + i * ns_per_px, start_ns + (i + 1) * ns_per_px).
  std::vector<CounterColumn> columns(std::int64_t start_ns, double ns_per_px, int width) const;

 private:
  std::string name_;
  std::string device_;
  std::vector<std::int64_t> times_;
  std::vector<double> values_;
  double peak_ = 0;
};

// One series per counter and device: devices in name order with the process's own counters
// last, and per device the documented counters in the order docs/telemetry.md lists them, then
// any other by name.
std::vector<CounterSeries> build_counter_series(const std::vector<telemetry::Counter>& counters);
// Adds `counters` to `series` (live growth): to their series, or to a new one in its place.
void append_counter_samples(std::vector<CounterSeries>& series,
                            const std::vector<telemetry::Counter>& counters);

// A value as its counter's unit reads: "1.5 MiB" for *_bytes, "75%" for *_rate, else a number.
std::string format_counter_value(const std::string& name, double value);

}  // namespace weft::monitor
