// Trace files: one recording in an SQLite database (format in docs/telemetry.md). The writer is
// a telemetry sink; the reader treats the file as untrusted input.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "weft/telemetry/telemetry.h"

namespace weft::telemetry {

// The format's version; readers refuse files with a higher one. Tables added later that a
// reader may do without (counters) leave it as it is: older readers skip them, and this one
// reads files that lack them.
inline constexpr int kTraceFormatVersion = 1;

class TraceFileSink final : public Sink {
 public:
  // Creates `path` (a "%p" in it becomes the process id). An earlier weft trace at that path is
  // replaced; any other existing file is left alone and TraceError says so, as it does for a
  // directory that cannot be written and for a recording in progress (each sink holds an
  // exclusive flock on its file until it is destroyed). `command` is stored to say what was
  // recorded.
  explicit TraceFileSink(const std::filesystem::path& path, std::string command = {});
  ~TraceFileSink() override;
  TraceFileSink(const TraceFileSink&) = delete;
  TraceFileSink& operator=(const TraceFileSink&) = delete;

  void write(std::span<const Span> spans, std::span<const Edge> edges,
             std::span<const Program> programs) override;
  void write_counters(std::span<const Counter> counters) override;
  void flush() override;
  const std::filesystem::path& path() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// A recording, as read back. Times are nanoseconds since the recording started.
struct Trace {
  std::map<std::string, std::string> meta;  // "command", "pid", "started", "weft_version", ...
  std::vector<Track> tracks;                // in the order they first appeared
  std::vector<Span> spans;                  // by start time (then id)
  std::vector<Edge> edges;
  std::vector<Program> programs;
  std::vector<Counter> counters;  // by time (then as recorded); none in traces before counters

  // Index of the span with `id` in `spans`, or -1.
  std::ptrdiff_t index_of(Id id) const;
  const Program* program(Id id) const;
  // Builds the id index (read_trace does; call it after changing `spans` by hand).
  void reindex();

 private:
  std::unordered_map<Id, std::size_t> by_id_;
};

// Reads a trace file. Throws TraceError naming the file and the problem: not a regular file
// (a FIFO is refused, never waited on), not an SQLite database, not a weft trace, from a newer
// weft, truncated or corrupt, or a row that breaks the format. Never trusts the file: nothing in it
// is executed, sizes are bounded.
Trace read_trace(const std::filesystem::path& path);
// The same from the file's bytes (the fuzzer's entry point).
Trace read_trace(std::span<const std::uint8_t> bytes);

}  // namespace weft::telemetry
