// Telemetry from real runs on a PoCL device: dispatches with their source line, kernels timed
// by OpenCL profiling on the host clock, compiles split into phases, cache lookups, callbacks
// with token edges in program order, loop iterations and predicate reads, waits, and threads.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "support/print_capture.h"
#include "support/recording.h"
#include "support/test_devices.h"
#include "weft/opencl/register.h"
#include "weft/telemetry/trace_tools.h"
#include "weft/weft.h"

namespace weft {
namespace {

using telemetry::Span;
using telemetry::SpanKind;
using telemetry::Trace;
using testing::PrintCapture;
using testing::Recording;

constexpr DebugPrintOptions kOrdered{.ordered = true};

Array vec(std::vector<float> values) {
  const auto n = static_cast<std::int64_t>(values.size());
  return Array::from_vector<float>({n}, values);
}

std::vector<const Span*> of_kind(const Trace& trace, SpanKind kind) {
  std::vector<const Span*> out;
  for (const Span& s : trace.spans)
    if (s.kind == kind) out.push_back(&s);
  return out;
}

std::string arg(const Span& span, std::string_view key) {
  const std::string* value = span.arg(key);
  return value ? *value : std::string("<missing ") + std::string(key) + ">";
}

const Span& span_with_id(const Trace& trace, telemetry::Id id) {
  const std::ptrdiff_t index = trace.index_of(id);
  if (index < 0) throw std::runtime_error("no span with id " + std::to_string(id));
  return trace.spans[static_cast<std::size_t>(index)];
}

TEST(TelemetryRecording, OffWithoutASinkAndRecordsNothing) {
  ASSERT_FALSE(telemetry::enabled()) << "run the tests without WEFT_TRACE and WEFT_MONITOR";
  auto f = jit([](const Array& x) { return x * 3.0 + 1.0; });
  EXPECT_FLOAT_EQ(f(vec({1, 2})).to_host().get_f64(1), 7.0);
  EXPECT_EQ(telemetry::queued(), 0u);
}

// A sink as slow as a stalled disk: the telemetry thread spends most of its time in it.
class SlowSink final : public telemetry::Sink {
 public:
  void write(std::span<const Span> spans, std::span<const telemetry::Edge>,
             std::span<const telemetry::Program>) override {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    std::lock_guard lock(mutex_);
    // Only the test's own spans: work a previous test left behind (a program-cache write after
    // a first run) may record while this sink is installed.
    for (const Span& s : spans)
      if (s.name == "busy") ids_.push_back(s.id);
  }
  std::vector<telemetry::Id> ids() {
    std::lock_guard lock(mutex_);
    return ids_;
  }

 private:
  std::mutex mutex_;
  std::vector<telemetry::Id> ids_;
};

TEST(TelemetryRecording, AThreadThatOutrunsTheSinksKeepsTheQueueBoundedAndLosesNothing) {
  auto sink = std::make_shared<SlowSink>();
  telemetry::add_sink(sink);
  constexpr std::size_t kSpans = 3 * telemetry::kMaxQueuedRecords + 1000;
  std::size_t most_queued = 0;
  std::vector<telemetry::Id> emitted;
  for (std::size_t i = 0; i < kSpans; ++i) {
    Span span;
    span.id = telemetry::next_id();
    span.kind = SpanKind::dispatch;
    span.track = telemetry::this_thread_track();
    span.name = "busy";
    emitted.push_back(span.id);
    telemetry::emit(std::move(span));
    most_queued = std::max(most_queued, telemetry::queued());
  }
  telemetry::remove_sink(sink);
  EXPECT_LE(most_queued, telemetry::kMaxQueuedRecords);
  // Every span arrived once, in the order it was emitted, whichever thread delivered it.
  EXPECT_EQ(sink->ids(), emitted);
}

TEST(TelemetryRecording, JitRunRecordsCompilePhasesDispatchesKernelsAndWaits) {
  Recording recording;
  const int line = __LINE__ + 1;
  auto f = jit([](const Array& x) { return np::sum(np::exp(x * 2.0) + 1.0); },
               {.name = "telemetry_sum"});
  const Array x = vec({0.5f, 1.5f, -2.0f, 3.0f});
  const double first = f(x).to_host().get_f64(0);
  const double second = f(x).to_host().get_f64(0);
  EXPECT_DOUBLE_EQ(first, second);
  const Trace trace = recording.finish();

  // One compile, its phases inside it, in order, and its cache lookup.
  const auto compiles = of_kind(trace, SpanKind::compile);
  ASSERT_EQ(compiles.size(), 1u);
  const Span& compile = *compiles[0];
  EXPECT_EQ(compile.name, "telemetry_sum");
  EXPECT_EQ(compile.track.kind, telemetry::TrackKind::host_thread);
  std::vector<std::string> phases;
  std::int64_t previous_end = compile.start_ns;
  for (const Span* p : of_kind(trace, SpanKind::compile_phase)) {
    if (p->parent != compile.id) continue;
    phases.push_back(p->name);
    EXPECT_GE(p->start_ns, previous_end);
    EXPECT_LE(p->end_ns, compile.end_ns);
    previous_end = p->end_ns;
  }
  EXPECT_EQ(phases, (std::vector<std::string>{"plan", "codegen", "build"}));
  // Tracing is its own phase, before the compile.
  bool traced = false;
  for (const Span* p : of_kind(trace, SpanKind::compile_phase))
    traced |= p->name == "trace" && arg(*p, "function") == "telemetry_sum" &&
              p->end_ns <= compile.start_ns;
  EXPECT_TRUE(traced);
  const auto lookups = of_kind(trace, SpanKind::cache_lookup);
  ASSERT_EQ(lookups.size(), 1u) << "the tests run with the persistent cache on";
  EXPECT_EQ(lookups[0]->parent, compile.id);
  EXPECT_EQ(arg(*lookups[0], "key"), arg(compile, "key"));
  EXPECT_EQ(arg(*lookups[0], "key").size(), 32u);
  EXPECT_TRUE(arg(*lookups[0], "status") == "hit" || arg(*lookups[0], "status") == "miss");
  EXPECT_EQ(arg(*lookups[0], "status"), arg(compile, "cache"));

  // The program: its kernels, source and IR, under the id the compile names.
  ASSERT_EQ(trace.programs.size(), 1u);
  const telemetry::Program& program = trace.programs[0];
  EXPECT_EQ(std::to_string(program.id), arg(compile, "program"));
  EXPECT_EQ(program.function, "telemetry_sum");
  EXPECT_NE(program.source.find("__kernel"), std::string::npos);
  EXPECT_NE(program.ir.find("exp"), std::string::npos);
  ASSERT_FALSE(program.kernels.empty());

  // Two dispatches on this thread, with the line that made the function.
  const auto dispatches = of_kind(trace, SpanKind::dispatch);
  ASSERT_EQ(dispatches.size(), 2u);
  std::set<telemetry::Id> dispatch_ids;
  for (const Span* d : dispatches) {
    EXPECT_EQ(d->name, "telemetry_sum");
    EXPECT_EQ(arg(*d, "location"), "telemetry_recording_test.cpp:" + std::to_string(line));
    EXPECT_EQ(arg(*d, "program"), std::to_string(program.id));
    EXPECT_EQ(d->track, telemetry::this_thread_track());
    dispatch_ids.insert(d->id);
  }

  // Kernels: every launch of both runs, on the device's queue, each after its dispatch began
  // (device times mapped onto the host clock), with its fused ops.
  std::map<std::string, std::string> fused;
  for (const auto& k : program.kernels) {
    std::string ops;
    for (const auto& op : k.fused_ops) ops += (ops.empty() ? "" : ",") + op;
    fused[k.name] = ops;
  }
  const auto kernels = of_kind(trace, SpanKind::kernel);
  std::size_t launches_per_run = 0;
  for (const KernelSummary& k : f.lower(x).compile()->info().kernels)
    launches_per_run += static_cast<std::size_t>(k.launches);
  EXPECT_EQ(kernels.size(), 2 * launches_per_run);
  for (const Span* k : kernels) {
    ASSERT_TRUE(dispatch_ids.count(k->parent)) << k->name;
    const Span& dispatch = span_with_id(trace, k->parent);
    EXPECT_EQ(k->track.kind, telemetry::TrackKind::queue);
    EXPECT_EQ(k->track.name, testing::test_device().name() + " queue");
    EXPECT_GE(k->start_ns, dispatch.start_ns) << k->name;
    EXPECT_GE(k->end_ns, k->start_ns);
    const std::string base =
        k->name.ends_with("_tail") ? k->name.substr(0, k->name.size() - 5) : k->name;
    ASSERT_TRUE(fused.count(base)) << k->name;
    EXPECT_EQ(arg(*k, "fused_ops"), fused[base]) << k->name;
    EXPECT_NE(arg(*k, "global_size"), "0");
    EXPECT_NE(arg(*k, "queue_wait_ns"), "<missing queue_wait_ns>");
  }

  // The waits for the values, with their lines, and the transfers behind them.
  const auto waits = of_kind(trace, SpanKind::array_wait);
  ASSERT_GE(waits.size(), 2u);
  EXPECT_EQ(waits[0]->name, "to_host");
  EXPECT_EQ(arg(*waits[0], "array"), "f32[]");
  EXPECT_TRUE(arg(*waits[0], "location").starts_with("telemetry_recording_test.cpp:"));
  std::size_t downloads = 0;
  for (const Span* t : of_kind(trace, SpanKind::transfer)) downloads += t->name == "download";
  EXPECT_GE(downloads, 2u);
}

TEST(TelemetryRecording, OrderedEffectsInALoopHaveTokenEdgesInProgramOrder) {
  PrintCapture capture;
  std::atomic<int> calls{0};
  auto f = jit(
      [&](const Array& x) {
        return lax::fori_loop(
            0, 5,
            [&](const Array& i, const Array& c) {
              debug_print("i = {} c = {}", i, c, kOrdered);
              Array same = io_callback(
                  [&](const HostArray& v) {
                    ++calls;
                    return v;
                  },
                  ShapeDtype::like(c), c, CallbackOptions{.ordered = true});
              return same * 2.0;
            },
            x);
      },
      {.name = "telemetry_loop"});
  Recording recording;
  for (int run = 0; run < 3; ++run) f(vec({1, 2}));
  const Trace trace = recording.finish();
  EXPECT_EQ(calls.load(), 15);
  EXPECT_EQ(capture.lines().size(), 15u);

  const auto callbacks = of_kind(trace, SpanKind::callback);
  ASSERT_EQ(callbacks.size(), 30u);  // 15 prints and 15 io_callbacks
  std::map<std::string, std::vector<const Span*>> by_effect;
  for (const Span* c : callbacks) {
    EXPECT_EQ(arg(*c, "thread"), telemetry::this_thread_track().name);
    EXPECT_EQ(arg(*c, "ordered"), "true");
    EXPECT_EQ(arg(*c, "status"), "ok");
    EXPECT_EQ(arg(*c, "device"), testing::test_device().name());
    EXPECT_EQ(c->track.kind, telemetry::TrackKind::callback);
    EXPECT_GT(c->seq, 0);
    by_effect[c->effect].push_back(c);
  }
  ASSERT_EQ(by_effect.size(), 2u);
  for (const auto& stream : telemetry::effect_streams(trace)) {
    EXPECT_TRUE(stream.ordered);
    EXPECT_EQ(stream.program_order.size(), 15u);
    EXPECT_EQ(stream.out_of_order, 0u) << stream.effect;
  }
  // Each callback but the first of its effect waited for the one before it in program order.
  std::map<telemetry::Id, std::vector<const telemetry::Edge*>> incoming;
  for (const telemetry::Edge& e : trace.edges) incoming[e.to].push_back(&e);
  for (auto& [effect, spans] : by_effect) {
    std::sort(spans.begin(), spans.end(), [](auto* a, auto* b) { return a->seq < b->seq; });
    EXPECT_TRUE(incoming[spans[0]->id].empty()) << effect;
    for (std::size_t i = 1; i < spans.size(); ++i) {
      const auto& in = incoming[spans[i]->id];
      ASSERT_EQ(in.size(), 1u) << effect << " #" << i;
      EXPECT_EQ(in[0]->from, spans[i - 1]->id) << effect << " #" << i;
      EXPECT_EQ(in[0]->effect, effect);
      EXPECT_LE(spans[i - 1]->end_ns, spans[i]->start_ns);
    }
  }
  // The prints carry their arguments' shapes, the callbacks their results'.
  EXPECT_EQ(arg(*by_effect.begin()->second[0], "shapes").empty(), false);
  for (const Span* k : of_kind(trace, SpanKind::kernel))
    EXPECT_NE(arg(*k, "iteration"), "<missing iteration>") << k->name;
}

TEST(TelemetryRecording, WhileLoopRecordsIterationsAndPredicateReadsOnTheRuntimeThread) {
  auto f = jit([](const Array& x) {
    using State = std::tuple<Array, Array>;
    auto [n, v] = lax::while_loop([](const State& s) { return std::get<0>(s) < 4; },
                                  [](const State& s) {
                                    return State{std::get<0>(s) + 1, std::get<1>(s) * 2.0};
                                  },
                                  State{Array::scalar_int(0, DType::I32), x});
    return v;
  });
  Recording recording;
  EXPECT_FLOAT_EQ(static_cast<float>(f(vec({1.5f})).to_host().get_f64(0)), 24.0f);
  const Trace trace = recording.finish();
  const auto iterations = of_kind(trace, SpanKind::loop_iteration);
  ASSERT_EQ(iterations.size(), 4u);
  for (std::size_t i = 0; i < iterations.size(); ++i) {
    EXPECT_EQ(arg(*iterations[i], "index"), std::to_string(i));
    EXPECT_EQ(iterations[i]->track.kind, telemetry::TrackKind::runtime);
    EXPECT_EQ(iterations[i]->track.device, testing::test_device().name());
  }
  const auto reads = of_kind(trace, SpanKind::predicate_read);
  ASSERT_EQ(reads.size(), 5u);  // the predicate is read once more than the body runs
  EXPECT_EQ(arg(*reads.back(), "value"), "0");
  EXPECT_EQ(arg(*reads.front(), "value"), "1");
  std::set<std::string> labelled;
  for (const Span* k : of_kind(trace, SpanKind::kernel)) labelled.insert(arg(*k, "iteration"));
  for (int i = 0; i < 4; ++i) EXPECT_TRUE(labelled.count(std::to_string(i))) << i;
  // The dispatch is still the calling thread's, though the run went on elsewhere.
  const auto dispatches = of_kind(trace, SpanKind::dispatch);
  ASSERT_EQ(dispatches.size(), 1u);
  EXPECT_EQ(dispatches[0]->track, telemetry::this_thread_track());
}

TEST(TelemetryRecording, TwoThreadsPrintingHaveOneStreamEachInProgramOrder) {
  PrintCapture capture;
  auto f = jit([](const Array& x) {
    debug_print("x = {}", x, kOrdered);
    return x + 1.0;
  });
  Recording recording;
  std::vector<std::string> names(2);
  auto work = [&](int t) {
    names[static_cast<std::size_t>(t)] = telemetry::this_thread_track().name;
    Array x = vec({static_cast<float>(t)});
    for (int i = 0; i < 20; ++i) x = f(x);
    effects_barrier(EffectsBarrierScope::ThisThread);
  };
  std::thread a(work, 0), b(work, 1);
  a.join();
  b.join();
  const Trace trace = recording.finish();
  EXPECT_NE(names[0], names[1]);
  const auto streams = telemetry::effect_streams(trace);
  ASSERT_EQ(streams.size(), 2u);
  std::set<std::string> threads;
  for (const auto& stream : streams) {
    threads.insert(stream.thread);
    EXPECT_EQ(stream.program_order.size(), 20u);
    EXPECT_EQ(stream.out_of_order, 0u);
  }
  EXPECT_EQ(threads, (std::set<std::string>{names[0], names[1]}));
  std::set<std::string> dispatching;
  for (const Span* d : of_kind(trace, SpanKind::dispatch)) dispatching.insert(d->track.name);
  EXPECT_EQ(dispatching, threads);
  // Edges stay within a thread's stream.
  for (const telemetry::Edge& e : trace.edges)
    EXPECT_EQ(arg(span_with_id(trace, e.from), "thread"), arg(span_with_id(trace, e.to), "thread"));
}

TEST(TelemetryRecording, AFailingCallbackSaysSoInItsSpan) {
  auto f = jit([](const Array& x) {
    return io_callback(
        [](const HostArray&) -> HostArray { throw std::runtime_error("sensor unplugged"); },
        ShapeDtype::like(x), x, CallbackOptions{.ordered = true});
  });
  Recording recording;
  EXPECT_THROW(f(vec({1})).to_host(), CallbackException);
  const Trace trace = recording.finish();
  const auto callbacks = of_kind(trace, SpanKind::callback);
  ASSERT_EQ(callbacks.size(), 1u);
  EXPECT_NE(arg(*callbacks[0], "status").find("sensor unplugged"), std::string::npos);
  EXPECT_TRUE(arg(*callbacks[0], "status").starts_with("failed"));
  EXPECT_EQ(callbacks[0]->name, "io_callback");
}

TEST(TelemetryRecording, EffectsBarrierIsAWait) {
  PrintCapture capture;
  auto f = jit([](const Array& x) {
    debug_print("x = {}", x, kOrdered);
    return x;
  });
  Recording recording;
  f(vec({4}));
  effects_barrier();
  const Trace trace = recording.finish();
  const auto barriers = of_kind(trace, SpanKind::barrier_wait);
  ASSERT_GE(barriers.size(), 1u);
  EXPECT_EQ(barriers[0]->name, "effects_barrier");
  EXPECT_EQ(barriers[0]->track, telemetry::this_thread_track());
  // The print ran before the barrier returned.
  const auto callbacks = of_kind(trace, SpanKind::callback);
  ASSERT_EQ(callbacks.size(), 1u);
  EXPECT_LE(callbacks[0]->end_ns, barriers[0]->end_ns);
}

}  // namespace
}  // namespace weft
