// Merges what live programs send into one growing trace. Every connection has its own clock
// origin and its own ids, so times are moved onto the monitor's session clock and ids are
// renumbered (spans, their parents, edges and "program" arguments alike). Rows of a second or
// later program are prefixed with its pid so two programs' "main" threads stay apart.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "weft/telemetry/live.h"

namespace weft::monitor {

class LiveStreamMerger {
 public:
  // `session_start_ns`: the monitor's now_ns() when it started listening (time 0 of the trace).
  explicit LiveStreamMerger(std::int64_t session_start_ns);

  struct Merged {
    std::vector<telemetry::Span> spans;
    std::vector<telemetry::Edge> edges;
    std::vector<telemetry::Program> programs;
    std::vector<telemetry::Counter> counters;
    std::vector<std::string> messages;  // connections opened and closed, malformed lines
    std::uint32_t process = 0;          // the connection's program, counted from 0
    std::string process_name;           // "pid 1234 · ./train"
  };

  // `arrival_ns`: the monitor's now_ns() when the batch was polled.
  Merged merge(telemetry::LiveBatch batch, std::int64_t arrival_ns);

  int connections() const { return static_cast<int>(connections_.size()); }

 private:
  struct Connection {
    std::int64_t offset_ns = 0;  // sender time + offset = session time
    std::string row_prefix;
    std::string label;  // "connection 2 (pid 1234)"
    std::uint32_t process = 0;
    std::string process_name;
    std::unordered_map<telemetry::Id, telemetry::Id> span_ids, program_ids;
  };

  telemetry::Id renumber(std::unordered_map<telemetry::Id, telemetry::Id>& ids, telemetry::Id id);

  std::int64_t session_start_ns_;
  std::map<int, Connection> connections_;
  telemetry::Id next_id_ = 1;
};

}  // namespace weft::monitor
