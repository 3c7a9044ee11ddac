// What telemetry records: spans on timeline rows, edges between them (a step that waited for
// another's token), the programs kernels belong to, and counter samples. The trace file, the live
// stream and the monitor all use these types; their text names (to_string/parse) are the file
// format's.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace weft::telemetry {

// Identifies a span or program within one recording; 0 means none.
using Id = std::uint64_t;

enum class SpanKind : std::uint8_t {
  dispatch,        // a call of a compiled function (the user thread enqueueing it)
  kernel,          // one kernel launch on a device queue, timed by OpenCL profiling
  transfer,        // upload, download or copy on a device queue
  loop_iteration,  // one iteration of a while loop (on the device's runtime thread)
  predicate_read,  // waiting for a loop predicate or cond index computed on the device
  callback,        // a print or host callback, on a receiver thread
  compile,         // Device::compile, from the call to an executable
  compile_phase,   // one phase of a compile: trace, plan, codegen, cache lookup, build
  cache_lookup,    // a lookup in the persistent cache (hit or miss and why)
  cache_store,     // the cache writer storing a program after its first run
  barrier_wait,    // effects_barrier
  array_wait,      // waiting for an array's value (to_host, block_until_ready)
};
inline constexpr int kSpanKindCount = 12;

enum class TrackKind : std::uint8_t {
  host_thread,   // a thread that dispatches work (the user's threads)
  queue,         // a device's command queue
  callback,      // a receiver thread running callbacks
  runtime,       // a device's runtime thread (while loops, conds, callback results)
  cache_writer,  // the thread that stores programs in the persistent cache
};
inline constexpr int kTrackKindCount = 5;

std::string_view to_string(SpanKind kind);
std::string_view to_string(TrackKind kind);
std::optional<SpanKind> parse_span_kind(std::string_view text);
std::optional<TrackKind> parse_track_kind(std::string_view text);

// A row of the timeline: a device queue, a callback thread or a host thread.
struct Track {
  TrackKind kind = TrackKind::host_thread;
  std::string name;    // "cpu:0 queue", "main (thread 1)", "callbacks cpu:0 level 0"
  std::string device;  // the device it belongs to, empty for host threads
  bool operator==(const Track&) const = default;
};

using Args = std::vector<std::pair<std::string, std::string>>;

// Something that took time on one row. Times are nanoseconds on the host's steady clock
// (telemetry::now_ns); device times are mapped onto it.
struct Span {
  Id id = 0;
  Id parent = 0;  // the dispatch a kernel, transfer or callback belongs to; a phase's compile
  SpanKind kind = SpanKind::dispatch;
  Track track;
  std::string name;    // kernel, function, effect or phase name
  std::string effect;  // callbacks: the effect ("print" for debug_print/id_print); else empty
  // Callbacks: position in program order among the effects dispatched by the same host
  // thread (counting from 1); -1 elsewhere. Execution order is start_ns order.
  std::int64_t seq = -1;
  std::int64_t start_ns = 0;
  std::int64_t end_ns = 0;
  Args args;  // details shown as they are: "fused_ops", "global_size", "status", ...
  const std::string* arg(std::string_view key) const;
};

// `to` waited for `from`: an effect token handed from one step to the next.
struct Edge {
  Id from = 0;
  Id to = 0;
  std::string effect;  // the effect whose order the token keeps
};

// One sample of a counter track: a level that changes over time (device memory in use, the
// callback queue's depth). Taken when the level changes; it holds until the next sample of the
// same name and device. Names and units: docs/telemetry.md ("Counters").
struct Counter {
  std::string name;    // "device_memory_bytes", "callback_queue_depth", ...
  std::string device;  // the device it measures; empty for the whole process
  std::int64_t time_ns = 0;
  double value = 0;
  bool operator==(const Counter&) const = default;
};

// A compiled program, so a kernel's span can show its fused ops and source.
struct Program {
  Id id = 0;
  std::string function;
  std::string device;
  std::string cache_key;     // 32 hex digits, or empty when the cache was not consulted
  std::string cache_status;  // "hit", "miss", "off"
  std::string ir;            // the graph's IR text
  std::string source;        // generated OpenCL C
  struct Kernel {
    std::string name;
    std::string kind;
    std::vector<std::string> fused_ops;
  };
  std::vector<Kernel> kernels;
};

}  // namespace weft::telemetry
