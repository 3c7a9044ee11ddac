// Chrome trace-event JSON (the format Perfetto and chrome://tracing read).
#include <map>
#include <nlohmann/json.hpp>

#include "weft/telemetry/trace_tools.h"

namespace weft::telemetry {

namespace {

using nlohmann::json;

double microseconds(std::int64_t ns) {
  return static_cast<double>(ns) / 1000.0;
}

// Rows in the monitor's order: host threads, queues, runtime threads, callbacks, cache writer.
int row_rank(TrackKind kind) {
  switch (kind) {
    case TrackKind::host_thread:
      return 0;
    case TrackKind::queue:
      return 1;
    case TrackKind::runtime:
      return 2;
    case TrackKind::callback:
      return 3;
    case TrackKind::cache_writer:
      return 4;
  }
  return 5;
}

}  // namespace

void write_chrome_trace(const Trace& trace, std::ostream& out) {
  constexpr int kPid = 1;
  std::map<std::pair<TrackKind, std::string>, int> tids;
  json events = json::array();
  std::string process = "weft";
  if (auto command = trace.meta.find("command");
      command != trace.meta.end() && !command->second.empty())
    process += ": " + command->second;
  events.push_back(
      {{"ph", "M"}, {"name", "process_name"}, {"pid", kPid}, {"args", {{"name", process}}}});
  auto tid_of = [&](const Track& track) {
    auto [it, fresh] =
        tids.emplace(std::make_pair(track.kind, track.name), static_cast<int>(tids.size()) + 1);
    if (fresh) {
      events.push_back({{"ph", "M"},
                        {"name", "thread_name"},
                        {"pid", kPid},
                        {"tid", it->second},
                        {"args", {{"name", track.name}}}});
      events.push_back({{"ph", "M"},
                        {"name", "thread_sort_index"},
                        {"pid", kPid},
                        {"tid", it->second},
                        {"args", {{"sort_index", row_rank(track.kind) * 1000 + it->second}}}});
    }
    return it->second;
  };
  for (const Track& track : trace.tracks) tid_of(track);
  for (const Span& span : trace.spans) {
    json args = json::object();
    for (const auto& [key, value] : span.args) args[key] = value;
    args["id"] = span.id;
    if (span.parent) args["parent"] = span.parent;
    if (!span.effect.empty()) args["effect"] = span.effect;
    if (span.seq >= 0) args["seq"] = span.seq;
    events.push_back({{"ph", "X"},
                      {"name", span.name},
                      {"cat", to_string(span.kind)},
                      {"ts", microseconds(span.start_ns)},
                      {"dur", microseconds(span.end_ns - span.start_ns)},
                      {"pid", kPid},
                      {"tid", tid_of(span.track)},
                      {"args", std::move(args)}});
  }
  // A flow starts inside the slice it leaves and ends ("bp": "e") inside the one it enters.
  std::uint64_t flow = 0;
  for (const Edge& edge : trace.edges) {
    const std::ptrdiff_t from = trace.index_of(edge.from), to = trace.index_of(edge.to);
    if (from < 0 || to < 0) continue;
    const Span& a = trace.spans[static_cast<std::size_t>(from)];
    const Span& b = trace.spans[static_cast<std::size_t>(to)];
    const std::string name =
        "token " + (edge.effect.empty() ? std::string("(unordered)") : edge.effect);
    ++flow;
    events.push_back({{"ph", "s"},
                      {"id", flow},
                      {"name", name},
                      {"cat", "token"},
                      {"ts", microseconds(a.start_ns)},
                      {"pid", kPid},
                      {"tid", tid_of(a.track)}});
    events.push_back({{"ph", "f"},
                      {"bp", "e"},
                      {"id", flow},
                      {"name", name},
                      {"cat", "token"},
                      {"ts", microseconds(b.start_ns)},
                      {"pid", kPid},
                      {"tid", tid_of(b.track)}});
  }
  json metadata = json::object();
  for (const auto& [key, value] : trace.meta) metadata[key] = value;
  json document = {{"traceEvents", std::move(events)},
                   {"displayTimeUnit", "ns"},
                   {"otherData", std::move(metadata)}};
  out << document.dump(-1, ' ', false, json::error_handler_t::replace) << "\n";
}

}  // namespace weft::telemetry
