#include "live_stream_merger.h"

#include <algorithm>
#include <charconv>

namespace weft::monitor {

LiveStreamMerger::LiveStreamMerger(std::int64_t session_start_ns)
    : session_start_ns_(session_start_ns) {}

telemetry::Id LiveStreamMerger::renumber(std::unordered_map<telemetry::Id, telemetry::Id>& ids,
                                         telemetry::Id id) {
  if (id == 0) return 0;
  auto [at, inserted] = ids.try_emplace(id, next_id_);
  if (inserted) ++next_id_;
  return at->second;
}

LiveStreamMerger::Merged LiveStreamMerger::merge(telemetry::LiveBatch batch,
                                                 std::int64_t arrival_ns) {
  Merged merged;
  auto [found, is_new] = connections_.try_emplace(batch.connection);
  Connection& connection = found->second;
  if (is_new) {
    const auto pid = batch.meta.find("pid");
    connection.label = "connection " + std::to_string(batch.connection);
    if (pid != batch.meta.end()) connection.label += " (pid " + pid->second + ")";
    if (connections_.size() > 1)
      connection.row_prefix =
          (pid != batch.meta.end() ? "pid " + pid->second : connection.label) + ": ";
    // The sender's clock starts when it connects; its first records end by the time they
    // arrive. An origin in the hello (same host, same steady clock) is exact.
    std::int64_t latest_end = 0;
    for (const telemetry::Span& span : batch.spans) latest_end = std::max(latest_end, span.end_ns);
    connection.offset_ns = arrival_ns - session_start_ns_ - latest_end;
    if (auto origin = batch.meta.find("origin_ns"); origin != batch.meta.end()) {
      std::int64_t value = 0;
      const std::string& text = origin->second;
      if (std::from_chars(text.data(), text.data() + text.size(), value).ec == std::errc())
        connection.offset_ns = value - session_start_ns_;
    }
    connection.process = static_cast<std::uint32_t>(connections_.size() - 1);
    connection.process_name = pid != batch.meta.end()
                                  ? "pid " + pid->second
                                  : "connection " + std::to_string(batch.connection);
    std::string message = connection.label + " connected";
    if (auto command = batch.meta.find("command");
        command != batch.meta.end() && !command->second.empty()) {
      message += ": " + command->second;
      connection.process_name += " · " + command->second;
    }
    merged.messages.push_back(std::move(message));
  }
  for (const std::string& problem : batch.problems)
    merged.messages.push_back(connection.label + ": skipped a malformed record: " + problem);

  for (telemetry::Program& program : batch.programs) {
    program.id = renumber(connection.program_ids, program.id);
    merged.programs.push_back(std::move(program));
  }
  merged.spans.reserve(batch.spans.size());
  for (telemetry::Span& span : batch.spans) {
    span.id = renumber(connection.span_ids, span.id);
    span.parent = renumber(connection.span_ids, span.parent);
    span.start_ns += connection.offset_ns;
    span.end_ns += connection.offset_ns;
    span.track.name = connection.row_prefix + span.track.name;
    for (auto& [key, value] : span.args) {
      if (key == "thread") value = connection.row_prefix + value;  // names a (prefixed) row
      if (key != "program") continue;
      telemetry::Id id = 0;
      if (std::from_chars(value.data(), value.data() + value.size(), id).ec == std::errc() &&
          id != 0)
        value = std::to_string(renumber(connection.program_ids, id));
    }
    merged.spans.push_back(std::move(span));
  }
  for (telemetry::Edge& edge : batch.edges) {
    edge.from = renumber(connection.span_ids, edge.from);
    edge.to = renumber(connection.span_ids, edge.to);
    merged.edges.push_back(std::move(edge));
  }
  for (telemetry::Counter& counter : batch.counters) {
    counter.time_ns += connection.offset_ns;
    // Apart per program like its rows: "pid 12: cpu:0", or "pid 12" for the process's own.
    if (!connection.row_prefix.empty())
      counter.device = counter.device.empty()
                           ? connection.row_prefix.substr(0, connection.row_prefix.size() - 2)
                           : connection.row_prefix + counter.device;
    merged.counters.push_back(std::move(counter));
  }
  if (batch.closed) merged.messages.push_back(connection.label + " ended its stream");
  merged.process = connection.process;
  merged.process_name = connection.process_name;
  return merged;
}

}  // namespace weft::monitor
