// Records telemetry into memory for a test: installs a sink for the scope's lifetime and hands
// back what was recorded as a Trace (spans sorted by start, ids indexed).
#pragma once

#include <algorithm>
#include <memory>
#include <mutex>
#include <vector>

#include "weft/callback.h"
#include "weft/telemetry/telemetry.h"
#include "weft/telemetry/trace_file.h"
#include "weft/weft.h"

namespace weft::testing {

class CollectingSink final : public telemetry::Sink {
 public:
  void write(std::span<const telemetry::Span> spans, std::span<const telemetry::Edge> edges,
             std::span<const telemetry::Program> programs) override {
    std::lock_guard lock(mutex_);
    trace_.spans.insert(trace_.spans.end(), spans.begin(), spans.end());
    trace_.edges.insert(trace_.edges.end(), edges.begin(), edges.end());
    trace_.programs.insert(trace_.programs.end(), programs.begin(), programs.end());
  }
  void write_counters(std::span<const telemetry::Counter> counters) override {
    std::lock_guard lock(mutex_);
    trace_.counters.insert(trace_.counters.end(), counters.begin(), counters.end());
  }
  telemetry::Trace take() {
    std::lock_guard lock(mutex_);
    telemetry::Trace trace = std::move(trace_);
    trace_ = {};
    std::stable_sort(trace.spans.begin(), trace.spans.end(),
                     [](const auto& a, const auto& b) { return a.start_ns < b.start_ns; });
    for (const telemetry::Span& s : trace.spans)
      if (std::find(trace.tracks.begin(), trace.tracks.end(), s.track) == trace.tracks.end())
        trace.tracks.push_back(s.track);
    trace.reindex();
    return trace;
  }

 private:
  std::mutex mutex_;
  telemetry::Trace trace_;
};

class Recording {
 public:
  Recording() : sink_(std::make_shared<CollectingSink>()) { telemetry::add_sink(sink_); }
  ~Recording() { telemetry::remove_sink(sink_); }
  Recording(const Recording&) = delete;
  Recording& operator=(const Recording&) = delete;

  // Waits for every effect and every device, then returns what was recorded so far.
  telemetry::Trace finish() {
    effects_barrier();
    for (Device* d : devices()) d->synchronize();
    telemetry::flush();
    return sink_->take();
  }

 private:
  std::shared_ptr<CollectingSink> sink_;
};

}  // namespace weft::testing
