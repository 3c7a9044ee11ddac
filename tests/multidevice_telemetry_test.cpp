// Telemetry across two devices (two PoCL devices: CTest runs this with POCL_DEVICES="pthread
// pthread"): one
// queue row per device, kernels on the device that ran them, and ordered prints that alternate
// between the devices linked by token edges that cross from one device's callbacks to the
// other's, in program order.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "support/print_capture.h"
#include "support/recording.h"
#include "support/slice_nesting.h"
#include "support/test_devices.h"
#include "weft/opencl/register.h"
#include "weft/telemetry/trace_tools.h"
#include "weft/weft.h"

namespace weft {
namespace {

using telemetry::Span;
using telemetry::SpanKind;
using testing::PrintCapture;
using testing::Recording;

constexpr DebugPrintOptions kOrdered{.ordered = true};

TEST(TwoDevicesTelemetry, AlternatingOrderedPrintsHaveEdgesAcrossDevicesInProgramOrder) {
  WEFT_SKIP_WITHOUT_TWO_DEVICES();
  PrintCapture capture;
  Device& d0 = *testing::two_devices().at(0);
  Device& d1 = *testing::two_devices().at(1);
  auto hello = jit(
      [](const Array& x) {
        debug_print("hello {}", x, kOrdered);
        return np::tanh(x) + 1.0;
      },
      {.name = "hello", .device = &d0});
  auto world = jit(
      [](const Array& x) {
        debug_print("world {}", x, kOrdered);
        return x * 2.0;
      },
      {.name = "world", .device = &d1});
  const Array x0 = Array::from_host(HostArray(DType::F32, {64}), &d0);
  const Array x1 = Array::from_host(HostArray(DType::F32, {64}), &d1);
  Recording recording;
  for (int i = 0; i < 20; ++i) {
    hello(x0);
    world(x1);
  }
  const telemetry::Trace trace = recording.finish();
  ASSERT_EQ(capture.lines().size(), 40u);
  for (std::size_t i = 0; i < 40; ++i)
    EXPECT_TRUE(capture.lines()[i].starts_with(i % 2 ? "world" : "hello")) << i;

  // A queue row per device, and each kernel on the device of its dispatch.
  std::set<std::string> queues;
  for (const telemetry::Track& t : trace.tracks)
    if (t.kind == telemetry::TrackKind::queue) queues.insert(t.name);
  EXPECT_EQ(queues, (std::set<std::string>{d0.name() + " queue", d1.name() + " queue"}));
  std::map<std::string, std::set<std::string>> kernel_devices;  // function -> queue devices
  for (const Span& s : trace.spans) {
    if (s.kind != SpanKind::kernel) continue;
    const Span& dispatch = trace.spans[static_cast<std::size_t>(trace.index_of(s.parent))];
    kernel_devices[dispatch.name].insert(s.track.device);
  }
  EXPECT_EQ(kernel_devices["hello"], (std::set<std::string>{d0.name()}));
  EXPECT_EQ(kernel_devices["world"], (std::set<std::string>{d1.name()}));

  // One stream (one thread, one effect) of 40 callbacks, in program order, alternating
  // devices; each after the first waited for the one before, across devices.
  const auto streams = telemetry::effect_streams(trace);
  ASSERT_EQ(streams.size(), 1u);
  const telemetry::EffectStream& stream = streams[0];
  ASSERT_EQ(stream.program_order.size(), 40u);
  EXPECT_EQ(stream.out_of_order, 0u);
  std::map<telemetry::Id, telemetry::Id> predecessor;
  for (const telemetry::Edge& e : trace.edges) {
    EXPECT_FALSE(predecessor.count(e.to)) << "one incoming edge per callback";
    predecessor[e.to] = e.from;
  }
  std::size_t crossing = 0;
  for (std::size_t k = 0; k < 40; ++k) {
    const Span& span = trace.spans[stream.program_order[k]];
    EXPECT_EQ(*span.arg("device"), k % 2 ? d1.name() : d0.name()) << k;
    if (k == 0) continue;
    const Span& before = trace.spans[stream.program_order[k - 1]];
    ASSERT_TRUE(predecessor.count(span.id)) << k;
    EXPECT_EQ(predecessor[span.id], before.id) << k;
    EXPECT_LE(before.end_ns, span.start_ns) << k;
    crossing += *before.arg("device") != *span.arg("device");
  }
  EXPECT_EQ(crossing, 39u);
}

TEST(TwoDevicesTelemetry, ExportNestsEverySliceOnItsThread) {
  // Perfetto drops a slice that overlaps another of its thread without nesting. Two host
  // threads dispatch to two devices (kernels queued back to back, prints, compiles of fresh
  // shapes with their cache lookups): the export keeps every span, and nests every slice.
  WEFT_SKIP_WITHOUT_TWO_DEVICES();
  PrintCapture capture;
  Recording recording;
  auto work = [](Device& device, const char* name) {
    auto step = jit(
        [name](const Array& x) {
          debug_print(std::string(name) + " {}", x);
          return np::tanh(x) * 2.0 + 1.0;
        },
        {.name = name, .device = &device});
    for (const std::int64_t size : {8, 24, 40}) {
      Array x = Array::from_host(HostArray(DType::F32, {size}), &device);
      for (int i = 0; i < 15; ++i) x = step(x);
      x.block_until_ready();
    }
  };
  std::thread first(work, std::ref(*testing::two_devices().at(0)), "left");
  std::thread second(work, std::ref(*testing::two_devices().at(1)), "right");
  first.join();
  second.join();
  const telemetry::Trace trace = recording.finish();
  ASSERT_GT(trace.spans.size(), 100u);
  std::ostringstream out;
  telemetry::write_chrome_trace(trace, out);
  const nlohmann::json document = nlohmann::json::parse(out.str());
  EXPECT_EQ(testing::partial_overlaps(document), 0u);
  std::size_t slices = 0;
  for (const nlohmann::json& e : document["traceEvents"]) slices += e["ph"] == "X";
  EXPECT_EQ(slices, trace.spans.size());
}

}  // namespace
}  // namespace weft
