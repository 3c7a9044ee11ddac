// Chrome trace-event JSON (the format Perfetto and chrome://tracing read), written event by event:
// a recording of 400k spans makes about 80 MB of JSON, which built as one document first took
// 1.7 GB of memory.
#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <tuple>

#include "weft/telemetry/trace_tools.h"

namespace weft::telemetry {

namespace {

using nlohmann::json;

constexpr int kPid = 1;

double microseconds(std::int64_t ns) {
  return static_cast<double>(ns) / 1000.0;
}

std::string dump(const json& value) {
  return value.dump(-1, ' ', false, json::error_handler_t::replace);
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

using RowKey = std::pair<TrackKind, std::string>;

// Perfetto draws the slices of one thread as a stack and drops a slice that starts inside
// another but ends after it. Spans of one track may overlap that way (two kernels on a queue
// once device times are mapped onto the host clock, a cache lookup beside a build), so each
// track is laid out on lanes, each lane a thread of its own. A span goes on the lane whose
// innermost open slice contains it, the innermost of all such (a lookup under its compile
// rather than under the dispatch around both), else on the first lane with nothing open, else
// on a new lane. Returns each span's lane (0 for all of a track whose spans nest).
std::vector<std::uint32_t> assign_lanes(const Trace& trace) {
  std::map<RowKey, std::vector<std::size_t>> by_row;
  for (std::size_t i = 0; i < trace.spans.size(); ++i) {
    const Track& track = trace.spans[i].track;
    by_row[{track.kind, track.name}].push_back(i);
  }
  std::vector<std::uint32_t> lane_of(trace.spans.size(), 0);
  struct Open {
    std::int64_t start_ns, end_ns;
  };
  for (auto& [row, members] : by_row) {
    // Outer slices before the ones they contain: by start, then the longer first.
    std::sort(members.begin(), members.end(), [&](std::size_t a, std::size_t b) {
      const Span& x = trace.spans[a];
      const Span& y = trace.spans[b];
      return std::make_tuple(x.start_ns, -x.end_ns, x.id) <
             std::make_tuple(y.start_ns, -y.end_ns, y.id);
    });
    std::vector<std::vector<Open>> lanes;  // per lane, its open slices, outermost first
    for (std::size_t i : members) {
      const Span& span = trace.spans[i];
      std::size_t chosen = lanes.size(), empty = lanes.size();
      for (std::size_t lane = 0; lane < lanes.size(); ++lane) {
        std::vector<Open>& open = lanes[lane];
        while (!open.empty() && open.back().end_ns <= span.start_ns) open.pop_back();
        if (open.empty()) {
          empty = std::min(empty, lane);
        } else if (span.end_ns <= open.back().end_ns &&
                   (chosen == lanes.size() ||
                    open.back().start_ns > lanes[chosen].back().start_ns)) {
          chosen = lane;
        }
      }
      if (chosen == lanes.size()) chosen = empty;
      if (chosen == lanes.size()) lanes.emplace_back();
      lanes[chosen].push_back({span.start_ns, span.end_ns});
      lane_of[i] = static_cast<std::uint32_t>(chosen);
    }
  }
  return lane_of;
}

// Writes the document's events as they are made, then its closing fields.
class EventWriter {
 public:
  explicit EventWriter(std::ostream& out) : out_(out) { out_ << "{\"traceEvents\":["; }
  void add(const json& event) {
    if (events_++ > 0) out_ << ',';
    out_ << dump(event);
  }
  void finish(const json& metadata) {
    out_ << "],\"displayTimeUnit\":\"ns\",\"otherData\":" << dump(metadata) << "}\n";
  }

 private:
  std::ostream& out_;
  std::size_t events_ = 0;
};

}  // namespace

void write_chrome_trace(const Trace& trace, std::ostream& out) {
  EventWriter events(out);
  std::string process = "weft";
  if (auto command = trace.meta.find("command");
      command != trace.meta.end() && !command->second.empty())
    process += ": " + command->second;
  events.add({{"ph", "M"}, {"name", "process_name"}, {"pid", kPid}, {"args", {{"name", process}}}});

  // Threads: one per track and lane (a lane past the first named "cpu:0 queue #2"), sorted
  // with their track.
  std::map<RowKey, int> track_tids;
  std::map<std::tuple<TrackKind, std::string, std::uint32_t>, int> lane_tids;
  int next_tid = 1;
  auto name_thread = [&](int tid, const std::string& name, int sort_index) {
    events.add({{"ph", "M"},
                {"name", "thread_name"},
                {"pid", kPid},
                {"tid", tid},
                {"args", {{"name", name}}}});
    events.add({{"ph", "M"},
                {"name", "thread_sort_index"},
                {"pid", kPid},
                {"tid", tid},
                {"args", {{"sort_index", sort_index}}}});
  };
  auto track_tid = [&](const Track& track) {
    auto [it, fresh] = track_tids.emplace(RowKey{track.kind, track.name}, next_tid);
    if (fresh) name_thread(next_tid++, track.name, row_rank(track.kind) * 1000 + it->second);
    return it->second;
  };
  auto tid_of = [&](const Span& span, std::uint32_t lane) {
    const int first = track_tid(span.track);
    if (lane == 0) return first;
    auto [it, fresh] =
        lane_tids.emplace(std::make_tuple(span.track.kind, span.track.name, lane), next_tid);
    if (fresh)
      name_thread(next_tid++, span.track.name + " #" + std::to_string(lane + 1),
                  row_rank(span.track.kind) * 1000 + first);
    return it->second;
  };
  for (const Track& track : trace.tracks) track_tid(track);

  const std::vector<std::uint32_t> lanes = assign_lanes(trace);
  for (std::size_t i = 0; i < trace.spans.size(); ++i) {
    const Span& span = trace.spans[i];
    json args = json::object();
    for (const auto& [key, value] : span.args) args[key] = value;
    args["id"] = span.id;
    if (span.parent) args["parent"] = span.parent;
    if (!span.effect.empty()) args["effect"] = span.effect;
    if (span.seq >= 0) args["seq"] = span.seq;
    const int tid = tid_of(span, lanes[i]);
    events.add({{"ph", "X"},
                {"name", span.name},
                {"cat", to_string(span.kind)},
                {"ts", microseconds(span.start_ns)},
                {"dur", microseconds(span.end_ns - span.start_ns)},
                {"pid", kPid},
                {"tid", tid},
                {"args", std::move(args)}});
  }
  // A flow starts inside the slice it leaves and ends ("bp": "e") inside the one it enters.
  std::uint64_t flow = 0;
  for (const Edge& edge : trace.edges) {
    const std::ptrdiff_t from = trace.index_of(edge.from), to = trace.index_of(edge.to);
    if (from < 0 || to < 0) continue;
    const auto a = static_cast<std::size_t>(from), b = static_cast<std::size_t>(to);
    const std::string name =
        "token " + (edge.effect.empty() ? std::string("(unordered)") : edge.effect);
    ++flow;
    events.add({{"ph", "s"},
                {"id", flow},
                {"name", name},
                {"cat", "token"},
                {"ts", microseconds(trace.spans[a].start_ns)},
                {"pid", kPid},
                {"tid", tid_of(trace.spans[a], lanes[a])}});
    events.add({{"ph", "f"},
                {"bp", "e"},
                {"id", flow},
                {"name", name},
                {"cat", "token"},
                {"ts", microseconds(trace.spans[b].start_ns)},
                {"pid", kPid},
                {"tid", tid_of(trace.spans[b], lanes[b])}});
  }
  // Counter tracks: one per counter name and device, "cpu:0 device_memory_bytes" (a counter of
  // the whole process keeps its bare name).
  for (const Counter& counter : trace.counters)
    events.add(
        {{"ph", "C"},
         {"name", counter.device.empty() ? counter.name : counter.device + " " + counter.name},
         {"ts", microseconds(counter.time_ns)},
         {"pid", kPid},
         {"args", {{"value", counter.value}}}});
  json metadata = json::object();
  for (const auto& [key, value] : trace.meta) metadata[key] = value;
  events.finish(metadata);
}

}  // namespace weft::telemetry
