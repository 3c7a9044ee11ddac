// Trace files (telemetry/include/weft/telemetry/trace_file.h): what TraceFileSink writes,
// read_trace reads back equal, with times relative to the recording's start; an earlier trace
// is replaced and any other file left alone; and every damaged, foreign or hostile file is
// refused with a TraceError that names the file and the problem, from a path or from bytes,
// never a crash.
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <memory>
#include <random>
#include <regex>
#include <span>
#include <string>
#include <vector>

#include "support/make_span.h"
#include "support/raw_sqlite.h"
#include "support/temp_dir.h"
#include "weft/error.h"
#include "weft/telemetry/telemetry.h"
#include "weft/telemetry/trace_file.h"

namespace weft::telemetry {
namespace {

namespace fs = std::filesystem;
using test::raw_sql;
using ::testing::HasSubstr;

using Bytes = std::vector<std::uint8_t>;

class TempDir : public test::TempDir {
 public:
  TempDir() : test::TempDir("weft-trace-file-test") {}
};

const Track kMain{TrackKind::host_thread, "main (thread 1)", ""};
const Track kWorker{TrackKind::host_thread, "worker \"two\" (thread 2)", ""};
const Track kQueue0{TrackKind::queue, "cpu:0 queue", "cpu:0"};
const Track kQueue1{TrackKind::queue, "cpu:0 queue", "cpu:1"};  // same name, other device
const Track kCallbacks{TrackKind::callback, "callbacks cpu:0 level 0", "cpu:0"};
const Track kRuntime{TrackKind::runtime, "runtime cpu:0", "cpu:0"};
const Track kCacheWriter{TrackKind::cache_writer, "cache writer", ""};

using testing::make_span;

// Bounds on the origin the sink took at its creation (spans are stored relative to it).
struct Origin {
  std::int64_t not_before = 0;
  std::int64_t not_after = 0;
};

// Records `spans`, `edges` and `programs` into `path` in one batch and closes the file.
Origin record(const fs::path& path, const std::vector<Span>& spans,
              const std::vector<Edge>& edges = {}, const std::vector<Program>& programs = {},
              const std::string& command = "weft-test run") {
  Origin origin;
  origin.not_before = now_ns();
  auto sink = std::make_unique<TraceFileSink>(path, command);
  origin.not_after = now_ns();
  sink->write(spans, edges, programs);
  sink->flush();
  return origin;
}

Bytes read_bytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return Bytes(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

void write_bytes(const fs::path& path, std::span<const std::uint8_t> bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()),
            static_cast<std::streamsize>(bytes.size()));
}

void write_text(const fs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
}

// What read_trace(path) throws: a TraceError's message, or a note that it threw something else
// or nothing.
std::string read_error(const fs::path& path) {
  try {
    const Trace trace = read_trace(path);
    return "<read " + std::to_string(trace.spans.size()) + " spans without an error>";
  } catch (const TraceError& e) {
    return e.what();
  } catch (const std::exception& e) {
    return std::string("<not a TraceError: ") + e.what() + ">";
  }
}

std::string read_error(std::span<const std::uint8_t> bytes) {
  try {
    const Trace trace = read_trace(bytes);
    return "<read " + std::to_string(trace.spans.size()) + " spans without an error>";
  } catch (const TraceError& e) {
    return e.what();
  } catch (const std::exception& e) {
    return std::string("<not a TraceError: ") + e.what() + ">";
  }
}

// Both readers refuse the file with `problem`; the file's reader names it, the bytes' reader
// says how many bytes it was given.
void expect_refused(const fs::path& path, const std::string& problem) {
  SCOPED_TRACE(path.string());
  const std::string from_file = read_error(path);
  EXPECT_THAT(from_file, HasSubstr("the trace file " + path.string()));
  EXPECT_THAT(from_file, HasSubstr(problem));
  const Bytes bytes = read_bytes(path);
  const std::string from_bytes = read_error(bytes);
  EXPECT_THAT(from_bytes, HasSubstr("(" + std::to_string(bytes.size()) + " bytes)"));
  EXPECT_THAT(from_bytes, HasSubstr(problem));
}

Args sorted(Args args) {
  std::sort(args.begin(), args.end());
  return args;
}

// A recording with every span kind on every track kind, arguments that need escaping, callbacks
// with their program order, parents, and edges; spans are listed out of start order.
struct Sample {
  std::vector<Span> spans;
  std::vector<Edge> edges;
  std::vector<Program> programs;
};

Sample sample(std::int64_t base) {
  Sample s;
  const Track tracks[] = {kMain, kQueue0, kCallbacks, kRuntime, kCacheWriter, kQueue1, kWorker};
  for (int k = 0; k < kSpanKindCount; ++k) {
    const auto kind = static_cast<SpanKind>(k);
    // Later kinds start earlier: the file's order is not the order they were written in.
    const std::int64_t start = base + (kSpanKindCount - k) * 1000;
    Span span =
        make_span(100 + static_cast<Id>(k), kind, tracks[k % 7],
                  "span " + std::string(to_string(kind)), start, start + 500 + k,
                  {{"k", std::to_string(k)},
                   {"quote", "say \"hi\", then 'bye'"},
                   {"unicode", "\u03c0 \u2248 3.14159 \u2014 \u65e5\u672c\u8a9e \U0001F642"},
                   {"z \"key\"\\", "a\\b\n\tc"}});
    if (k > 0) span.parent = 100;
    if (kind == SpanKind::callback) {
      span.effect = "print";
      span.seq = 3;
    }
    s.spans.push_back(std::move(span));
  }
  // Two spans starting together come back by id.
  s.spans.push_back(make_span(201, SpanKind::kernel, kQueue0, "k_tie_b", base, base + 10));
  s.spans.push_back(make_span(200, SpanKind::kernel, kQueue0, "k_tie_a", base, base + 20));

  s.edges = {{100, 105, "print"}, {105, 111, ""}, {101, 999999, "lost"}, {0, 100, "none"}};

  Program f;
  f.id = 7;
  f.function = "f \u03bb";
  f.device = "cpu:0";
  f.cache_key = "0123456789abcdef0123456789abcdef";
  f.cache_status = "miss";
  f.ir = "graph @f(%0: f32[4]) {\n  %1 = add %0, %0\n  return %1\n}  // \"quoted\"";
  f.source = "__kernel void k0(__global float* x) { x[0] = 1.0f; }\n";
  f.kernels = {{"k0", "elementwise", {"add", "mul", "exp"}}, {"k1", "reduce", {}}};
  Program g;
  g.id = 3;
  g.function = "g";
  g.device = "cpu:1";
  g.cache_status = "off";
  s.programs = {f, g};
  return s;
}

void expect_same_program(const Program& got, const Program& want) {
  EXPECT_EQ(got.id, want.id);
  EXPECT_EQ(got.function, want.function);
  EXPECT_EQ(got.device, want.device);
  EXPECT_EQ(got.cache_key, want.cache_key);
  EXPECT_EQ(got.cache_status, want.cache_status);
  EXPECT_EQ(got.ir, want.ir);
  EXPECT_EQ(got.source, want.source);
  ASSERT_EQ(got.kernels.size(), want.kernels.size());
  for (std::size_t i = 0; i < got.kernels.size(); ++i) {
    EXPECT_EQ(got.kernels[i].name, want.kernels[i].name);
    EXPECT_EQ(got.kernels[i].kind, want.kernels[i].kind);
    EXPECT_EQ(got.kernels[i].fused_ops, want.kernels[i].fused_ops);
  }
}

// ---------------------------------------------------------------------------------------------
// Writing and reading back.

TEST(TraceFile, RoundTripsSpansEdgesAndPrograms) {
  TempDir dir;
  const fs::path path = dir.path() / "trace.db";
  const std::int64_t base = now_ns() + 5'000'000;
  const Sample s = sample(base);
  const Origin origin = record(path, s.spans, s.edges, s.programs);

  const Trace trace = read_trace(path);
  ASSERT_EQ(trace.spans.size(), s.spans.size());

  // Spans come back by start time, then id.
  std::vector<Span> want = s.spans;
  std::stable_sort(want.begin(), want.end(), [](const Span& a, const Span& b) {
    return a.start_ns != b.start_ns ? a.start_ns < b.start_ns : a.id < b.id;
  });
  EXPECT_EQ(trace.spans.front().id, 200u);
  EXPECT_EQ(trace.spans[1].id, 201u);

  // Times are relative to the sink's origin, which lies between the two clock reads around its
  // creation.
  const std::int64_t shift = want.front().start_ns - trace.spans.front().start_ns;
  EXPECT_GE(shift, origin.not_before);
  EXPECT_LE(shift, origin.not_after);
  for (std::size_t i = 0; i < want.size(); ++i) {
    SCOPED_TRACE("span " + std::to_string(want[i].id));
    const Span& got = trace.spans[i];
    EXPECT_EQ(got.id, want[i].id);
    EXPECT_EQ(got.parent, want[i].parent);
    EXPECT_EQ(got.kind, want[i].kind);
    EXPECT_EQ(got.track, want[i].track);
    EXPECT_EQ(got.name, want[i].name);
    EXPECT_EQ(got.effect, want[i].effect);
    EXPECT_EQ(got.seq, want[i].seq);
    EXPECT_EQ(got.start_ns, want[i].start_ns - shift);
    EXPECT_EQ(got.end_ns - got.start_ns, want[i].end_ns - want[i].start_ns);
    // Arguments are stored as a JSON object: the same pairs, by key.
    EXPECT_EQ(sorted(got.args), sorted(want[i].args));
    EXPECT_EQ(trace.index_of(got.id), static_cast<std::ptrdiff_t>(i));
  }
  EXPECT_EQ(trace.index_of(424242), -1);

  // Every kind of span and of track survives.
  for (int k = 0; k < kSpanKindCount; ++k)
    EXPECT_TRUE(std::any_of(trace.spans.begin(), trace.spans.end(), [&](const Span& sp) {
      return sp.kind == static_cast<SpanKind>(k);
    })) << to_string(static_cast<SpanKind>(k));
  for (int k = 0; k < kTrackKindCount; ++k)
    EXPECT_TRUE(std::any_of(trace.tracks.begin(), trace.tracks.end(), [&](const Track& t) {
      return t.kind == static_cast<TrackKind>(k);
    })) << to_string(static_cast<TrackKind>(k));

  // Tracks: each distinct one once, in the order the spans first used them.
  std::vector<Track> tracks;
  for (const Span& span : s.spans)
    if (std::find(tracks.begin(), tracks.end(), span.track) == tracks.end())
      tracks.push_back(span.track);
  EXPECT_EQ(trace.tracks, tracks);

  // Edges whose ends the file has; the one to a lost span and the one from "none" are dropped.
  ASSERT_EQ(trace.edges.size(), 2u);
  EXPECT_EQ(trace.edges[0].from, 100u);
  EXPECT_EQ(trace.edges[0].to, 105u);
  EXPECT_EQ(trace.edges[0].effect, "print");
  EXPECT_EQ(trace.edges[1].from, 105u);
  EXPECT_EQ(trace.edges[1].to, 111u);
  EXPECT_EQ(trace.edges[1].effect, "");

  // Programs by id, kernels with their fused ops.
  ASSERT_EQ(trace.programs.size(), 2u);
  expect_same_program(trace.programs[0], s.programs[1]);
  expect_same_program(trace.programs[1], s.programs[0]);
  ASSERT_NE(trace.program(7), nullptr);
  EXPECT_EQ(trace.program(7)->kernels[0].fused_ops,
            (std::vector<std::string>{"add", "mul", "exp"}));
  EXPECT_EQ(trace.program(8), nullptr);

  // The bytes of the file read the same.
  const Trace again = read_trace(read_bytes(path));
  ASSERT_EQ(again.spans.size(), trace.spans.size());
  for (std::size_t i = 0; i < again.spans.size(); ++i) {
    EXPECT_EQ(again.spans[i].id, trace.spans[i].id);
    EXPECT_EQ(again.spans[i].start_ns, trace.spans[i].start_ns);
    EXPECT_EQ(again.spans[i].args, trace.spans[i].args);
  }
  EXPECT_EQ(again.edges.size(), 2u);
  EXPECT_EQ(again.programs.size(), 2u);
  EXPECT_EQ(again.meta, trace.meta);
}

TEST(TraceFile, ManyBatchesAppendAndKeepTheirTracks) {
  TempDir dir;
  const fs::path path = dir.path() / "batches.db";
  const std::int64_t base = now_ns();
  {
    TraceFileSink sink(path, "batches");
    for (int batch = 0; batch < 5; ++batch) {
      std::vector<Span> spans;
      for (int i = 0; i < 3; ++i) {
        const int n = batch * 3 + i;
        spans.push_back(make_span(static_cast<Id>(n + 1), SpanKind::kernel,
                                  n % 2 ? kQueue0 : kQueue1, "k" + std::to_string(n), base + n * 10,
                                  base + n * 10 + 5));
      }
      std::vector<Edge> edges;
      if (batch > 0)
        edges.push_back({static_cast<Id>(batch * 3), static_cast<Id>(batch * 3 + 1), "e"});
      sink.write(spans, edges, {});
    }
  }
  const Trace trace = read_trace(path);
  ASSERT_EQ(trace.spans.size(), 15u);
  EXPECT_EQ(trace.edges.size(), 4u);
  EXPECT_EQ(trace.tracks, (std::vector<Track>{kQueue1, kQueue0}));
  for (std::size_t i = 0; i < trace.spans.size(); ++i) {
    EXPECT_EQ(trace.spans[i].id, i + 1);
    EXPECT_EQ(trace.spans[i].name, "k" + std::to_string(i));
    EXPECT_EQ(trace.spans[i].start_ns - trace.spans[0].start_ns, static_cast<std::int64_t>(i) * 10);
  }
}

TEST(TraceFile, MetaSaysWhatWasRecorded) {
  TempDir dir;
  const fs::path path = dir.path() / "meta.db";
  const std::int64_t start = now_ns();
  record(path, {make_span(1, SpanKind::dispatch, kMain, "f", start, start + 1)}, {}, {},
         "./app --flag \"quoted arg\" \u03c0");
  const Trace trace = read_trace(path);
  EXPECT_EQ(trace.meta.at("format"), "weft-trace");
  EXPECT_EQ(trace.meta.at("version"), std::to_string(kTraceFormatVersion));
  EXPECT_EQ(trace.meta.at("pid"), std::to_string(::getpid()));
  EXPECT_EQ(trace.meta.at("command"), "./app --flag \"quoted arg\" \u03c0");
  EXPECT_TRUE(
      std::regex_match(trace.meta.at("started"), std::regex(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)")))
      << trace.meta.at("started");
  EXPECT_FALSE(trace.meta.at("weft_version").empty());
}

TEST(TraceFile, RecordsThroughTheTelemetryQueue) {
  TempDir dir;
  const fs::path path = dir.path() / "queued.db";
  auto sink = std::make_shared<TraceFileSink>(path, "queued");
  add_sink(sink);
  EXPECT_TRUE(enabled());
  const std::int64_t start = now_ns();
  const Id first = next_id();
  for (int i = 0; i < 100; ++i) {
    Span span = make_span(first + static_cast<Id>(i), SpanKind::transfer, kMain, "upload",
                          start + i * 100, start + i * 100 + 50, {{"bytes", std::to_string(i)}});
    emit(std::move(span));
  }
  emit(Edge{first, first + 1, "token"});
  Program program;
  program.id = first;
  program.function = "queued";
  emit(std::move(program));
  remove_sink(sink);
  EXPECT_FALSE(enabled());
  sink.reset();

  const Trace trace = read_trace(path);
  ASSERT_EQ(trace.spans.size(), 100u);
  for (int i = 0; i < 100; ++i) {
    EXPECT_EQ(trace.spans[static_cast<std::size_t>(i)].id, first + static_cast<Id>(i));
    EXPECT_EQ(trace.spans[static_cast<std::size_t>(i)].args, (Args{{"bytes", std::to_string(i)}}));
  }
  ASSERT_EQ(trace.edges.size(), 1u);
  ASSERT_EQ(trace.programs.size(), 1u);
  EXPECT_EQ(trace.programs[0].function, "queued");
}

TEST(TraceFile, ReadableWhileStillRecording) {
  TempDir dir;
  const fs::path path = dir.path() / "open.db";
  const std::int64_t base = now_ns();
  TraceFileSink sink(path, "open");
  sink.write(std::vector<Span>{make_span(1, SpanKind::dispatch, kMain, "a", base, base + 1)}, {},
             {});
  sink.flush();
  EXPECT_EQ(read_trace(path).spans.size(), 1u);
  sink.write(std::vector<Span>{make_span(2, SpanKind::dispatch, kMain, "b", base + 2, base + 3)},
             {}, {});
  sink.flush();
  EXPECT_EQ(read_trace(path).spans.size(), 2u);
  // A copy of the flushed file alone (what a recorder that crashed after its last flush leaves).
  const fs::path copy = dir.path() / "copy.db";
  fs::copy_file(path, copy);
  EXPECT_EQ(read_trace(copy).spans.size(), 2u);
}

TEST(TraceFile, ReadsWhatACrashedRecorderLeft) {
  // The recorder died without flushing: the last batch is only in the write-ahead log.
  TempDir dir;
  const fs::path path = dir.path() / "crashed.db";
  const std::int64_t base = now_ns();
  TraceFileSink sink(path, "crashed");
  sink.write(std::vector<Span>{make_span(1, SpanKind::dispatch, kMain, "a", base, base + 1),
                               make_span(2, SpanKind::kernel, kQueue0, "k", base, base + 1)},
             std::vector<Edge>{{1, 2, "e"}}, {});
  ASSERT_TRUE(fs::exists(path.string() + "-wal"));
  fs::create_directory(dir.path() / "left");
  const fs::path left = dir.path() / "left" / "crashed.db";
  fs::copy_file(path, left);
  fs::copy_file(path.string() + "-wal", left.string() + "-wal");
  const Trace trace = read_trace(left);
  EXPECT_EQ(trace.spans.size(), 2u);
  EXPECT_EQ(trace.edges.size(), 1u);
}

TEST(TraceFile, BytesOfATraceInWalModeRead) {
  // A trace still being recorded (or whose recorder crashed after a flush) is in WAL mode: its
  // header says so, and its flushed bytes hold the whole recording. read_trace(bytes) must read
  // them as read_trace(path) does.
  TempDir dir;
  const fs::path path = dir.path() / "wal.db";
  const std::int64_t base = now_ns();
  TraceFileSink sink(path, "wal");
  sink.write(std::vector<Span>{make_span(1, SpanKind::dispatch, kMain, "a", base, base + 1)}, {},
             {});
  sink.flush();
  const Bytes bytes = read_bytes(path);
  ASSERT_GT(bytes.size(), 20u);
  ASSERT_EQ(bytes[18], 2) << "the file is not in WAL mode; this test needs it to be";
  EXPECT_EQ(read_trace(path).spans.size(), 1u);
  EXPECT_EQ(read_error(bytes), "<read 1 spans without an error>");
}

// Runs `check` in a forked child (as uid 65534 when `as_nobody`) and returns its exit code;
// 100 when it threw.
int in_child(bool as_nobody, const std::function<int()>& check) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    int code = 100;
    try {
      if (as_nobody && (::setgid(65534) != 0 || ::setuid(65534) != 0)) ::_exit(101);
      code = check();
    } catch (const std::exception& e) {
      std::fprintf(stderr, "child: %s\n", e.what());
    }
    ::_exit(code);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

TEST(TraceFile, WalTraceCopiedAloneIntoAReadOnlyDirectoryReadsForAnyone) {
  // A killed recording is still in WAL mode. Copied without its side files into a directory the
  // reader may not write (another user's: as root the reader becomes uid 65534), SQLite cannot
  // make the shared-memory index it wants, and fails on the first query.
  TempDir dir;
  const fs::path path = dir.path() / "killed.wefttrace";
  const std::int64_t base = now_ns();
  TraceFileSink sink(path, "killed");
  sink.write(std::vector<Span>{make_span(1, SpanKind::dispatch, kMain, "a", base, base + 1)}, {},
             {});
  sink.flush();
  ASSERT_EQ(read_bytes(path)[18], 2) << "the file is not in WAL mode; this test needs it to be";
  const fs::path shelf = dir.path() / "shelf";
  fs::create_directory(shelf);
  const fs::path copy = shelf / "killed.wefttrace";
  fs::copy_file(path, copy);
  fs::permissions(copy, fs::perms::owner_read | fs::perms::group_read | fs::perms::others_read);
  fs::permissions(shelf, fs::perms::owner_read | fs::perms::owner_exec | fs::perms::group_read |
                             fs::perms::group_exec | fs::perms::others_read |
                             fs::perms::others_exec);
  fs::permissions(dir.path(),
                  fs::perms::owner_all | fs::perms::group_exec | fs::perms::others_exec);
  EXPECT_EQ(in_child(::geteuid() == 0,
                     [&] {
                       const Trace trace = read_trace(copy);
                       return trace.spans.size() == 1 && trace.meta.at("command") == "killed" ? 0
                                                                                              : 1;
                     }),
            0);
  EXPECT_FALSE(fs::exists(copy.string() + "-shm"));
}

TEST(TraceFile, ExpandsThePid) {
  TempDir dir;
  TraceFileSink sink(dir.path() / "trace-%p.db", "pid");
  const fs::path want = dir.path() / ("trace-" + std::to_string(::getpid()) + ".db");
  EXPECT_EQ(sink.path(), want);
  EXPECT_TRUE(fs::exists(want));
  EXPECT_FALSE(fs::exists(dir.path() / "trace-%p.db"));

  TraceFileSink twice(dir.path() / "%p-%p.db", "pid");
  const std::string pid = std::to_string(::getpid());
  EXPECT_EQ(twice.path(), dir.path() / (pid + "-" + pid + ".db"));
}

TEST(TraceFile, PathsWithCharactersThatMeanSomethingInAUri) {
  // read_trace opens the file through an SQLite URI; the name must still be the file's own.
  TempDir dir;
  for (const std::string name : {"run #1.db", "what?mode=rw.db", "100%41.db", "a%2Fb.db"}) {
    SCOPED_TRACE(name);
    const fs::path path = dir.path() / name;
    const std::int64_t base = now_ns();
    record(path, {make_span(1, SpanKind::dispatch, kMain, name, base, base + 1)});
    ASSERT_TRUE(fs::exists(path));
    try {
      const Trace trace = read_trace(path);
      ASSERT_EQ(trace.spans.size(), 1u);
      EXPECT_EQ(trace.spans[0].name, name);
    } catch (const TraceError& e) {
      ADD_FAILURE() << e.what();
    }
  }
}

TEST(TraceFile, ReplacesAnEarlierTrace) {
  TempDir dir;
  const fs::path path = dir.path() / "again.db";
  const std::int64_t base = now_ns();
  record(path,
         {make_span(1, SpanKind::dispatch, kMain, "old", base, base + 1),
          make_span(2, SpanKind::dispatch, kMain, "old", base, base + 1),
          make_span(3, SpanKind::dispatch, kMain, "old", base, base + 1)},
         {{1, 2, "old"}}, {}, "first");
  ASSERT_EQ(read_trace(path).spans.size(), 3u);
  record(path, {make_span(9, SpanKind::kernel, kQueue0, "new", base, base + 1)}, {}, {}, "second");
  const Trace trace = read_trace(path);
  ASSERT_EQ(trace.spans.size(), 1u);
  EXPECT_EQ(trace.spans[0].name, "new");
  EXPECT_TRUE(trace.edges.empty());
  EXPECT_EQ(trace.meta.at("command"), "second");
}

TEST(TraceFile, SecondRecorderLeavesARecordingInProgressAlone) {
  TempDir dir;
  const fs::path path = dir.path() / "busy.wefttrace";
  const std::int64_t base = now_ns();
  TraceFileSink first(path, "first");
  first.write(std::vector<Span>{make_span(1, SpanKind::dispatch, kMain, "a", base, base + 1)}, {},
              {});
  // Another process given the same path.
  EXPECT_EQ(in_child(false,
                     [&] {
                       try {
                         TraceFileSink second(path, "second");
                         return 1;
                       } catch (const TraceError& e) {
                         const std::string what = e.what();
                         return what.find(path.string()) != std::string::npos &&
                                        what.find("in progress") != std::string::npos &&
                                        what.find("%p") != std::string::npos
                                    ? 0
                                    : 2;
                       }
                     }),
            0);
  // And another sink in this process.
  EXPECT_THROW(TraceFileSink(path, "third"), TraceError);
  first.write(std::vector<Span>{make_span(2, SpanKind::dispatch, kMain, "b", base, base + 1)}, {},
              {});
  first.flush();
  const Trace trace = read_trace(path);
  EXPECT_EQ(trace.spans.size(), 2u);
  EXPECT_EQ(trace.meta.at("command"), "first");
}

TEST(TraceFile, FinishedRecordingIsReplacedEvenFromAnotherProcess) {
  TempDir dir;
  const fs::path path = dir.path() / "done.wefttrace";
  const std::int64_t base = now_ns();
  record(path, {make_span(1, SpanKind::dispatch, kMain, "old", base, base + 1)}, {}, {}, "first");
  EXPECT_EQ(in_child(false,
                     [&] {
                       TraceFileSink second(path, "second");
                       return 0;
                     }),
            0);
  EXPECT_EQ(read_trace(path).meta.at("command"), "second");
}

TEST(TraceFile, LeavesAnyOtherFileAlone) {
  TempDir dir;
  // A text file.
  const fs::path text = dir.path() / "notes.txt";
  write_text(text, "my precious notes\n");
  const Bytes text_before = read_bytes(text);
  try {
    TraceFileSink sink(text, "clobber");
    ADD_FAILURE() << "recorded over a text file";
  } catch (const TraceError& e) {
    EXPECT_THAT(e.what(), HasSubstr("not a weft trace"));
    EXPECT_THAT(e.what(), HasSubstr(text.string()));
  }
  EXPECT_EQ(read_bytes(text), text_before);

  // Another program's SQLite database.
  const fs::path other = dir.path() / "other.sqlite";
  raw_sql(other,
          "CREATE TABLE accounts(name TEXT, balance INTEGER);"
          "INSERT INTO accounts VALUES('alice', 100);");
  const Bytes other_before = read_bytes(other);
  EXPECT_THROW(
      {
        try {
          TraceFileSink sink(other, "clobber");
        } catch (const TraceError& e) {
          EXPECT_THAT(e.what(), HasSubstr("not a weft trace"));
          throw;
        }
      },
      TraceError);
  EXPECT_EQ(read_bytes(other), other_before);

  // An empty file is not a trace either.
  const fs::path empty = dir.path() / "empty";
  write_text(empty, "");
  EXPECT_THROW(TraceFileSink(empty, "clobber"), TraceError);
  EXPECT_EQ(fs::file_size(empty), 0u);

  // A directory, and a link to a trace (never followed).
  EXPECT_THROW(TraceFileSink(dir.path(), "clobber"), TraceError);
  const fs::path trace = dir.path() / "real.db";
  const std::int64_t base = now_ns();
  record(trace, {make_span(1, SpanKind::dispatch, kMain, "kept", base, base + 1)});
  const Bytes trace_before = read_bytes(trace);
  const fs::path link = dir.path() / "link.db";
  fs::create_symlink(trace, link);
  try {
    TraceFileSink sink(link, "clobber");
    ADD_FAILURE() << "recorded through a symbolic link";
  } catch (const TraceError& e) {
    EXPECT_THAT(e.what(), HasSubstr("not a regular file"));
  }
  EXPECT_TRUE(fs::is_symlink(link));
  EXPECT_EQ(read_bytes(trace), trace_before);
}

TEST(TraceFile, UnwritableDirectoryIsATraceError) {
  TempDir dir;
  const fs::path path = dir.path() / "no" / "such" / "dir" / "trace.db";
  try {
    TraceFileSink sink(path, "nowhere");
    ADD_FAILURE() << "created " << path;
  } catch (const TraceError& e) {
    EXPECT_THAT(e.what(), HasSubstr(path.string()));
    EXPECT_THAT(e.what(), HasSubstr("directory"));
  }
  EXPECT_FALSE(fs::exists(dir.path() / "no"));
  // A path whose parent is a file.
  write_text(dir.path() / "file", "x");
  EXPECT_THROW(TraceFileSink(dir.path() / "file" / "trace.db", "nowhere"), TraceError);
}

TEST(TraceFile, LargeTraceReadsBack) {
  TempDir dir;
  const fs::path path = dir.path() / "large.db";
  constexpr int kSpans = 100'000;
  const std::int64_t base = now_ns();
  {
    TraceFileSink sink(path, "large");
    std::vector<Span> batch;
    std::vector<Edge> edges;
    for (int i = 0; i < kSpans; ++i) {
      // Ids in one order, start times in the reverse order within each batch.
      const std::int64_t start = base + (i / 1000) * 1'000'000 + (999 - i % 1000) * 100;
      batch.push_back(make_span(static_cast<Id>(i + 1), SpanKind::kernel, i % 3 ? kQueue0 : kQueue1,
                                "kernel_" + std::to_string(i % 17), start, start + 50,
                                {{"global_size", std::to_string(i)}}));
      if (i % 10 == 1) edges.push_back({static_cast<Id>(i), static_cast<Id>(i + 1), "e"});
      if (batch.size() == 10'000) {
        sink.write(batch, edges, {});
        batch.clear();
        edges.clear();
      }
    }
  }
  const Trace trace = read_trace(path);
  ASSERT_EQ(trace.spans.size(), static_cast<std::size_t>(kSpans));
  EXPECT_EQ(trace.edges.size(), static_cast<std::size_t>(kSpans / 10));
  EXPECT_EQ(trace.tracks.size(), 2u);
  EXPECT_TRUE(std::is_sorted(trace.spans.begin(), trace.spans.end(),
                             [](const Span& a, const Span& b) { return a.start_ns < b.start_ns; }));
  EXPECT_EQ(trace.spans.front().id, 1000u);
  EXPECT_EQ(trace.spans.back().id, static_cast<Id>(kSpans - 999));
  for (Id id : {Id{1}, Id{50'000}, Id{kSpans}}) EXPECT_GE(trace.index_of(id), 0) << id;
}

// ---------------------------------------------------------------------------------------------
// Reading what is not a good trace.

class DamagedTrace : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = dir_.path() / "damaged.db";
    const Sample s = sample(now_ns());
    record(path_, s.spans, s.edges, s.programs);
    ASSERT_EQ(read_trace(path_).spans.size(), s.spans.size());
  }
  TempDir dir_;
  fs::path path_;
};

TEST(TraceFileRead, MissingFile) {
  TempDir dir;
  const fs::path path = dir.path() / "absent.db";
  const std::string error = read_error(path);
  EXPECT_THAT(error, HasSubstr("the trace file " + path.string()));
  EXPECT_THAT(error, HasSubstr("cannot be opened"));
}

TEST(TraceFileRead, EmptyFile) {
  TempDir dir;
  const fs::path path = dir.path() / "empty.db";
  write_text(path, "");
  const std::string error = read_error(path);
  EXPECT_THAT(error, HasSubstr(path.string()));
  EXPECT_THAT(error, HasSubstr("is empty"));
  EXPECT_THAT(read_error(Bytes{}), HasSubstr("not a weft trace (not an SQLite database)"));
}

TEST(TraceFileRead, RandomBytesAndText) {
  TempDir dir;
  std::mt19937 random(12345);
  for (std::size_t size : {1u, 15u, 16u, 100u, 4096u, 65536u}) {
    Bytes bytes(size);
    for (auto& b : bytes) b = static_cast<std::uint8_t>(random());
    const fs::path path = dir.path() / ("random" + std::to_string(size));
    write_bytes(path, bytes);
    expect_refused(path, "not a weft trace (not an SQLite database)");
  }
  const fs::path text = dir.path() / "text.json";
  write_text(text, "{\"traceEvents\": []}\nthis is not a database, just text of some length\n");
  expect_refused(text, "not a weft trace (not an SQLite database)");
  // Only the first 15 bytes of the magic: still not a database.
  const fs::path almost = dir.path() / "almost";
  write_text(almost, "SQLite format 3");
  expect_refused(almost, "not a weft trace (not an SQLite database)");
}

TEST(TraceFileRead, RandomBytesAfterTheMagic) {
  // The SQLite header, then noise: SQLite itself must refuse it.
  TempDir dir;
  std::mt19937 random(777);
  for (int round = 0; round < 20; ++round) {
    Bytes bytes(512u << (round % 5));
    for (auto& b : bytes) b = static_cast<std::uint8_t>(random());
    const char magic[] = "SQLite format 3";
    std::copy(magic, magic + sizeof magic, bytes.begin());
    const fs::path path = dir.path() / ("noise" + std::to_string(round));
    write_bytes(path, bytes);
    const std::string from_file = read_error(path);
    EXPECT_THAT(from_file, HasSubstr(path.string()));
    EXPECT_THAT(from_file, ::testing::Not(HasSubstr("<")));
    EXPECT_THAT(read_error(bytes), ::testing::Not(HasSubstr("<")));
  }
}

TEST(TraceFileRead, TruncatedTrace) {
  TempDir dir;
  const fs::path full = dir.path() / "full.db";
  std::vector<Span> spans;
  const std::int64_t base = now_ns();
  for (int i = 0; i < 5000; ++i)
    spans.push_back(make_span(static_cast<Id>(i + 1), SpanKind::kernel, kQueue0,
                              "kernel number " + std::to_string(i), base + i, base + i + 1,
                              {{"fused_ops", "add, mul, exp, log, tanh, sin, cos"}}));
  record(full, spans);
  const Bytes bytes = read_bytes(full);
  ASSERT_GT(bytes.size(), 64u * 1024);
  const fs::path half = dir.path() / "half.db";
  write_bytes(half, std::span(bytes).first(bytes.size() / 2));
  expect_refused(half, "truncated or corrupt");
}

TEST(TraceFileRead, SqliteDatabaseThatIsNotATrace) {
  TempDir dir;
  const fs::path path = dir.path() / "other.sqlite";
  raw_sql(path, "CREATE TABLE spans(x); INSERT INTO spans VALUES(1);");
  expect_refused(path, "is not a weft trace (an SQLite database without the weft_trace table)");
}

TEST_F(DamagedTrace, NewerVersion) {
  raw_sql(path_, "UPDATE weft_trace SET value = '99' WHERE key = 'version'");
  expect_refused(path_, "is a version 99 weft trace");
  EXPECT_THAT(read_error(path_), HasSubstr("newer weft"));
}

TEST_F(DamagedTrace, UnreadableVersion) {
  raw_sql(path_, "UPDATE weft_trace SET value = 'one' WHERE key = 'version'");
  expect_refused(path_, "unreadable format version \"one\"");
  raw_sql(path_, "UPDATE weft_trace SET value = '0' WHERE key = 'version'");
  expect_refused(path_, "is a version 0 weft trace");
  raw_sql(path_, "DELETE FROM weft_trace WHERE key = 'version'");
  expect_refused(path_, "unreadable format version");
}

TEST_F(DamagedTrace, OtherFormat) {
  raw_sql(path_, "UPDATE weft_trace SET value = 'chrome' WHERE key = 'format'");
  expect_refused(path_, "is not a weft trace (its format is \"chrome\")");
}

TEST_F(DamagedTrace, MissingTable) {
  raw_sql(path_, "DROP TABLE edges");
  expect_refused(path_, "no table edges");
}

TEST_F(DamagedTrace, ViewInsteadOfTableIsRefusedNotRun) {
  // If the reader ran the view, it would read one span named "from the view".
  raw_sql(path_,
          "DROP TABLE spans; CREATE VIEW spans AS SELECT 1 AS id, 0 AS parent, 'dispatch' AS "
          "kind, 1 AS track, 'from the view' AS name, '' AS effect, -1 AS seq, 0 AS start_ns, "
          "1 AS end_ns, '{}' AS args");
  expect_refused(path_, "no table spans");
}

TEST_F(DamagedTrace, WeftTraceTableAsAView) {
  raw_sql(path_,
          "CREATE TABLE real_meta AS SELECT * FROM weft_trace; DROP TABLE weft_trace; "
          "CREATE VIEW weft_trace AS SELECT * FROM real_meta");
  expect_refused(path_, "not a weft trace");
}

TEST_F(DamagedTrace, TriggersNeverRun) {
  // A trigger in the file is data, not code: reading neither fires it nor changes the file.
  raw_sql(path_,
          "CREATE TABLE log(x); CREATE TRIGGER t AFTER INSERT ON edges BEGIN INSERT INTO log "
          "VALUES(1); END");
  const Bytes before = read_bytes(path_);
  const Trace trace = read_trace(path_);
  EXPECT_EQ(trace.edges.size(), 2u);
  EXPECT_EQ(read_bytes(path_), before);
}

TEST_F(DamagedTrace, UnknownSpanKind) {
  raw_sql(path_, "UPDATE spans SET kind = 'teleport' WHERE id = 105");
  expect_refused(path_, "span 105 has the unknown kind \"teleport\"");
}

TEST_F(DamagedTrace, UnknownTrackKind) {
  raw_sql(path_, "UPDATE tracks SET kind = 'gpu_thread' WHERE id = 2");
  expect_refused(path_, "track 2 of the unknown kind \"gpu_thread\"");
}

TEST_F(DamagedTrace, SpanOnAMissingTrack) {
  raw_sql(path_, "UPDATE spans SET track = 999 WHERE id = 104");
  expect_refused(path_, "span 104 names a track the file does not have");
}

TEST_F(DamagedTrace, NonPositiveSpanId) {
  raw_sql(path_, "UPDATE spans SET id = -5 WHERE id = 104");
  expect_refused(path_, "span -5 has a non-positive id");
}

TEST_F(DamagedTrace, SpanEndingBeforeItStarts) {
  raw_sql(path_, "UPDATE spans SET end_ns = start_ns - 1 WHERE id = 106");
  expect_refused(path_, "span 106 ends before it starts");
}

TEST_F(DamagedTrace, MalformedArgs) {
  raw_sql(path_, "UPDATE spans SET args = '{\"unterminated' WHERE id = 107");
  expect_refused(path_, "span 107 has arguments that are not a JSON object");
  raw_sql(path_, "UPDATE spans SET args = '[\"a\", \"b\"]' WHERE id = 107");
  expect_refused(path_, "span 107 has arguments that are not a JSON object");
  raw_sql(path_, "UPDATE spans SET args = '{\"n\": 5}' WHERE id = 107");
  expect_refused(path_, "span 107 has the non-text argument \"n\"");
  raw_sql(path_, "UPDATE spans SET args = x'00ff00' WHERE id = 107");
  expect_refused(path_, "span 107 has arguments that are not a JSON object");
}

TEST_F(DamagedTrace, TimeThatIsNotANumber) {
  // SQLite keeps text that does not look like a number as text, even in an INTEGER column, and
  // sorts text after every number. The reader must refuse such a row or still hand back its
  // spans by start time (the trace tools rely on that order).
  raw_sql(path_,
          "UPDATE spans SET start_ns = 1000 + id, end_ns = 5000 WHERE id <> 105;"
          "UPDATE spans SET start_ns = 'soon', end_ns = 5000 WHERE id = 105");
  for (const bool from_bytes : {false, true}) {
    SCOPED_TRACE(from_bytes ? "from bytes" : "from the file");
    try {
      const Trace trace = from_bytes ? read_trace(read_bytes(path_)) : read_trace(path_);
      EXPECT_TRUE(
          std::is_sorted(trace.spans.begin(), trace.spans.end(),
                         [](const Span& a, const Span& b) { return a.start_ns < b.start_ns; }))
          << "span 105 (start " << trace.spans.back().start_ns
          << ") comes last although the reader took its start as the earliest";
    } catch (const TraceError& e) {
      EXPECT_THAT(e.what(), HasSubstr("span 105"));
      EXPECT_THAT(e.what(), ::testing::Not(HasSubstr("ends before it starts")));
    }
  }
}

TEST_F(DamagedTrace, DeeplyNestedArgsDoNotOverflowTheStack) {
  const std::string nested =
      "{\"a\": " + std::string(1'000'000, '[') + std::string(1'000'000, ']') + "}";
  raw_sql(path_, "UPDATE spans SET args = '" + nested + "' WHERE id = 107");
  expect_refused(path_, "span 107 has the non-text argument \"a\"");
}

TEST_F(DamagedTrace, MalformedKernels) {
  raw_sql(path_, "UPDATE programs SET kernels = '{}' WHERE id = 7");
  expect_refused(path_, "program 7 has a kernel list that is not a JSON array");
  raw_sql(path_, "UPDATE programs SET kernels = '[{\"name\": \"k\"}]' WHERE id = 7");
  expect_refused(path_, "program 7 has a malformed kernel entry");
  raw_sql(
      path_,
      "UPDATE programs SET kernels = '[{\"name\": \"k\", \"kind\": \"e\", \"fused_ops\": [1]}]' "
      "WHERE id = 7");
  expect_refused(path_, "program 7 has a fused op that is not text");
}

TEST_F(DamagedTrace, EdgesToMissingSpansAreDropped) {
  raw_sql(path_,
          "INSERT INTO edges VALUES(105, 424242, 'lost'); INSERT INTO edges VALUES(-1, 105, 'x');"
          "INSERT INTO edges VALUES('text', 105, 'x'); INSERT INTO edges VALUES(111, 100, 'kept')");
  for (const Trace& trace : {read_trace(path_), read_trace(read_bytes(path_))}) {
    ASSERT_EQ(trace.edges.size(), 3u);
    EXPECT_EQ(trace.edges[2].from, 111u);
    EXPECT_EQ(trace.edges[2].to, 100u);
    EXPECT_EQ(trace.edges[2].effect, "kept");
  }
}

TEST_F(DamagedTrace, NullsWhereTheFormatHasNone) {
  // A hand-made file without the NOT NULL constraints.
  const fs::path path = dir_.path() / "nulls.db";
  raw_sql(path,
          "CREATE TABLE weft_trace(key, value); INSERT INTO weft_trace VALUES('format', "
          "'weft-trace'), ('version', '1');"
          "CREATE TABLE tracks(id, kind, name, device); INSERT INTO tracks VALUES(1, "
          "'host_thread', NULL, NULL);"
          "CREATE TABLE spans(id, parent, kind, track, name, effect, seq, start_ns, end_ns, args);"
          "INSERT INTO spans VALUES(1, NULL, 'dispatch', 1, NULL, NULL, NULL, NULL, NULL, '{}');"
          "CREATE TABLE edges(source, target, effect); INSERT INTO edges VALUES(NULL, NULL, NULL);"
          "CREATE TABLE programs(id, function, device, cache_key, cache_status, ir, source, "
          "kernels); INSERT INTO programs VALUES(NULL, NULL, NULL, NULL, NULL, NULL, NULL, '[]')");
  // NULL where the format has an integer is refused, as any non-integer is.
  expect_refused(path, "span 1 has a value that is not an integer");
  // NULL text reads as empty text.
  raw_sql(path, "UPDATE spans SET parent = 0, seq = -1, start_ns = 0, end_ns = 0");
  const Trace trace = read_trace(path);
  ASSERT_EQ(trace.spans.size(), 1u);
  EXPECT_EQ(trace.spans[0].name, "");
  EXPECT_EQ(trace.spans[0].parent, 0u);
  EXPECT_TRUE(trace.edges.empty());
  ASSERT_EQ(trace.programs.size(), 1u);
  // And NULL where a kind or arguments must be.
  raw_sql(path, "UPDATE spans SET args = NULL");
  expect_refused(path, "span 1 has arguments that are not a JSON object");
  raw_sql(path, "UPDATE spans SET args = '{}', kind = NULL");
  expect_refused(path, "span 1 has the unknown kind \"\"");
}

}  // namespace
}  // namespace weft::telemetry
