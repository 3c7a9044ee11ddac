// Counter tracks (docs/telemetry.md, "Counters"): samples of device memory in use, the buffer
// pool's size, the callback queue's depth and bytes and the cache hit rate, recorded when the
// values change; coalesced so a hot path cannot flood a recording; stored in the trace file's
// counters table (read back with every row checked, and traces without the table still read);
// exported as Chrome "C" events.
#include <sqlite3.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "support/make_span.h"
#include "support/raw_sqlite.h"
#include "support/recording.h"
#include "support/temp_dir.h"
#include "weft/error.h"
#include "weft/opencl/device.h"
#include "weft/telemetry/telemetry.h"
#include "weft/telemetry/trace_file.h"
#include "weft/telemetry/trace_tools.h"
#include "weft/weft.h"

namespace weft {
namespace {

namespace fs = std::filesystem;
using telemetry::Counter;
using telemetry::Trace;
using ::testing::HasSubstr;

opencl::OpenCLDevice& cl_device() {
  return dynamic_cast<opencl::OpenCLDevice&>(default_device());
}

// The samples of one counter, in time order.
std::vector<Counter> samples(const Trace& trace, std::string_view name, std::string_view device) {
  std::vector<Counter> out;
  for (const Counter& c : trace.counters)
    if (c.name == name && c.device == device) out.push_back(c);
  std::stable_sort(out.begin(), out.end(),
                   [](const Counter& a, const Counter& b) { return a.time_ns < b.time_ns; });
  return out;
}

double peak(const std::vector<Counter>& series) {
  double most = 0;
  for (const Counter& c : series) most = std::max(most, c.value);
  return most;
}

// Samples closer than the coalescing window are apart from: a value held this long is kept.
void outlast_the_coalescing_window() {
  std::this_thread::sleep_for(std::chrono::nanoseconds(20 * telemetry::kCounterCoalesceNs));
}

TEST(TelemetryCounters, OffTheLevelsAreKeptAndNothingIsQueued) {
  ASSERT_FALSE(telemetry::enabled()) << "run the tests without WEFT_TRACE and WEFT_MONITOR";
  opencl::OpenCLDevice& device = cl_device();
  const std::size_t in_use = device.memory_stats().in_use_bytes;
  {
    auto buffer = device.allocate(3 * 4096 + 4);
    EXPECT_EQ(device.memory_stats().in_use_bytes, in_use + 3 * 4096 + 4);
  }
  EXPECT_EQ(device.memory_stats().in_use_bytes, in_use);
  EXPECT_EQ(telemetry::queued(), 0u);
}

TEST(TelemetryCounters, DeviceMemoryAndThePoolFollowAnAllocationAndItsRelease) {
  opencl::OpenCLDevice& device = cl_device();
  // A size no other test (nor an earlier repetition of this one) pools.
  static std::size_t repetition = 0;
  const std::size_t released = (1 << 20) + 36 + 4 * repetition++;
  testing::Recording recording;
  const opencl::OpenCLDevice::MemoryStats before = device.memory_stats();
  {
    auto buffer = device.allocate(released);
    outlast_the_coalescing_window();
  }
  const Trace trace = recording.finish();
  const opencl::OpenCLDevice::MemoryStats after = device.memory_stats();

  const auto in_use = samples(trace, "device_memory_bytes", device.name());
  ASSERT_GE(in_use.size(), 2u);
  EXPECT_GE(peak(in_use), static_cast<double>(before.in_use_bytes + released));
  EXPECT_EQ(in_use.back().value, static_cast<double>(after.in_use_bytes));

  // The released buffer went to the pool: its last sample is what the pool holds, the
  // released bytes more than before.
  const auto pool = samples(trace, "buffer_pool_bytes", device.name());
  ASSERT_FALSE(pool.empty());
  EXPECT_EQ(after.pooled_bytes, before.pooled_bytes + released);
  EXPECT_EQ(pool.back().value, static_cast<double>(after.pooled_bytes));
}

TEST(TelemetryCounters, TheCallbackQueueFillsAndEmptiesAgain) {
  auto f = jit([](const Array& x) {
    return io_callback(
        [](const HostArray& in) {
          outlast_the_coalescing_window();
          return in;
        },
        ShapeDtype::like(x), x, CallbackOptions{.ordered = true});
  });
  testing::Recording recording;
  Array x = Array::from_vector<float>({2}, {1, 2});
  for (int i = 0; i < 3; ++i) x = f(x);
  EXPECT_EQ(x.to_vector<float>(), (std::vector<float>{1, 2}));
  // The result is ready as soon as the last callback wrote it; the task leaves the queue's
  // accounting before its token completes, so after the barrier the depth is back to 0.
  effects_barrier();
  const Trace trace = recording.finish();

  const auto depth = samples(trace, "callback_queue_depth", "");
  ASSERT_FALSE(depth.empty());
  EXPECT_GE(peak(depth), 1.0);
  EXPECT_EQ(depth.back().value, 0.0);
  // Each pending call is charged its footprint (1,280 bytes besides its arguments).
  const auto bytes = samples(trace, "callback_queue_bytes", "");
  ASSERT_FALSE(bytes.empty());
  EXPECT_GE(peak(bytes), 1280.0);
  EXPECT_EQ(bytes.back().value, 0.0);
}

TEST(TelemetryCounters, ACompileRecordsTheCacheHitRate) {
  // Compiled here even when an earlier repetition compiled it: the lookup is made again.
  cl_device().forget_compiled();
  testing::Recording recording;
  auto f = jit([](const Array& x) { return x * 7.25 + 0.125; });
  EXPECT_FLOAT_EQ(f(Array::from_vector<float>({1}, {2})).to_vector<float>()[0], 14.625f);
  const Trace trace = recording.finish();
  const auto rate = samples(trace, "cache_hit_rate", "");
  ASSERT_FALSE(rate.empty()) << "the tests run with the persistent cache on (WEFT_CACHE_DIR)";
  for (const Counter& c : rate) {
    EXPECT_GE(c.value, 0.0);
    EXPECT_LE(c.value, 1.0);
  }
}

TEST(TelemetryCounters, SamplesWithinTheWindowMergeAndTheLatestValueIsKept) {
  testing::Recording recording;
  const std::int64_t start = telemetry::now_ns();
  for (int i = 1; i <= 1000; ++i) telemetry::emit_counter("test_level", "dev", start + i, i);
  const std::int64_t later = start + 3 * telemetry::kCounterCoalesceNs;
  telemetry::emit_counter("test_level", "dev", later, 5);
  telemetry::emit_counter("test_level", "other", start + 2, 9);  // another counter
  const Trace trace = recording.finish();
  const auto level = samples(trace, "test_level", "dev");
  ASSERT_EQ(level.size(), 2u);
  EXPECT_EQ(level[0].time_ns, start + 1);
  EXPECT_EQ(level[0].value, 1000.0);
  EXPECT_EQ(level[1].time_ns, later);
  EXPECT_EQ(level[1].value, 5.0);
  ASSERT_EQ(samples(trace, "test_level", "other").size(), 1u);
}

class TempDir : public test::TempDir {
 public:
  TempDir() : test::TempDir("weft-counters-test") {}
};

// A trace holding one span and `counters` (times relative to the sink's start are checked
// loosely: the sink subtracts its own origin).
fs::path record_trace(const fs::path& path, const std::vector<Counter>& counters) {
  auto sink = std::make_unique<telemetry::TraceFileSink>(path, "counters test");
  const telemetry::Track track{telemetry::TrackKind::host_thread, "main (thread 1)", ""};
  // One clock reading: two in one argument list may be taken end first.
  const std::int64_t start = telemetry::now_ns();
  std::vector<telemetry::Span> spans = {
      testing::make_span(1, telemetry::SpanKind::dispatch, track, "f", start, start + 1000)};
  sink->write(spans, {}, {});
  sink->write_counters(counters);
  sink->flush();
  return path;
}

TEST(TraceFileCounters, CountersReadBackInTimeOrder) {
  TempDir dir;
  const std::int64_t t = telemetry::now_ns();
  const fs::path path = record_trace(
      dir.path() / "c.wefttrace",
      {{"device_memory_bytes", "cpu:0", t + 5000, 4096}, {"cache_hit_rate", "", t + 1000, 0.5}});
  const Trace trace = telemetry::read_trace(path);
  ASSERT_EQ(trace.counters.size(), 2u);
  EXPECT_EQ(trace.counters[0].name, "cache_hit_rate");
  EXPECT_EQ(trace.counters[0].device, "");
  EXPECT_EQ(trace.counters[0].value, 0.5);
  EXPECT_EQ(trace.counters[1].name, "device_memory_bytes");
  EXPECT_EQ(trace.counters[1].device, "cpu:0");
  EXPECT_EQ(trace.counters[1].value, 4096.0);
  EXPECT_EQ(trace.counters[1].time_ns - trace.counters[0].time_ns, 4000);
}

TEST(TraceFileCounters, ATraceWithoutTheCountersTableStillReads) {
  TempDir dir;
  const fs::path path = record_trace(dir.path() / "old.wefttrace",
                                     {{"device_memory_bytes", "cpu:0", telemetry::now_ns(), 1}});
  test::raw_sql(path, "DROP TABLE counters");
  const Trace trace = telemetry::read_trace(path);
  EXPECT_TRUE(trace.counters.empty());
  EXPECT_EQ(trace.spans.size(), 1u);
}

TEST(TraceFileCounters, AMalformedCounterRowIsATraceErrorNamingIt) {
  struct Case {
    const char* insert;
    const char* problem;
  };
  const Case cases[] = {
      {"INSERT INTO counters VALUES('a', '', 1, 'lots')", "a value that is not a number"},
      {"INSERT INTO counters VALUES('a', '', 1, NULL)", "a value that is not a number"},
      {"INSERT INTO counters VALUES('a', '', 1, 9e999)", "not finite"},
      {"INSERT INTO counters VALUES('a', '', 'noon', 1)", "a time that is not an integer"},
      {"INSERT INTO counters VALUES('a', '', 4611686018427387904, 1)", "36 years"},
      {"INSERT INTO counters VALUES(7, '', 1, 1)", "not text"},
      {"INSERT INTO counters VALUES(X'00ff', '', 1, 1)", "not text"},
      {"INSERT INTO counters VALUES('', '', 1, 1)", "an empty name"},
  };
  for (const Case& c : cases) {
    TempDir dir;
    const fs::path path = record_trace(dir.path() / "bad.wefttrace", {});
    // A hostile file need not keep the schema's constraints.
    test::raw_sql(path,
                  "DROP TABLE counters; CREATE TABLE counters(name, device, time_ns, value); "
                  "INSERT INTO counters VALUES('fine', 'cpu:0', 5, 2.5); " +
                      std::string(c.insert));
    try {
      telemetry::read_trace(path);
      ADD_FAILURE() << c.insert << " was read";
    } catch (const TraceError& e) {
      EXPECT_THAT(e.what(), HasSubstr("counter row 2")) << c.insert;
      EXPECT_THAT(e.what(), HasSubstr(c.problem)) << c.insert;
      EXPECT_THAT(e.what(), HasSubstr(path.string())) << c.insert;
    }
  }
}

TEST(ChromeExportCounters, CountersBecomeCounterEvents) {
  Trace trace;
  trace.counters = {{"device_memory_bytes", "cpu:0", 2000, 4096},
                    {"device_memory_bytes", "cpu:0", 9000, 0},
                    {"cache_hit_rate", "", 3000, 0.75}};
  std::ostringstream out;
  telemetry::write_chrome_trace(trace, out);
  const nlohmann::json document = nlohmann::json::parse(out.str());
  std::vector<nlohmann::json> counters;
  for (const nlohmann::json& event : document["traceEvents"])
    if (event["ph"] == "C") counters.push_back(event);
  ASSERT_EQ(counters.size(), 3u);
  EXPECT_EQ(counters[0]["name"], "cpu:0 device_memory_bytes");
  EXPECT_EQ(counters[0]["ts"], 2.0);
  EXPECT_EQ(counters[0]["args"]["value"], 4096.0);
  EXPECT_EQ(counters[1]["ts"], 9.0);
  EXPECT_EQ(counters[1]["args"]["value"], 0.0);
  EXPECT_EQ(counters[2]["name"], "cache_hit_rate");
  EXPECT_EQ(counters[2]["args"]["value"], 0.75);
  EXPECT_EQ(counters[2]["pid"], counters[0]["pid"]);
}

}  // namespace
}  // namespace weft
