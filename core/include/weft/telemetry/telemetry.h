// Telemetry: weft's runtime reports what it does (dispatches, kernels, transfers, callbacks,
// token hand-offs, compiles, cache lookups, waits) to the sinks installed here: a trace file
// (WEFT_TRACE), a live monitor (WEFT_MONITOR), or the embedding application's own.
//
// Off (no sink) it costs one relaxed atomic load per place that would record. On, records are
// queued and a background thread hands them to the sinks in batches, so the recording thread
// never waits for a file or a socket.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "weft/telemetry/record.h"

namespace weft::telemetry {

namespace detail {
extern std::atomic<bool> g_enabled;
}

// True while at least one sink is installed. Check it before building a record.
inline bool enabled() {
  return detail::g_enabled.load(std::memory_order_relaxed);
}

// The host clock every span uses: std::chrono::steady_clock, in nanoseconds.
inline std::int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// A fresh id for a span or program (unique within the process, never 0).
Id next_id();

// Records. Safe from any thread; they reach the sinks in the order each thread emitted them.
void emit(Span span);
void emit(Edge edge);
void emit(Program program);
// Many spans at once (one lock instead of one per span).
void emit(std::vector<Span>&& spans);
// A counter sample (a Counter; the strings are copied only when the sample is kept). Samples of
// one counter (name and device) closer than kCounterCoalesceNs to the previous one still queued
// merge into it: it keeps its time and takes the newer value, so a hot path cannot flood the
// recording and the latest value is never lost.
void emit_counter(std::string_view name, std::string_view device, std::int64_t time_ns,
                  double value);
inline constexpr std::int64_t kCounterCoalesceNs = 100'000;

// This thread's row: "NAME (thread N)" where N counts threads in the order they first record,
// and NAME is what set_thread_name gave (for the thread that first used weft: "main").
const Track& this_thread_track();
// Names this thread's row (receiver and runtime threads say what they are); call it before the
// thread records anything. `kind` says what sort of row it is.
void set_thread_name(std::string name, TrackKind kind = TrackKind::host_thread,
                     std::string device = {});

// What a call of a compiled function is, while it runs on this thread: the dispatch span's id
// and where the function was defined. Set by jit (core) and read by the device runtime, which
// emits the dispatch span.
struct CallSite {
  std::string function;
  std::string location;  // "file.cpp:42"
};
// Sets this thread's call site for the scope's lifetime (nests: restores the previous one).
class ScopedCallSite {
 public:
  explicit ScopedCallSite(const CallSite* site);
  ~ScopedCallSite();
  ScopedCallSite(const ScopedCallSite&) = delete;
  ScopedCallSite& operator=(const ScopedCallSite&) = delete;

 private:
  const CallSite* previous_;
};
const CallSite* current_call_site();

// A consumer of records. Called from the telemetry thread only, with batches in emission
// order; must not call back into telemetry. Failures are the sink's own business (a sink that
// cannot write reports it once through weft::log and drops what follows).
class Sink {
 public:
  virtual ~Sink() = default;
  virtual void write(std::span<const Span> spans, std::span<const Edge> edges,
                     std::span<const Program> programs) = 0;
  // Counter samples, after the same batch's write (a sink that ignores counters keeps this).
  virtual void write_counters(std::span<const Counter> /*counters*/) {}
  // Everything written so far is durable / sent (called by flush and at removal).
  virtual void flush() {}
};

// Installs a sink; recording is enabled while any is installed. Records emitted before the
// call do not reach it.
void add_sink(std::shared_ptr<Sink> sink);
// Delivers what is queued, flushes the sink and removes it.
void remove_sink(const std::shared_ptr<Sink>& sink);
// Delivers everything emitted so far to every sink and flushes them. Blocks until done.
void flush();
// Records emitted and not yet delivered (for tests and the bounded-buffer checks).
std::size_t queued();

// The telemetry thread delivers on otherwise idle cores. A program that keeps every core busy
// would make the queue grow without end: once this many records wait, the thread that emits
// delivers them itself (its recording then costs it time instead of memory).
inline constexpr std::size_t kMaxQueuedRecords = std::size_t{1} << 16;

// Adds a collector: a function that emits records it has been holding (the device runtime's
// completed kernel times). The telemetry thread runs the collectors before each delivery, and
// flush() runs them first.
void add_collector(void (*collector)());

}  // namespace weft::telemetry
