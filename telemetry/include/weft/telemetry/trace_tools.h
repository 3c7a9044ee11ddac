// What `weft trace` does with a recording: Chrome trace-event JSON for Perfetto and
// chrome://tracing, totals per kernel, effect and compile, and the program-order check of
// effects that the monitor's effect view shows too.
#pragma once

#include <cstddef>
#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "weft/telemetry/trace_file.h"

namespace weft::telemetry {

// Chrome's trace-event format: one "X" event per span (thread rows per track, named by
// metadata events), and a flow ("s" then "f") per token edge, so Perfetto draws the arrows.
void write_chrome_trace(const Trace& trace, std::ostream& out);

// The callbacks of one effect dispatched by one host thread, ordered ones and unordered ones
// apart: program order (by seq) beside execution order (by start time).
struct EffectStream {
  std::string thread;  // the dispatching thread's row
  std::string effect;
  bool ordered = false;
  std::vector<std::size_t> program_order;    // indices into Trace::spans
  std::vector<std::size_t> execution_order;  // the same spans by start time
  std::size_t out_of_order = 0;              // positions where the two orders differ
};
// Streams by thread, then effect name, then ordered before unordered.
std::vector<EffectStream> effect_streams(const Trace& trace);

struct TraceSummary {
  struct Row {
    std::string name;  // kernel name ("function/kernel"), effect, function
    std::string device;
    std::size_t count = 0;
    std::int64_t total_ns = 0;
    std::int64_t max_ns = 0;
    // Kernels: queued to start; callbacks: runnable to start. The wall time during which at
    // least one of them waited: waits that overlap count once.
    std::int64_t wait_ns = 0;
    std::size_t failed = 0;
    std::size_t out_of_order = 0;  // effects: callbacks not in program order
    bool ordered = false;          // effects
  };
  std::int64_t duration_ns = 0;  // first start to last end
  std::size_t spans = 0;
  std::size_t edges = 0;
  std::vector<Row> kernels;     // by total time, largest first
  std::vector<Row> effects;     // by effect name, ordered before unordered
  std::vector<Row> dispatches;  // per function, by total time
  // Dispatches tiered execution ran on the reference interpreter (a "ran_on" argument).
  std::size_t interpreted_dispatches = 0;
  std::vector<Row> transfers;  // per kind (upload, download, copy, read)
  std::size_t compiles = 0;
  std::int64_t compile_ns = 0;
  std::size_t cache_hits = 0;
  std::size_t cache_misses = 0;
  std::vector<std::string> miss_reasons;  // "not_found x3", ...
  std::size_t cache_stores = 0;
  // Wall time during which at least one thread waited (waits that overlap count once).
  std::int64_t barrier_wait_ns = 0;
  std::int64_t array_wait_ns = 0;
};
TraceSummary summarize(const Trace& trace);

}  // namespace weft::telemetry
