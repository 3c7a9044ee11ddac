// Synthetic traces for the monitor's tests and benchmark, written through the real
// TraceFileSink so that what the monitor reads is exactly what a recording produces.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "weft/telemetry/record.h"

namespace weft::monitor::testing {

using telemetry::Id;
using telemetry::Span;
using telemetry::SpanKind;
using telemetry::Track;
using telemetry::TrackKind;

Track host_track(const std::string& name);
Track queue_track(const std::string& device);
Track callback_track(const std::string& device, int thread);
Track runtime_track(const std::string& device, int thread);
Track cache_writer_track();

// Collects spans (times in ns relative to the recording start), edges and programs, then
// writes them with a TraceFileSink. Ids count from 1 in the order spans are added.
class TraceBuilder {
 public:
  Id add(SpanKind kind, const Track& track, const std::string& name, std::int64_t start_ns,
         std::int64_t end_ns, telemetry::Args args = {}, Id parent = 0);
  Id add_callback(const Track& track, const std::string& name, const std::string& effect,
                  bool ordered, std::int64_t seq, const std::string& thread, std::int64_t start_ns,
                  std::int64_t end_ns, Id parent, const std::string& status = "ok");
  void edge(Id from, Id to, const std::string& effect);
  void program(telemetry::Program program);

  // Writes the trace file (an earlier one at `path` is replaced).
  void write(const std::filesystem::path& path) const;

  const std::vector<Span>& spans() const { return spans_; }
  const std::vector<telemetry::Edge>& edges() const { return edges_; }
  const Span& span(Id id) const { return spans_.at(id - 1); }

 private:
  std::vector<Span> spans_;
  std::vector<telemetry::Edge> edges_;
  std::vector<telemetry::Program> programs_;
};

// The ids of the interesting spans of demo_trace().
struct DemoIds {
  Id compile_mlp = 0;
  Id lookup_miss = 0;
  Id lookup_hit = 0;
  Id first_mlp_dispatch = 0;
  Id first_mlp_kernel = 0;
  std::vector<Id> main_prints;    // main thread's print callbacks, in program order
  std::vector<Id> worker_prints;  // worker thread's print callbacks, in program order
  std::vector<Id> logs;           // main thread's unordered "log" callbacks, in program order
  Id failed_callback = 0;
  std::string missed_key;  // the key lookup_miss missed
  std::string hit_key;
};

inline constexpr int kDemoDispatches = 8;

// Two host threads (main, worker) dispatching to two devices (cpu:0, cpu:1): compiles with
// phases and cache lookups, dispatches, kernels and transfers on two queues, print callbacks
// on two callback threads chained by token edges (main's in program order; worker's with the
// 4th and 5th swapped), unordered "log" callbacks with a swapped pair, one failed callback,
// loop iterations on a runtime thread and a cache store.
TraceBuilder demo_trace(DemoIds* ids = nullptr);

// A large trace (for the level-of-detail tests and the benchmark): `span_count` spans over 8
// host threads, 4 queues, 4 callback threads and 2 runtime threads, with token edges between
// consecutive callbacks. Written in chunks so memory stays bounded.
void write_large_trace(const std::filesystem::path& path, std::size_t span_count);

}  // namespace weft::monitor::testing
