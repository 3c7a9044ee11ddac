// `weft trace summary|export` as a user runs them, on trace files an attacker or an accident
// made: text that is not UTF-8 (a Latin-1 file name in the recorded command), control
// characters in names, a FIFO where the trace should be, and an output path that is the trace
// itself. Each test runs the built weft executable (with a time limit) and checks what it did.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "support/cli_process.h"
#include "support/make_span.h"
#include "support/raw_sqlite.h"
#include "support/temp_dir.h"
#include "weft/telemetry/trace_file.h"

namespace weft::telemetry {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using testing::make_span;

using Result = testing::ProcessResult;
using testing::quote;
using testing::slurp;

class TraceCliTest : public ::testing::Test {
 protected:
  // Runs `weft ARGS`; a run that hangs is killed after 30 s (exit code 124).
  Result weft(const std::vector<std::string>& args) const {
    return testing::run_process(WEFT_CLI_PATH, args, dir_.path(), "", 30);
  }

  // A small recording with `command`, and `name` for its kernel, effect and device.
  fs::path record(const std::string& file, const std::string& command,
                  const std::string& name = "k") const {
    const fs::path path = dir_.path() / file;
    const std::int64_t base = now_ns();
    const Track main{TrackKind::host_thread, "main " + name, ""};
    const Track queue{TrackKind::queue, name + " queue", name};
    const Track callbacks{TrackKind::callback, "callbacks " + name, name};
    Span print = make_span(3, SpanKind::callback, callbacks, "debug_print", base + 30, base + 40,
                           {{"thread", main.name}, {"ordered", "true"}, {"device", name}});
    print.effect = name;
    print.seq = 1;
    TraceFileSink sink(path, command);
    sink.write(
        std::vector<Span>{
            make_span(1, SpanKind::dispatch, main, name, base, base + 50, {{"device", name}}),
            make_span(2, SpanKind::kernel, queue, name, base + 10, base + 20, {{"device", name}}),
            make_span(4, SpanKind::cache_lookup, main, name, base + 1, base + 2,
                      {{"status", "miss"}, {"reason", name}}),
            print},
        {}, {});
    return path;
  }

  test::TempDir dir_{"weft-trace-cli"};
};

TEST_F(TraceCliTest, SummaryJsonOfTextThatIsNotUtf8) {
  // Recorded from a file whose name is Latin-1 ("café" with 0xe9).
  const fs::path trace = record("caf\xe9.wefttrace", "weft run caf\xe9.weft", "caf\xe9");
  const Result r = weft({"trace", "summary", trace.string(), "--json"});
  ASSERT_EQ(r.code, 0) << r.err;
  const nlohmann::json summary = nlohmann::json::parse(r.out);  // valid UTF-8 JSON
  EXPECT_EQ(summary["command"], "weft run caf\xef\xbf\xbd.weft");
  ASSERT_EQ(summary["kernels"].size(), 1u);
  EXPECT_EQ(summary["kernels"][0]["device"], "caf\xef\xbf\xbd");
}

TEST_F(TraceCliTest, SummaryEscapesControlCharacters) {
  // A window title (OSC), a screen clear, a carriage return and a NUL in every name.
  static constexpr char kNasty[] = "x\x1b]0;owned\x07\x1b[2J\r\0y\x7f\xc2\x9b";
  const std::string nasty(kNasty, sizeof kNasty - 1);
  const fs::path trace = record("nasty.wefttrace", "run " + nasty, nasty);
  const Result r = weft({"trace", "summary", trace.string()});
  ASSERT_EQ(r.code, 0) << r.err;
  for (const char c : r.out) {
    const auto byte = static_cast<unsigned char>(c);
    EXPECT_TRUE(c == '\n' || (byte >= 0x20 && byte != 0x7f)) << "raw byte " << int(byte);
  }
  EXPECT_THAT(r.out, HasSubstr("x\\x1b]0;owned\\x07\\x1b[2J\\x0d\\x00y\\x7f\\xc2\\x9b"));
  EXPECT_THAT(r.out, HasSubstr("Kernels"));
  EXPECT_THAT(r.out, HasSubstr("Effects"));
}

TEST_F(TraceCliTest, ErrorsQuoteTheFilesTextEscaped) {
  // The reader's errors quote what it refused (a format, a kind): escaped as well.
  for (const char* sql :
       {"UPDATE weft_trace SET value = 'x' || char(27) || ']0;owned' || char(7) WHERE key = "
        "'format'",
        "UPDATE spans SET kind = 'k' || char(27) || '[2J' || char(13) WHERE id = 1"}) {
    SCOPED_TRACE(sql);
    const fs::path trace = record("damaged.wefttrace", "weft demo");
    test::raw_sql(trace, sql);
    const Result r = weft({"trace", "summary", trace.string()});
    EXPECT_EQ(r.code, 1);
    EXPECT_THAT(r.err, HasSubstr("\\x1b"));
    EXPECT_EQ(r.err.find('\x1b'), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find('\r'), std::string::npos) << r.err;
  }
}

TEST_F(TraceCliTest, FifoIsRefusedNotWaitedOn) {
  const fs::path fifo = dir_.path() / "fifo.wefttrace";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"trace", "summary", fifo.string()},
        std::vector<std::string>{"trace", "export", fifo.string()}}) {
    SCOPED_TRACE(args[1]);
    const Result r = weft(args);
    EXPECT_NE(r.code, 124) << "weft waited on the FIFO";
    EXPECT_NE(r.code, 0);
    EXPECT_THAT(r.err, HasSubstr("is not a regular file (it is a FIFO)"));
    EXPECT_THAT(r.err, HasSubstr(fifo.string()));
  }
  // A directory likewise.
  const Result r = weft({"trace", "summary", dir_.path().string()});
  EXPECT_NE(r.code, 0);
  EXPECT_THAT(r.err, HasSubstr("is not a regular file (it is a directory)"));
}

TEST_F(TraceCliTest, ExportNeverOverwritesTheTrace) {
  const fs::path trace = record("t.wefttrace", "weft demo");
  const std::uintmax_t size = fs::file_size(trace);
  fs::create_hard_link(trace, dir_.path() / "hard.json");
  fs::create_symlink(trace, dir_.path() / "soft.json");
  for (const fs::path& output : {trace, dir_.path() / "hard.json", dir_.path() / "soft.json",
                                 dir_.path() / "." / "t.wefttrace"}) {
    SCOPED_TRACE(output.string());
    const Result r = weft({"trace", "export", trace.string(), "-o", output.string()});
    EXPECT_NE(r.code, 0);
    EXPECT_THAT(r.err, HasSubstr("is the trace file"));
    EXPECT_EQ(fs::file_size(trace), size);
    EXPECT_EQ(read_trace(trace).spans.size(), 4u);
  }
  // Another path is written.
  const fs::path json = dir_.path() / "t.json";
  const Result r = weft({"trace", "export", trace.string(), "-o", json.string()});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(nlohmann::json::parse(slurp(json)).contains("traceEvents"));
}

// A recorded run's trace holds its counter tracks, and the export turns them into Chrome
// counter events: device memory while arrays live, the callback queue emptied at the end.
TEST_F(TraceCliTest, ARecordedRunExportsItsCounterTracks) {
  const fs::path trace = dir_.path() / "demo.wefttrace", json = dir_.path() / "demo.json";
  const Result run = weft({"demo", "--trace", trace.string()});
  ASSERT_EQ(run.code, 0) << run.err;
  const Trace recorded = read_trace(trace);
  EXPECT_FALSE(recorded.counters.empty());
  const Result r = weft({"trace", "export", trace.string(), "-o", json.string()});
  ASSERT_EQ(r.code, 0) << r.err;
  const nlohmann::json document = nlohmann::json::parse(slurp(json));
  std::size_t memory_events = 0;
  std::vector<double> depth;
  for (const nlohmann::json& event : document["traceEvents"]) {
    if (event["ph"] != "C") continue;
    const std::string name = event["name"];
    if (name.ends_with(" device_memory_bytes")) ++memory_events;
    if (name == "callback_queue_depth") depth.push_back(event["args"]["value"]);
  }
  EXPECT_GT(memory_events, 0u);
  ASSERT_FALSE(depth.empty()) << "the demo prints from its functions";
  EXPECT_EQ(depth.back(), 0.0);
}

}  // namespace
}  // namespace weft::telemetry
