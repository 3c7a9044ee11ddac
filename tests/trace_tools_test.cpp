// The trace tools (telemetry/include/weft/telemetry/trace_tools.h) on a recording whose totals
// are known by hand: two host threads, two device queues, callbacks of two effects from both
// threads (one stream run out of program order), compiles, cache lookups, stores and waits.
// Chrome export: one slice per span on its track's row, a named row per track, a flow per token
// edge from inside its source slice to inside its target; effect streams: program order beside
// execution order; the summary's rows and totals.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <sstream>
#include <streambuf>
#include <string>
#include <vector>

#include "support/make_span.h"
#include "support/raw_sqlite.h"
#include "support/slice_nesting.h"
#include "support/temp_dir.h"
#include "weft/error.h"
#include "weft/telemetry/terminal_text.h"
#include "weft/telemetry/trace_file.h"
#include "weft/telemetry/trace_tools.h"

namespace weft::telemetry {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using ::testing::ElementsAre;

const Track kMain{TrackKind::host_thread, "main (thread 1)", ""};
const Track kWorker{TrackKind::host_thread, "worker (thread 2)", ""};
const Track kQueue0{TrackKind::queue, "cpu:0 queue", "cpu:0"};
const Track kQueue1{TrackKind::queue, "cpu:1 queue", "cpu:1"};
const Track kCallbacks0{TrackKind::callback, "callbacks cpu:0 level 0", "cpu:0"};
const Track kCallbacks1{TrackKind::callback, "callbacks cpu:1 level 0", "cpu:1"};
const Track kRuntime{TrackKind::runtime, "runtime cpu:0", "cpu:0"};
const Track kWriter{TrackKind::cache_writer, "cache writer", ""};

using testing::make_span;

Span callback(Id id, const Track& track, const std::string& thread, const std::string& effect,
              std::int64_t seq, std::int64_t start, std::int64_t end, bool ordered,
              std::int64_t receive_wait, const std::string& status = "ok") {
  Span span = make_span(id, SpanKind::callback, track,
                        effect.empty() ? "host_callback" : "debug_print", start, end,
                        {{"thread", thread},
                         {"ordered", ordered ? "true" : "false"},
                         {"status", status},
                         {"receive_wait_ns", std::to_string(receive_wait)}});
  span.effect = effect;
  span.seq = seq;
  return span;
}

// The recording; spans are listed out of order and sorted as read_trace sorts them.
Trace hand_trace() {
  Trace t;
  t.meta = {{"command", "app --steps 3"}, {"format", "weft-trace"}, {"version", "1"}};
  t.tracks = {kMain, kWorker, kQueue0, kQueue1, kCallbacks0, kCallbacks1, kRuntime, kWriter};
  const std::string main = kMain.name, worker = kWorker.name;
  t.spans = {
      make_span(1, SpanKind::dispatch, kMain, "f", 1000, 1500, {{"device", "cpu:0"}}),
      make_span(2, SpanKind::compile, kMain, "f", 1100, 1400),
      make_span(3, SpanKind::compile_phase, kMain, "codegen", 1150, 1250),
      make_span(4, SpanKind::cache_lookup, kMain, "f", 1260, 1300,
                {{"status", "miss"}, {"reason", "not_found"}, {"device", "cpu:0"}}),
      make_span(5, SpanKind::dispatch, kWorker, "g", 1200, 2200, {{"device", "cpu:1"}}),
      make_span(6, SpanKind::compile, kWorker, "g", 1210, 1710),
      make_span(7, SpanKind::cache_lookup, kWorker, "g", 1220, 1230,
                {{"status", "hit"}, {"reason", ""}}),
      make_span(8, SpanKind::kernel, kQueue0, "k_a", 1600, 1800,
                {{"program", "100"}, {"queue_wait_ns", "40"}, {"device", "cpu:0"}}),
      make_span(9, SpanKind::kernel, kQueue0, "k_a", 1850, 1900,
                {{"program", "100"}, {"queue_wait_ns", "10"}}),
      make_span(10, SpanKind::kernel, kQueue1, "k_b", 1750, 2050,
                {{"program", "200"}, {"queue_wait_ns", "25"}}),
      make_span(11, SpanKind::kernel, kQueue1, "k_b", 2060, 2060,
                {{"program", "200"}, {"status", "failed (-5)"}}),
      // No program (or one the trace lacks, or not a number): the kernel's own name.
      make_span(12, SpanKind::kernel, kQueue1, "k_c", 2070, 2080, {{"queue_wait_ns", "abc"}}),
      make_span(13, SpanKind::kernel, kQueue1, "k_c", 2090, 2095, {{"program", "999"}}),
      make_span(14, SpanKind::kernel, kQueue1, "k_c", 2096, 2100, {{"program", "x"}}),
      make_span(15, SpanKind::transfer, kMain, "upload", 1010, 1060, {{"device", "cpu:0"}}),
      make_span(16, SpanKind::transfer, kWorker, "upload", 1205, 1215, {{"device", "cpu:1"}}),
      make_span(17, SpanKind::transfer, kMain, "download", 2300, 2400, {{"device", "cpu:0"}}),
      make_span(18, SpanKind::cache_lookup, kWorker, "g2", 2500, 2510,
                {{"status", "miss"}, {"reason", "not_found"}}),
      make_span(19, SpanKind::cache_lookup, kMain, "h", 2520, 2530,
                {{"status", "miss"}, {"reason", "plan_mismatch"}}),
      make_span(20, SpanKind::cache_store, kWriter, "f", 2600, 2700),
      make_span(21, SpanKind::loop_iteration, kRuntime, "while", 1900, 1950),
      make_span(22, SpanKind::predicate_read, kRuntime, "while", 1950, 1960),
      // "print" from the main thread, in program order (the last one failed).
      callback(30, kCallbacks0, main, "print", 1, 3000, 3100, true, 5),
      callback(31, kCallbacks0, main, "print", 2, 3200, 3300, true, 7),
      callback(32, kCallbacks0, main, "print", 3, 3400, 3450, true, 0, "failed: boom"),
      // "log" from the worker: run as 1, 3, 2, 4.
      callback(40, kCallbacks1, worker, "log", 1, 3050, 3060, true, 1),
      callback(41, kCallbacks1, worker, "log", 3, 3150, 3170, true, 1),
      callback(42, kCallbacks1, worker, "log", 2, 3250, 3290, true, 1),
      callback(43, kCallbacks1, worker, "log", 4, 3350, 3400, true, 1),
      // "print" from the worker too, in order.
      callback(50, kCallbacks1, worker, "print", 1, 3500, 3510, true, 2),
      callback(51, kCallbacks1, worker, "print", 2, 3600, 3620, true, 2),
      // Unordered callbacks from the main thread, run in the other order.
      callback(60, kCallbacks0, main, "", 2, 3700, 3710, false, 2),
      callback(61, kCallbacks0, main, "", 1, 3800, 3830, false, 3),
      make_span(70, SpanKind::barrier_wait, kMain, "effects_barrier", 4000, 4300),
      make_span(71, SpanKind::barrier_wait, kWorker, "effects_barrier", 4100, 4200),
      make_span(72, SpanKind::array_wait, kMain, "to_host", 4400, 4450),
  };
  std::stable_sort(t.spans.begin(), t.spans.end(), [](const Span& a, const Span& b) {
    return a.start_ns != b.start_ns ? a.start_ns < b.start_ns : a.id < b.id;
  });
  t.edges = {{30, 31, "print"}, {31, 32, "print"}, {40, 42, "log"},  {42, 41, "log"},
             {41, 43, "log"},   {1, 8, ""},        {8, 30, "print"}, {50, 999, "lost"}};
  Program f;
  f.id = 100;
  f.function = "f";
  f.device = "cpu:0";
  f.kernels = {{"k_a", "elementwise", {"add", "mul"}}};
  Program g;
  g.id = 200;
  g.function = "g";
  g.device = "cpu:1";
  g.kernels = {{"k_b", "reduce", {"sum"}}};
  t.programs = {f, g};
  t.reindex();
  return t;
}

const Span& span_with_id(const Trace& trace, Id id) {
  const std::ptrdiff_t index = trace.index_of(id);
  EXPECT_GE(index, 0) << id;
  return trace.spans.at(static_cast<std::size_t>(std::max<std::ptrdiff_t>(index, 0)));
}

std::vector<Id> ids(const Trace& trace, const std::vector<std::size_t>& indices) {
  std::vector<Id> out;
  for (std::size_t i : indices) out.push_back(trace.spans.at(i).id);
  return out;
}

double us(std::int64_t ns) {
  return static_cast<double>(ns) / 1000.0;
}

// ---------------------------------------------------------------------------------------------

TEST(ChromeTrace, OneSlicePerSpanOnItsTracksRow) {
  const Trace trace = hand_trace();
  std::ostringstream out;
  write_chrome_trace(trace, out);
  const json document = json::parse(out.str());
  ASSERT_TRUE(document.contains("traceEvents"));
  const json& events = document["traceEvents"];
  ASSERT_TRUE(events.is_array());
  EXPECT_EQ(document["otherData"]["command"], "app --steps 3");

  // Rows: one named thread per track.
  std::map<std::string, int> tid_of;
  std::set<int> tids;
  std::string process;
  for (const json& e : events) {
    if (e["ph"] != "M") continue;
    if (e["name"] == "thread_name") {
      const std::string name = e["args"]["name"].get<std::string>();
      EXPECT_EQ(tid_of.count(name), 0u) << "two rows named " << name;
      tid_of[name] = e["tid"].get<int>();
      tids.insert(e["tid"].get<int>());
    } else if (e["name"] == "process_name") {
      process = e["args"]["name"].get<std::string>();
    }
  }
  EXPECT_EQ(process, "weft: app --steps 3");
  // And one more: the worker's compile (and the lookup inside it) overlaps its upload without
  // nesting, so it goes on a row of its own beside the worker's.
  const std::string worker_beside = kWorker.name + " #2";
  ASSERT_EQ(tid_of.size(), trace.tracks.size() + 1);
  EXPECT_EQ(tids.size(), trace.tracks.size() + 1);
  for (const Track& track : trace.tracks) EXPECT_EQ(tid_of.count(track.name), 1u) << track.name;
  EXPECT_EQ(tid_of.count(worker_beside), 1u);

  // Slices: exactly one per span, named and timed as the span, on its track's row.
  std::set<Id> seen;
  std::size_t slices = 0;
  for (const json& e : events) {
    if (e["ph"] != "X") continue;
    ++slices;
    const Id id = e["args"]["id"].get<Id>();
    EXPECT_TRUE(seen.insert(id).second) << "two slices for span " << id;
    const Span& span = span_with_id(trace, id);
    SCOPED_TRACE("span " + std::to_string(id));
    EXPECT_EQ(e["name"], span.name);
    EXPECT_EQ(e["cat"], std::string(to_string(span.kind)));
    EXPECT_EQ(e["pid"], 1);
    EXPECT_EQ(e["tid"], tid_of.at(span.id == 6 || span.id == 7 ? worker_beside : span.track.name));
    EXPECT_DOUBLE_EQ(e["ts"].get<double>(), us(span.start_ns));
    EXPECT_DOUBLE_EQ(e["dur"].get<double>(), us(span.end_ns - span.start_ns));
    for (const auto& [key, value] : span.args) {
      EXPECT_EQ(e["args"][key], value) << key;
    }
    if (span.seq >= 0) {
      EXPECT_EQ(e["args"]["seq"], span.seq);
    }
  }
  EXPECT_EQ(slices, trace.spans.size());
}

TEST(ChromeTrace, OneFlowPerEdgeFromInsideItsSourceToInsideItsTarget) {
  const Trace trace = hand_trace();
  std::ostringstream out;
  write_chrome_trace(trace, out);
  const json document = json::parse(out.str());
  std::map<std::string, int> tid_of;
  std::map<std::uint64_t, json> starts, finishes;
  for (const json& e : document["traceEvents"]) {
    if (e["ph"] == "M" && e["name"] == "thread_name")
      tid_of[e["args"]["name"].get<std::string>()] = e["tid"].get<int>();
    if (e["ph"] == "s") {
      EXPECT_TRUE(starts.emplace(e["id"].get<std::uint64_t>(), e).second);
    }
    if (e["ph"] == "f") {
      EXPECT_TRUE(finishes.emplace(e["id"].get<std::uint64_t>(), e).second);
    }
  }
  // The edge to a span the trace lacks has no flow.
  std::vector<Edge> drawn;
  for (const Edge& edge : trace.edges)
    if (trace.index_of(edge.from) >= 0 && trace.index_of(edge.to) >= 0) drawn.push_back(edge);
  ASSERT_EQ(drawn.size(), trace.edges.size() - 1);
  ASSERT_EQ(starts.size(), drawn.size());
  ASSERT_EQ(finishes.size(), drawn.size());

  auto inside = [](const json& e, const Span& span) {
    const double ts = e["ts"].get<double>();
    return ts >= us(span.start_ns) && ts <= us(span.end_ns);
  };
  std::set<std::uint64_t> used;
  for (const Edge& edge : drawn) {
    const Span& from = span_with_id(trace, edge.from);
    const Span& to = span_with_id(trace, edge.to);
    bool found = false;
    for (const auto& [id, s] : starts) {
      if (used.count(id) || !finishes.count(id)) continue;
      const json& f = finishes.at(id);
      if (s["tid"] != tid_of.at(from.track.name) || !inside(s, from)) continue;
      if (f["tid"] != tid_of.at(to.track.name) || !inside(f, to)) continue;
      if (s["name"] != f["name"]) continue;
      EXPECT_EQ(f["bp"], "e");
      EXPECT_THAT(s["name"].get<std::string>(), ::testing::HasSubstr(edge.effect));
      used.insert(id);
      found = true;
      break;
    }
    EXPECT_TRUE(found) << "no flow for the edge " << edge.from << " -> " << edge.to;
  }
}

TEST(ChromeTrace, EmptyTraceIsValidJson) {
  Trace trace;
  std::ostringstream out;
  write_chrome_trace(trace, out);
  const json document = json::parse(out.str());
  std::size_t slices = 0;
  for (const json& e : document["traceEvents"]) slices += e["ph"] == "X";
  EXPECT_EQ(slices, 0u);
}

TEST(ChromeTrace, TextThatIsNotUtf8StillMakesJson) {
  Trace trace;
  trace.meta["command"] = "bad \xff\xfe bytes";
  trace.tracks = {kMain};
  trace.spans = {make_span(1, SpanKind::dispatch, kMain, "f\xc3", 0, 10, {{"k\x80", "v\xff"}})};
  trace.reindex();
  std::ostringstream out;
  write_chrome_trace(trace, out);
  const json document = json::parse(out.str());  // throws if the output is not valid UTF-8
  std::size_t slices = 0;
  for (const json& e : document["traceEvents"]) slices += e["ph"] == "X";
  EXPECT_EQ(slices, 1u);
}

// The export as it was before it wrote as it goes: the whole document built in memory. The
// streamed export must make the same document.
json whole_document(const Trace& trace) {
  constexpr int kPid = 1;
  auto row_rank = [](TrackKind kind) {
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
  };
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
                      {"ts", us(span.start_ns)},
                      {"dur", us(span.end_ns - span.start_ns)},
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
                      {"ts", us(a.start_ns)},
                      {"pid", kPid},
                      {"tid", tid_of(a.track)}});
    events.push_back({{"ph", "f"},
                      {"bp", "e"},
                      {"id", flow},
                      {"name", name},
                      {"cat", "token"},
                      {"ts", us(b.start_ns)},
                      {"pid", kPid},
                      {"tid", tid_of(b.track)}});
  }
  json metadata = json::object();
  for (const auto& [key, value] : trace.meta) metadata[key] = value;
  return {{"traceEvents", std::move(events)},
          {"displayTimeUnit", "ns"},
          {"otherData", std::move(metadata)}};
}

TEST(ChromeTrace, StreamedDocumentIsTheOneBuiltWhole) {
  // Where every track's spans nest (the worker's upload, which overlaps its compile, left out).
  Trace trace = hand_trace();
  std::erase_if(trace.spans, [](const Span& span) { return span.id == 16; });
  trace.reindex();
  std::ostringstream out;
  write_chrome_trace(trace, out);
  EXPECT_EQ(json::parse(out.str()), whole_document(trace));
}

// Records the largest piece written at once.
class LargestWrite : public std::streambuf {
 public:
  std::size_t largest = 0, total = 0;

 protected:
  std::streamsize xsputn(const char*, std::streamsize count) override {
    largest = std::max(largest, static_cast<std::size_t>(count));
    total += static_cast<std::size_t>(count);
    return count;
  }
  int_type overflow(int_type c) override {
    largest = std::max<std::size_t>(largest, 1);
    ++total;
    return traits_type::not_eof(c);
  }
};

TEST(ChromeTrace, WritesEventByEventNotOneDocument) {
  // 20,000 spans make megabytes of JSON; no piece of it is held whole.
  Trace trace;
  trace.tracks = {kMain};
  for (Id id = 1; id <= 20'000; ++id)
    trace.spans.push_back(make_span(id, SpanKind::dispatch, kMain, "f",
                                    static_cast<std::int64_t>(id) * 10,
                                    static_cast<std::int64_t>(id) * 10 + 5,
                                    {{"device", "cpu:0"}, {"location", "demo.cpp:42"}}));
  trace.reindex();
  LargestWrite sink;
  std::ostream out(&sink);
  write_chrome_trace(trace, out);
  EXPECT_GT(sink.total, 2'000'000u);
  EXPECT_LT(sink.largest, 4096u);
}

TEST(ChromeTrace, OverlappingSpansOfATrackGoOnThreadsOfTheirOwn) {
  // Two kernels on one queue that overlap without nesting, a lookup beside a build phase, and
  // the hand trace's upload beside its compile: Perfetto would drop one of each pair.
  Trace trace = hand_trace();
  trace.spans.push_back(make_span(80, SpanKind::kernel, kQueue0, "k_x", 5000, 5100));
  trace.spans.push_back(make_span(81, SpanKind::kernel, kQueue0, "k_y", 5050, 5150));
  trace.spans.push_back(make_span(82, SpanKind::kernel, kQueue0, "k_z", 5060, 5200));
  trace.spans.push_back(make_span(83, SpanKind::compile, kMain, "h", 6000, 6500));
  trace.spans.push_back(make_span(84, SpanKind::compile_phase, kMain, "build", 6100, 6300));
  trace.spans.push_back(make_span(85, SpanKind::cache_lookup, kMain, "h", 6050, 6150));
  trace.edges.push_back({81, 84, "print"});
  std::stable_sort(trace.spans.begin(), trace.spans.end(), [](const Span& a, const Span& b) {
    return a.start_ns != b.start_ns ? a.start_ns < b.start_ns : a.id < b.id;
  });
  trace.reindex();
  std::ostringstream out;
  write_chrome_trace(trace, out);
  const json document = json::parse(out.str());
  EXPECT_EQ(testing::partial_overlaps(document), 0u);

  std::map<int, std::string> thread_name;
  for (const json& e : document["traceEvents"])
    if (e["ph"] == "M" && e["name"] == "thread_name")
      thread_name[e["tid"].get<int>()] = e["args"]["name"].get<std::string>();
  std::map<Id, std::string> row_of;
  std::size_t slices = 0;
  for (const json& e : document["traceEvents"]) {
    if (e["ph"] != "X") continue;
    ++slices;
    row_of[e["args"]["id"].get<Id>()] = thread_name.at(e["tid"].get<int>());
  }
  EXPECT_EQ(slices, trace.spans.size()) << "every span keeps its one slice";
  // The first of each pair stays on its track's row; the others go on numbered rows beside it.
  EXPECT_EQ(row_of.at(80), "cpu:0 queue");
  EXPECT_EQ(row_of.at(81), "cpu:0 queue #2");
  EXPECT_EQ(row_of.at(82), "cpu:0 queue #3");
  EXPECT_EQ(row_of.at(83), "main (thread 1)");
  EXPECT_EQ(row_of.at(85), "main (thread 1)");
  EXPECT_EQ(row_of.at(84), "main (thread 1) #2");
  EXPECT_EQ(row_of.at(16), "worker (thread 2)");
  EXPECT_EQ(row_of.at(6), "worker (thread 2) #2");
  EXPECT_EQ(row_of.at(7), "worker (thread 2) #2") << "a lookup goes under its compile";
  // Spans that nest stay on the track's row.
  EXPECT_EQ(row_of.at(2), "main (thread 1)");
  EXPECT_EQ(row_of.at(3), "main (thread 1)");
  // A flow leaves and enters the rows its spans are on.
  for (const json& e : document["traceEvents"]) {
    if (e["ph"] == "s" && e["ts"].get<double>() == us(5050)) {
      EXPECT_EQ(thread_name.at(e["tid"].get<int>()), "cpu:0 queue #2");
    }
    if (e["ph"] == "f" && e["ts"].get<double>() == us(6100)) {
      EXPECT_EQ(thread_name.at(e["tid"].get<int>()), "main (thread 1) #2");
    }
  }
}

TEST(TerminalText, KeepsPrintableTextAndEscapesTheRest) {
  EXPECT_EQ(terminal_text("f/k_a on cpu:0"), "f/k_a on cpu:0");
  EXPECT_EQ(terminal_text("caf\xc3\xa9 \xe2\x9c\x93 \xf0\x9f\x98\x80"),
            "caf\xc3\xa9 \xe2\x9c\x93 \xf0\x9f\x98\x80");  // é, a check mark, an emoji
  EXPECT_EQ(terminal_text(std::string("a\x1b[2J\r\0\x7f\tb", 10)),
            "a\\x1b[2J\\x0d\\x00\\x7f\\x09b");
  EXPECT_EQ(terminal_text("\xc2\x9b"), "\\xc2\\x9b");                    // the C1 control CSI
  EXPECT_EQ(terminal_text("caf\xe9"), "caf\\xe9");                       // Latin-1
  EXPECT_EQ(terminal_text("\xc0\xaf"), "\\xc0\\xaf");                    // an overlong '/'
  EXPECT_EQ(terminal_text("\xed\xa0\x80"), "\\xed\\xa0\\x80");           // a surrogate
  EXPECT_EQ(terminal_text("\xf4\x90\x80\x80"), "\\xf4\\x90\\x80\\x80");  // past U+10FFFF
  EXPECT_EQ(terminal_text("\xe2\x9c"), "\\xe2\\x9c");                    // cut short
}

TEST(EffectStreams, ProgramOrderBesideExecutionOrder) {
  const Trace trace = hand_trace();
  const std::vector<EffectStream> streams = effect_streams(trace);
  ASSERT_EQ(streams.size(), 4u);
  // By thread, then effect.
  EXPECT_EQ(streams[0].thread, kMain.name);
  EXPECT_EQ(streams[0].effect, "");
  EXPECT_EQ(streams[1].thread, kMain.name);
  EXPECT_EQ(streams[1].effect, "print");
  EXPECT_EQ(streams[2].thread, kWorker.name);
  EXPECT_EQ(streams[2].effect, "log");
  EXPECT_EQ(streams[3].thread, kWorker.name);
  EXPECT_EQ(streams[3].effect, "print");

  // Unordered callbacks, run in the other order.
  EXPECT_FALSE(streams[0].ordered);
  EXPECT_EQ(ids(trace, streams[0].program_order), (std::vector<Id>{61, 60}));
  EXPECT_EQ(ids(trace, streams[0].execution_order), (std::vector<Id>{60, 61}));
  EXPECT_EQ(streams[0].out_of_order, 2u);

  EXPECT_TRUE(streams[1].ordered);
  EXPECT_EQ(ids(trace, streams[1].program_order), (std::vector<Id>{30, 31, 32}));
  EXPECT_EQ(streams[1].execution_order, streams[1].program_order);
  EXPECT_EQ(streams[1].out_of_order, 0u);

  // The worker's "log": seq 1, 3, 2, 4 by start time; the middle two swapped.
  EXPECT_TRUE(streams[2].ordered);
  EXPECT_EQ(ids(trace, streams[2].program_order), (std::vector<Id>{40, 42, 41, 43}));
  EXPECT_EQ(ids(trace, streams[2].execution_order), (std::vector<Id>{40, 41, 42, 43}));
  EXPECT_EQ(streams[2].out_of_order, 2u);
  for (std::size_t k = 1; k < streams[2].program_order.size(); ++k)
    EXPECT_LT(trace.spans[streams[2].program_order[k - 1]].seq,
              trace.spans[streams[2].program_order[k]].seq);
  for (std::size_t k = 1; k < streams[2].execution_order.size(); ++k)
    EXPECT_LE(trace.spans[streams[2].execution_order[k - 1]].start_ns,
              trace.spans[streams[2].execution_order[k]].start_ns);

  EXPECT_EQ(ids(trace, streams[3].program_order), (std::vector<Id>{50, 51}));
  EXPECT_EQ(streams[3].out_of_order, 0u);
}

TEST(EffectStreams, OrderedAndUnorderedCallbacksOfOneEffectAreSeparateStreams) {
  Trace trace;
  trace.tracks = {kCallbacks0};
  const std::string main = kMain.name;
  trace.spans = {callback(1, kCallbacks0, main, "print", 2, 100, 110, false, 0),
                 callback(2, kCallbacks0, main, "print", 1, 200, 210, true, 0),
                 callback(3, kCallbacks0, main, "print", 1, 300, 310, false, 0),
                 callback(4, kCallbacks0, main, "print", 2, 400, 410, true, 0)};
  trace.reindex();
  const std::vector<EffectStream> streams = effect_streams(trace);
  ASSERT_EQ(streams.size(), 2u);
  EXPECT_TRUE(streams[0].ordered);
  EXPECT_EQ(ids(trace, streams[0].program_order), (std::vector<Id>{2, 4}));
  EXPECT_EQ(streams[0].out_of_order, 0u);
  EXPECT_FALSE(streams[1].ordered);
  EXPECT_EQ(ids(trace, streams[1].program_order), (std::vector<Id>{3, 1}));
  EXPECT_EQ(ids(trace, streams[1].execution_order), (std::vector<Id>{1, 3}));
  EXPECT_EQ(streams[1].out_of_order, 2u);
  const TraceSummary s = summarize(trace);
  ASSERT_EQ(s.effects.size(), 2u);
  EXPECT_EQ(s.effects[0].name, "print");
  EXPECT_TRUE(s.effects[0].ordered);
  EXPECT_EQ(s.effects[0].count, 2u);
  EXPECT_EQ(s.effects[0].out_of_order, 0u);
  EXPECT_EQ(s.effects[1].name, "print");
  EXPECT_FALSE(s.effects[1].ordered);
  EXPECT_EQ(s.effects[1].count, 2u);
  EXPECT_EQ(s.effects[1].out_of_order, 0u);
}

TEST(EffectStreams, NoCallbacksNoStreams) {
  Trace trace;
  trace.spans = {make_span(1, SpanKind::kernel, kQueue0, "k", 0, 1)};
  trace.reindex();
  EXPECT_TRUE(effect_streams(trace).empty());
  EXPECT_TRUE(summarize(trace).effects.empty());
}

void expect_row(const TraceSummary::Row& row, const std::string& name, const std::string& device,
                std::size_t count, std::int64_t total, std::int64_t max, std::int64_t wait,
                std::size_t failed) {
  SCOPED_TRACE(name + " on " + device);
  EXPECT_EQ(row.name, name);
  EXPECT_EQ(row.device, device);
  EXPECT_EQ(row.count, count);
  EXPECT_EQ(row.total_ns, total);
  EXPECT_EQ(row.max_ns, max);
  EXPECT_EQ(row.wait_ns, wait);
  EXPECT_EQ(row.failed, failed);
}

void expect_hand_summary(const TraceSummary& s, std::size_t edges) {
  EXPECT_EQ(s.spans, 36u);
  EXPECT_EQ(s.edges, edges);
  EXPECT_EQ(s.duration_ns, 4450 - 1000);

  // Kernels per (function/kernel, device), by total time.
  ASSERT_EQ(s.kernels.size(), 3u);
  expect_row(s.kernels[0], "g/k_b", "cpu:1", 2, 300 + 0, 300, 25, 1);
  expect_row(s.kernels[1], "f/k_a", "cpu:0", 2, 200 + 50, 200, 40 + 10, 0);
  // k_c: one without a program, one naming a program the trace lacks, one naming "x".
  expect_row(s.kernels[2], "k_c", "cpu:1", 3, 10 + 5 + 4, 10, 0, 0);

  ASSERT_EQ(s.dispatches.size(), 2u);
  expect_row(s.dispatches[0], "g", "cpu:1", 1, 1000, 1000, 0, 0);
  expect_row(s.dispatches[1], "f", "cpu:0", 1, 500, 500, 0, 0);

  ASSERT_EQ(s.transfers.size(), 3u);
  expect_row(s.transfers[0], "download", "cpu:0", 1, 100, 100, 0, 0);
  expect_row(s.transfers[1], "upload", "cpu:0", 1, 50, 50, 0, 0);
  expect_row(s.transfers[2], "upload", "cpu:1", 1, 10, 10, 0, 0);

  // Effects by name, over both threads' streams.
  ASSERT_EQ(s.effects.size(), 3u);
  expect_row(s.effects[0], "(unnamed)", "", 2, 10 + 30, 30, 2 + 3, 0);
  EXPECT_FALSE(s.effects[0].ordered);
  EXPECT_EQ(s.effects[0].out_of_order, 0u) << "unordered callbacks have no order to break";
  expect_row(s.effects[1], "log", "", 4, 10 + 20 + 40 + 50, 50, 4, 0);
  EXPECT_TRUE(s.effects[1].ordered);
  EXPECT_EQ(s.effects[1].out_of_order, 2u);
  expect_row(s.effects[2], "print", "", 5, 100 + 100 + 50 + 10 + 20, 100, 5 + 7 + 0 + 2 + 2, 1);
  EXPECT_TRUE(s.effects[2].ordered);
  EXPECT_EQ(s.effects[2].out_of_order, 0u);

  EXPECT_EQ(s.compiles, 2u);
  EXPECT_EQ(s.compile_ns, 300 + 500);
  EXPECT_EQ(s.cache_hits, 1u);
  EXPECT_EQ(s.cache_misses, 3u);
  EXPECT_THAT(s.miss_reasons, ElementsAre("not_found x2", "plan_mismatch x1"));
  EXPECT_EQ(s.cache_stores, 1u);
  EXPECT_EQ(s.barrier_wait_ns, 300) << "the worker waited while the main thread did";
  EXPECT_EQ(s.array_wait_ns, 50);
}

TEST(Summary, TotalsMatchAHandCount) {
  const Trace trace = hand_trace();
  ASSERT_EQ(trace.spans.size(), 36u);
  expect_hand_summary(summarize(trace), trace.edges.size());
}

TEST(Summary, OverlappingWaitsCountOnce) {
  // Four kernels queued together (each waited from 0 to its start), callbacks runnable at once,
  // and two threads in a barrier at the same time: the waits cover the wall clock once.
  Trace trace;
  trace.tracks = {kQueue0, kCallbacks0, kMain, kWorker};
  for (Id id = 1; id <= 4; ++id) {
    const auto start = static_cast<std::int64_t>(id) * 100;
    trace.spans.push_back(make_span(id, SpanKind::kernel, kQueue0, "k", start, start + 100,
                                    {{"queue_wait_ns", std::to_string(start)}}));
    trace.spans.push_back(callback(10 + id, kCallbacks0, "main", "print",
                                   static_cast<std::int64_t>(id), 1000 + start, 1000 + start + 10,
                                   true, start));
  }
  trace.spans.push_back(make_span(20, SpanKind::barrier_wait, kMain, "effects_barrier", 0, 500));
  trace.spans.push_back(
      make_span(21, SpanKind::barrier_wait, kWorker, "effects_barrier", 100, 600));
  trace.spans.push_back(make_span(22, SpanKind::array_wait, kMain, "to_host", 700, 800));
  trace.spans.push_back(make_span(23, SpanKind::array_wait, kWorker, "to_host", 900, 950));
  std::stable_sort(trace.spans.begin(), trace.spans.end(), [](const Span& a, const Span& b) {
    return a.start_ns != b.start_ns ? a.start_ns < b.start_ns : a.id < b.id;
  });
  trace.reindex();
  const TraceSummary s = summarize(trace);
  ASSERT_EQ(s.kernels.size(), 1u);
  EXPECT_EQ(s.kernels[0].wait_ns, 400) << "not 100 + 200 + 300 + 400";
  ASSERT_EQ(s.effects.size(), 1u);
  EXPECT_EQ(s.effects[0].wait_ns, 400);
  EXPECT_EQ(s.barrier_wait_ns, 600) << "not 500 + 500";
  EXPECT_EQ(s.array_wait_ns, 150) << "waits apart still add up";
}

TEST(Summary, SameFromTheTraceFile) {
  // Written by the sink and read back (times shifted to the recording's origin, the edge to the
  // missing span dropped), the summary is the same.
  test::TempDir dir("weft-trace-tools-test");
  const fs::path path = dir.path() / "tools.db";
  const Trace hand = hand_trace();
  {
    TraceFileSink sink(path, "app --steps 3");
    sink.write(hand.spans, hand.edges, hand.programs);
  }
  const Trace trace = read_trace(path);
  ASSERT_EQ(trace.spans.size(), hand.spans.size());
  for (std::size_t i = 0; i < trace.spans.size(); ++i)
    ASSERT_EQ(trace.spans[i].id, hand.spans[i].id) << "the file sorts spans differently";
  expect_hand_summary(summarize(trace), hand.edges.size() - 1);

  // And the effect streams.
  const std::vector<EffectStream> streams = effect_streams(trace);
  ASSERT_EQ(streams.size(), 4u);
  EXPECT_EQ(streams[2].out_of_order, 2u);
  EXPECT_EQ(ids(trace, streams[2].program_order), (std::vector<Id>{40, 42, 41, 43}));

  // And the Chrome export has a slice per span and a flow per kept edge.
  std::ostringstream out;
  write_chrome_trace(trace, out);
  const json document = json::parse(out.str());
  std::size_t slices = 0, starts = 0, finishes = 0;
  for (const json& e : document["traceEvents"]) {
    slices += e["ph"] == "X";
    starts += e["ph"] == "s";
    finishes += e["ph"] == "f";
  }
  EXPECT_EQ(slices, hand.spans.size());
  EXPECT_EQ(starts, hand.edges.size() - 1);
  EXPECT_EQ(finishes, hand.edges.size() - 1);
}

// A trace file is untrusted: whatever times and numbers it holds, the tools must not overflow
// (undefined behaviour; in practice negative durations and totals). Refusing the file is fine.
std::optional<Trace> read_tampered(const fs::path& path, const std::string& sql) {
  {
    TraceFileSink sink(path, "tampered");
    const std::vector<Span> spans = {
        make_span(1, SpanKind::kernel, kQueue0, "k", 100, 200, {{"queue_wait_ns", "1"}}),
        make_span(2, SpanKind::kernel, kQueue0, "k", 300, 400, {{"queue_wait_ns", "1"}}),
        make_span(3, SpanKind::barrier_wait, kMain, "effects_barrier", 500, 600),
        make_span(4, SpanKind::barrier_wait, kMain, "effects_barrier", 700, 800)};
    sink.write(spans, {}, {});
  }
  test::raw_sql(path, sql);
  try {
    return read_trace(path);
  } catch (const TraceError&) {
    return std::nullopt;
  }
}

void expect_no_negative_totals(const Trace& trace) {
  const TraceSummary s = summarize(trace);
  EXPECT_GE(s.duration_ns, 0);
  for (const TraceSummary::Row& row : s.kernels) {
    EXPECT_GE(row.total_ns, 0) << row.name;
    EXPECT_GE(row.max_ns, 0) << row.name;
    EXPECT_GE(row.wait_ns, 0) << row.name;
  }
  EXPECT_GE(s.barrier_wait_ns, 0);
  std::ostringstream out;
  write_chrome_trace(trace, out);
  const json document = json::parse(out.str());
  for (const json& e : document["traceEvents"]) {
    if (e["ph"] == "X") {
      EXPECT_GE(e["dur"].get<double>(), 0.0) << e.dump();
    }
  }
}

TEST(Summary, ExtremeTimesInAFileDoNotOverflow) {
  test::TempDir dir("weft-trace-tools-test");
  // Times past 2^60 ns from the start are refused by the reader...
  EXPECT_FALSE(read_tampered(dir.path() / "times.db",
                             "UPDATE spans SET start_ns = -9223372036854775808, end_ns = "
                             "9223372036854775807 WHERE id IN (1, 3)")
                   .has_value());
  // ...and the widest spans it accepts, summed, still give no negative (wrapped) totals.
  const std::optional<Trace> trace = read_tampered(
      dir.path() / "widest.db",
      "UPDATE spans SET start_ns = -1152921504606846976, end_ns = 1152921504606846976");
  ASSERT_TRUE(trace.has_value());
  expect_no_negative_totals(*trace);
}

TEST(Summary, HugeWaitsInAFileDoNotOverflow) {
  test::TempDir dir("weft-trace-tools-test");
  const std::optional<Trace> trace =
      read_tampered(dir.path() / "waits.db",
                    "UPDATE spans SET args = '{\"queue_wait_ns\": \"9223372036854775807\"}' "
                    "WHERE kind = 'kernel'");
  ASSERT_TRUE(trace.has_value()) << "arguments are text; the file reads";
  expect_no_negative_totals(*trace);
}

TEST(Summary, EmptyTrace) {
  const TraceSummary s = summarize(Trace{});
  EXPECT_EQ(s.spans, 0u);
  EXPECT_EQ(s.duration_ns, 0);
  EXPECT_TRUE(s.kernels.empty());
  EXPECT_TRUE(s.miss_reasons.empty());
  EXPECT_EQ(s.cache_hits + s.cache_misses, 0u);
}

}  // namespace
}  // namespace weft::telemetry
