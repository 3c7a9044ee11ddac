// The live stream: a program run with WEFT_MONITOR=1 sends its records to a running monitor over
// a Unix domain socket in the user's runtime directory (never TCP). The monitor listens; each
// program connects. The socket is the user's own (directory 0700, socket 0600).
//
// Wire format: one JSON object per line. The first line is a hello ({"weft_live":1, "pid",
// "command", "weft_version", "origin_ns": the sender's start on the host's steady clock, as
// text}), then {"span":{...}}, {"edge":{...}}, {"program":{...}} lines with
// the trace file's fields; times are nanoseconds since the sender's origin.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "weft/telemetry/telemetry.h"

namespace weft::telemetry {

// $XDG_RUNTIME_DIR/weft/monitor.sock, or /tmp/weft-UID/monitor.sock without XDG_RUNTIME_DIR;
// WEFT_MONITOR_SOCKET overrides it.
std::filesystem::path monitor_socket_path();

// The program's side. Never blocks the program: it writes what the socket takes and keeps up
// to `buffer_bytes` more; beyond that it drops records (and says how many in the log). A
// monitor that goes away ends the stream quietly.
class LiveSink final : public Sink {
 public:
  // Connects to the monitor at `path`; throws TraceError when nothing listens there, or when
  // another user could be listening: the socket or its directory not the user's own or
  // writable by group or others, or a listener (SO_PEERCRED) of another uid.
  explicit LiveSink(const std::filesystem::path& path, std::string command = {},
                    std::size_t buffer_bytes = 64u << 20);
  ~LiveSink() override;
  void write(std::span<const Span> spans, std::span<const Edge> edges,
             std::span<const Program> programs) override;
  void write_counters(std::span<const Counter> counters) override;
  void flush() override;
  std::size_t dropped() const;  // records dropped because the buffer was full
  bool connected() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// What one connected program sent since the last poll.
struct LiveBatch {
  int connection = 0;  // numbers connections from 1, in the order they were accepted
  // From the hello (first batch): "pid", "command", "weft_version", "origin_ns".
  std::map<std::string, std::string> meta;
  std::vector<Span> spans;  // times relative to the sender's origin
  std::vector<Edge> edges;
  std::vector<Program> programs;
  std::vector<Counter> counters;      // times relative to the sender's origin
  std::vector<std::string> problems;  // lines that broke the format (skipped)
  bool closed = false;                // the program ended its stream
};

// The monitor's side: listens on `path` and decodes what connected programs send. The bytes
// are untrusted: lines are bounded (16 MiB), malformed ones are reported and skipped.
class LiveListener {
 public:
  // Creates the socket (its directory 0700 if missing, the socket 0600). Throws TraceError
  // when another monitor already listens there or the directory is not the user's own.
  explicit LiveListener(std::filesystem::path path = monitor_socket_path());
  ~LiveListener();  // closes connections and removes the socket
  LiveListener(const LiveListener&) = delete;
  LiveListener& operator=(const LiveListener&) = delete;

  const std::filesystem::path& path() const;
  // Accepts waiting programs and reads what they sent, without blocking.
  std::vector<LiveBatch> poll();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace weft::telemetry
