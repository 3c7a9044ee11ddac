// Ordered and unordered effects on one PoCL device: the examples of the sequencing and
// host_callback documentation, prints and callbacks inside every control-flow primitive (against
// the reference interpreter running the same lowered program), many taps, slow callbacks,
// concurrent threads, callbacks that use weft themselves, and every error path.
// CTest also runs this binary with WEFT_CALLBACK_INLINE=1 and with a tiny
// WEFT_CALLBACK_MAX_QUEUE_BYTES: every test holds in those modes too.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include "support/print_capture.h"
#include "weft/interp/interpreter.h"
#include "weft/ir/text.h"
#include "weft/opencl/register.h"
#include "weft/weft.h"

namespace weft {
namespace {

using testing::PrintCapture;
using Strings = std::vector<std::string>;

constexpr DebugPrintOptions kOrdered{.ordered = true};
constexpr DebugPrintOptions kUnordered{.ordered = false};

Array vec(std::vector<float> values) {
  const auto n = static_cast<std::int64_t>(values.size());
  return Array::from_vector<float>({n}, values);
}

// CTest runs this binary a second time with WEFT_CALLBACK_INLINE=1.
bool inline_callbacks() {
  const char* value = std::getenv("WEFT_CALLBACK_INLINE");
  return value && std::string_view(value) == "1";
}

Strings sorted(Strings lines) {
  std::sort(lines.begin(), lines.end());
  return lines;
}

// Runs a lowered (token-threaded) program on the reference interpreter with `inputs` for its
// user parameters and fresh tokens for the rest; returns what it printed.
Strings interpreter_prints(const Lowered& lowered, const std::vector<HostArray>& inputs) {
  std::vector<HostArray> all = inputs;
  for (const Array& captured : lowered.captured()) all.push_back(captured.to_host());
  const Graph& graph = lowered.graph();
  for (std::size_t p = all.size(); p < graph.params.size(); ++p)
    all.emplace_back(DType::Token, Shape{});
  PrintCapture capture;
  interpret(graph, all);
  return capture.lines();
}

// --- JAX's documented examples ----------------------------------------------------------------

TEST(EffectsSeeds, HelloThenWorldInOneFunctionKeepProgramOrder) {
  PrintCapture capture;
  auto f = jit([](const Array& x) {
    debug_print("hello", kOrdered);
    debug_print("world", kOrdered);
    return x;
  });
  const Array x = vec({1, 2});
  for (int i = 0; i < 50; ++i) f(x);
  effects_barrier();
  Strings expected;
  for (int i = 0; i < 50; ++i) {
    expected.push_back("hello");
    expected.push_back("world");
  }
  EXPECT_EQ(capture.lines(), expected);
}

TEST(EffectsSeeds, AnUnorderedPrintCanBeWaitedForThroughTheBarrier) {
  PrintCapture capture;
  // No outputs but the print: only the output token says when it has run.
  auto f = jit([](const Array& x) {
    debug_print("hello world {}", x, kUnordered);
    return std::vector<Array>{};
  });
  f(vec({7}));
  effects_barrier();
  EXPECT_EQ(capture.lines(), Strings{"hello world [7.]"});
}

TEST(EffectsSeeds, HcbCallRunsAHostFunctionAndReturnsItsResult) {
  // host_callback's documented host_eig, in the form of a host function no device op computes: a
  // sort.
  auto host_sort = [](const HostArray& m) {
    std::vector<float> v = m.to_vector<float>();
    std::sort(v.begin(), v.end());
    return HostArray::from<float>(m.shape(), v);
  };
  auto device_fun = jit([&](const Array& m) {
    return hcb::call(host_sort, m * 2.0, ShapeDtype{DType::F32, {5}}) + 1.0;
  });
  const Array y = device_fun(vec({3, -1, 4, 1, -5}));
  EXPECT_EQ(y.to_vector<float>(), (std::vector<float>{-9, -1, 3, 7, 9}));
}

TEST(EffectsSeeds, HcbCallWithDeviceNamesTheDevice) {
  std::mutex mutex;
  Strings seen;
  auto host_sin = [&](const HostArray& x, const std::string& device) {
    {
      std::lock_guard lock(mutex);
      seen.push_back("Invoking host_sin with " + shape_to_string(x.shape()) + " on " + device);
    }
    std::vector<float> v = x.to_vector<float>();
    for (float& e : v) e = std::sin(e);
    return HostArray::from<float>(x.shape(), v);
  };
  auto f = jit([&](const Array& x) {
    return hcb::call(host_sin, x, ShapeDtype::like(x), {.call_with_device = true});
  });
  const Array x = vec({0.5f, 1, 2, 3});
  const std::vector<float> y = f(x).to_vector<float>();
  for (std::size_t i = 0; i < y.size(); ++i)
    EXPECT_FLOAT_EQ(y[i], std::sin(x.to_vector<float>()[i]));
  std::lock_guard lock(mutex);
  EXPECT_EQ(seen, Strings{"Invoking host_sin with [4] on " + default_device().name()});
}

Array power3(const Array& x) {
  const Array y = x * x;
  hcb::id_print({x, y}, {.what = "x,x²"});
  return y * x;
}

TEST(EffectsSeeds, IdPrintWithWhatPrintsTheSeedsLine) {
  PrintCapture capture;
  const Array r = jit(power3)(Array::scalar(3.0, DType::F32));
  EXPECT_EQ(r.to_vector<float>(), std::vector<float>{27});
  hcb::barrier_wait();
  EXPECT_EQ(capture.lines(), Strings{"what: x,x² : (3., 9.)"});
  // Eagerly (outside jit) too, in the same words.
  capture.clear();
  power3(Array::scalar(3.0, DType::F32));
  hcb::barrier_wait();
  EXPECT_EQ(capture.lines(), Strings{"what: x,x² : (3., 9.)"});
}

TEST(EffectsSeeds, IdPrintToItsOwnStreamAndIdTapReturnItsArgumentOrResult) {
  std::ostringstream own;
  std::vector<float> tapped;
  auto f = jit([&](const Array& x) {
    const Array a = hcb::id_print(x + 1.0, {.what = "a", .output_stream = &own});
    const Array b = hcb::id_tap([&](const HostArray& v) { tapped = v.to_vector<float>(); }, a * 2.0,
                                {.result = a - 1.0});
    return b;
  });
  const Array y = f(vec({1, 2}));
  EXPECT_EQ(y.to_vector<float>(), (std::vector<float>{1, 2}));
  hcb::barrier_wait();
  EXPECT_EQ(own.str(), "what: a : [2. 3.]\n");
  EXPECT_EQ(tapped, (std::vector<float>{4, 6}));
}

TEST(EffectsSeeds, TapWithDeviceReceivesTheDeviceName) {
  std::string device_seen;
  auto f = jit([&](const Array& x) {
    return hcb::id_tap([&](const HostArray&, const std::string& d) { device_seen = d; }, x,
                       {.tap_with_device = true});
  });
  f(vec({1}));
  hcb::barrier_wait();
  EXPECT_EQ(device_seen, default_device().name());
}

// --- Control flow -----------------------------------------------------------------------

struct ControlFlowCase {
  std::string name;
  std::function<Array(const Array&, DebugPrintOptions)> fn;
  Strings expected_ordered;  // program order
};

std::vector<ControlFlowCase> control_flow_cases() {
  std::vector<ControlFlowCase> cases;
  cases.push_back({"fori_loop",
                   [](const Array& x, DebugPrintOptions o) {
                     debug_print("before {}", x, o);
                     Array r = lax::fori_loop(
                         0, 4,
                         [o](const Array& i, const Array& c) {
                           debug_print("i = {} c = {}", i, c, o);
                           return c * 2.0;
                         },
                         x);
                     debug_print("after {}", r, o);
                     return r;
                   },
                   {"before [1.]", "i = 0 c = [1.]", "i = 1 c = [2.]", "i = 2 c = [4.]",
                    "i = 3 c = [8.]", "after [16.]"}});
  cases.push_back({"while_loop",
                   [](const Array& x, DebugPrintOptions o) {
                     using State = std::tuple<Array, Array>;
                     auto [n, v] = lax::while_loop(
                         [o](const State& s) {
                           debug_print("cond n = {}", std::get<0>(s), o);
                           return std::get<0>(s) < 3;
                         },
                         [o](const State& s) {
                           debug_print("body n = {}", std::get<0>(s), o);
                           return State{std::get<0>(s) + 1, std::get<1>(s) + 0.5};
                         },
                         State{Array::scalar_int(0, DType::I32), x});
                     debug_print("done {}", v, o);
                     return v;
                   },
                   // As in JAX, a condition with an effect runs once more than the body.
                   {"cond n = 0", "body n = 0", "cond n = 1", "body n = 1", "cond n = 2",
                    "body n = 2", "cond n = 3", "done [2.5]"}});
  cases.push_back({"scan",
                   [](const Array& x, DebugPrintOptions o) {
                     const Array xs = np::reshape(np::arange(6, DType::F32), {3, 2});
                     auto [c, ys] = lax::scan(
                         [o](const Array& c, const Array& row) {
                           debug_print("row {} c {}", row, c, o);
                           return std::make_pair(c + np::sum(row), c);
                         },
                         np::sum(x), xs);
                     debug_print("ys {}", ys, o);
                     return c + np::sum(ys);
                   },
                   {"row [0. 1.] c 1.", "row [2. 3.] c 2.", "row [4. 5.] c 7.", "ys [1. 2. 7.]"}});
  cases.push_back({"cond",
                   [](const Array& x, DebugPrintOptions o) {
                     Array r = lax::cond(
                         np::sum(x) > 0.0,
                         [o](const Array& v) {
                           debug_print("positive {}", v, o);
                           return v + 1.0;
                         },
                         [o](const Array& v) {
                           debug_print("not positive {}", v, o);
                           return v - 1.0;
                         },
                         x);
                     Array s = lax::cond(
                         np::sum(x) > 5.0,
                         [o](const Array& v) {
                           debug_print("large {}", v, o);
                           return v;
                         },
                         [o](const Array& v) {
                           debug_print("small {}", v, o);
                           return v * 3.0;
                         },
                         r);
                     return s;
                   },
                   {"positive [1.]", "small [2.]"}});
  return cases;
}

class EffectsInControlFlow : public ::testing::TestWithParam<std::size_t> {};

TEST_P(EffectsInControlFlow, OrderedPrintsRunInProgramOrderAndMatchTheInterpreter) {
  const ControlFlowCase c = control_flow_cases()[GetParam()];
  auto f = jit([&](const Array& x) { return c.fn(x, kOrdered); });
  const Array x = vec({1});
  PrintCapture capture;
  for (int round = 0; round < 3; ++round) {
    capture.clear();
    f(x);
    effects_barrier();
    EXPECT_EQ(capture.lines(), c.expected_ordered) << c.name << ", round " << round;
  }
  EXPECT_EQ(interpreter_prints(f.lower(x), {x.to_host()}), c.expected_ordered) << c.name;
}

TEST_P(EffectsInControlFlow, UnorderedPrintsPrintTheSameLines) {
  const ControlFlowCase c = control_flow_cases()[GetParam()];
  auto f = jit([&](const Array& x) { return c.fn(x, kUnordered); });
  const Array x = vec({1});
  PrintCapture capture;
  f(x);
  effects_barrier();
  EXPECT_EQ(sorted(capture.lines()), sorted(c.expected_ordered)) << c.name;
  EXPECT_EQ(sorted(interpreter_prints(f.lower(x), {x.to_host()})), sorted(c.expected_ordered));
}

TEST_P(EffectsInControlFlow, EagerCallsPrintWhatJitPrints) {
  const ControlFlowCase c = control_flow_cases()[GetParam()];
  PrintCapture capture;
  c.fn(vec({1}), kOrdered);
  effects_barrier();
  EXPECT_EQ(capture.lines(), c.expected_ordered) << c.name;
}

INSTANTIATE_TEST_SUITE_P(AllPrimitives, EffectsInControlFlow, ::testing::Values(0, 1, 2, 3),
                         [](const ::testing::TestParamInfo<std::size_t>& info) {
                           return control_flow_cases()[info.param].name;
                         });

// As `lax.cond(p, lambda: jax.debug.print(...), lambda: None)`: branches that return nothing.
TEST(EffectsInControlFlow, BranchesThatReturnNothingRunOnlyForTheirEffects) {
  auto f = jit([](const Array& x) {
    lax::cond(
        np::sum(x) > 0.0, [&] { debug_print("positive {}", x, kOrdered); }, [] {});
    lax::switch_(Array::scalar_int(2),
                 std::make_tuple([](const Array& v) { debug_print("branch 0 {}", v, kOrdered); },
                                 [](const Array& v) { debug_print("branch 1 {}", v, kOrdered); }),
                 x);
    const std::vector<std::function<void(const Array&)>> branches = {
        [](const Array& v) { debug_print("first {}", v, kOrdered); },
        [](const Array& v) { debug_print("second {}", v, kOrdered); }};
    lax::switch_(Array::scalar_int(0), branches, x);
    return x;
  });
  PrintCapture capture;
  f(vec({2}));
  f(vec({-2}));
  effects_barrier();
  EXPECT_EQ(capture.lines(), (Strings{"positive [2.]", "branch 1 [2.]", "first [2.]",
                                      "branch 1 [-2.]", "first [-2.]"}));
  // Eagerly: each call runs at once.
  capture.clear();
  lax::cond(
      Array::scalar_int(1), [] { debug_print("eager true", kOrdered); },
      [] { debug_print("eager false", kOrdered); });
  effects_barrier();
  EXPECT_EQ(capture.lines(), (Strings{"eager true"}));
}

TEST(EffectsInControlFlowLoops, CallbackResultsFeedTheNextIteration) {
  // io_callback inside a loop: the device waits for each result before the next iteration.
  std::atomic<int> calls{0};
  auto f = jit([&](const Array& x) {
    return lax::fori_loop(
        0, 20,
        [&](const Array&, const Array& c) {
          Array doubled = io_callback(
              [&](const HostArray& v) {
                ++calls;
                std::vector<float> e = v.to_vector<float>();
                for (float& a : e) a = 2 * a + 1;
                return HostArray::from<float>(v.shape(), e);
              },
              ShapeDtype::like(c), c, CallbackOptions{.ordered = true});
          return doubled - 1.0;
        },
        x);
  });
  // c -> 2c + 1 - 1 = 2c, twenty times.
  EXPECT_EQ(f(vec({1, -3})).to_vector<float>(), (std::vector<float>{1 << 20, -3.0f * (1 << 20)}));
  EXPECT_EQ(calls.load(), 20);
}

TEST(EffectsInControlFlowLoops, IndependentWorkAndChainedCallbackResultsComputeCorrectly) {
  // b does not depend on the first callback, so it is enqueued while that callback runs; the
  // second callback reads the first's result.
  auto twice = [](const HostArray& v) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    std::vector<float> e = v.to_vector<float>();
    for (float& a : e) a *= 2;
    return HostArray::from<float>(v.shape(), e);
  };
  auto plus_one = [](const HostArray& v) {
    std::vector<float> e = v.to_vector<float>();
    for (float& a : e) a += 1;
    return HostArray::from<float>(v.shape(), e);
  };
  auto f = jit([&](const Array& x) {
    const Array a = io_callback(twice, ShapeDtype::like(x), x);
    const Array b = np::tanh(x) * 3.0;
    const Array d = pure_callback(plus_one, ShapeDtype::like(x), a);
    return std::make_tuple(a + b, d, b);
  });
  const Array x = vec({0.5f, -1, 2});
  const auto [c, d, b] = f(x);
  const std::vector<float> xs = x.to_vector<float>();
  const std::vector<float> cs = c.to_vector<float>(), ds = d.to_vector<float>(),
                           bs = b.to_vector<float>();
  for (std::size_t i = 0; i < xs.size(); ++i) {
    EXPECT_NEAR(bs[i], std::tanh(xs[i]) * 3, 1e-5);
    EXPECT_NEAR(cs[i], 2 * xs[i] + std::tanh(xs[i]) * 3, 1e-5);
    EXPECT_FLOAT_EQ(ds[i], 2 * xs[i] + 1);
  }
}

// --- Volume, slowness, threads ----------------------------------------------------------

TEST(EffectsVolume, TenJittedFunctionsOfTenTapsMakeExactlyOneHundredCallsInOrder) {
  std::mutex mutex;
  std::vector<std::pair<int, int>> calls;
  using Fn = std::function<Array(const Array&)>;
  std::vector<Fn> functions;
  for (int f = 0; f < 10; ++f) {
    functions.push_back(jit([f, &mutex, &calls](const Array& x) {
      Array v = x;
      for (int t = 0; t < 10; ++t)
        v = hcb::id_tap(
                [f, t, &mutex, &calls](const HostArray&) {
                  std::lock_guard lock(mutex);
                  calls.emplace_back(f, t);
                },
                v) +
            1.0;
      return v;
    }));
  }
  Array x = vec({0});
  for (const Fn& fn : functions) x = fn(x);
  EXPECT_EQ(x.to_vector<float>(), std::vector<float>{100});
  hcb::barrier_wait();
  std::vector<std::pair<int, int>> expected;
  for (int f = 0; f < 10; ++f)
    for (int t = 0; t < 10; ++t) expected.emplace_back(f, t);
  std::lock_guard lock(mutex);
  EXPECT_EQ(calls, expected);  // hcb taps are ordered: program order, exactly once each
}

TEST(EffectsVolume, TheBarrierWaitsForACallbackThatSleepsTwoSeconds) {
  std::atomic<bool> finished{false};
  auto f = jit([&](const Array& x) {
    return hcb::id_tap(
        [&](const HostArray&) {
          std::this_thread::sleep_for(std::chrono::seconds(2));
          finished = true;
        },
        x);
  });
  const Array y = f(vec({1}));
  if (inline_callbacks()) {
    EXPECT_TRUE(finished.load());  // it ran on this thread, before the call returned
  } else {
    // The dispatch returned while the callback sleeps; the tap does not hold the result back.
    EXPECT_FALSE(finished.load());
  }
  EXPECT_EQ(y.to_vector<float>(), std::vector<float>{1});
  effects_barrier();
  EXPECT_TRUE(finished.load());
}

TEST(EffectsThreads, TapsRunOnAReceiverThreadOrInlineOnTheDispatchingOne) {
  std::thread::id ran_on;
  auto f = jit([&](const Array& x) {
    return hcb::id_tap([&](const HostArray&) { ran_on = std::this_thread::get_id(); }, x);
  });
  f(vec({1}));
  hcb::barrier_wait();
  if (inline_callbacks())
    EXPECT_EQ(ran_on, std::this_thread::get_id());
  else
    EXPECT_NE(ran_on, std::this_thread::get_id());
}

TEST(EffectsThreads, TwoThreadsPrintConcurrentlyEachInItsOwnOrder) {
  PrintCapture capture;
  auto printer = jit([](const Array& tag, const Array& k) {
    debug_print("{} {}", tag, k, kOrdered);
    return k + 1;
  });
  constexpr int kPrints = 60;
  auto run = [&](int tag) {
    const Array t = Array::scalar_int(tag, DType::I32);
    Array k = Array::scalar_int(0, DType::I32);
    for (int i = 0; i < kPrints; ++i) k = printer(t, k);
    effects_barrier(EffectsBarrierScope::ThisThread);
  };
  std::thread a(run, 1), b(run, 2);
  a.join();
  b.join();
  effects_barrier();
  std::vector<int> next(3, 0);
  const Strings lines = capture.lines();
  ASSERT_EQ(lines.size(), 2u * kPrints);
  for (const std::string& line : lines) {
    std::istringstream in(line);
    int tag = 0, k = -1;
    in >> tag >> k;
    ASSERT_TRUE(tag == 1 || tag == 2) << line;
    EXPECT_EQ(k, next[static_cast<std::size_t>(tag)]++) << "thread " << tag << " out of order";
  }
}

// --- Callbacks that use weft ------------------------------------------------------------

TEST(EffectsReentrant, ACallbackCallsAJittedFunctionInAThousandIterationLoop) {
  auto inner = jit([](const Array& v) {
    debug_print("inner {}", np::sum(v), kOrdered);  // the callback's own effects nest
    return v * 2.0 + 1.0;
  });
  std::atomic<int> calls{0};
  std::atomic<int> wrong{0};
  auto outer = jit([&](const Array& x) {
    return lax::fori_loop(
        0, 1000,
        [&](const Array&, const Array& c) {
          return hcb::id_tap(
              [&](const HostArray& v) {
                const Array on_device = Array::from_host(v);
                const std::vector<float> r = inner(on_device).to_vector<float>();
                const std::vector<float> eager = (on_device * 2.0 + 1.0).to_vector<float>();
                effects_barrier();  // inside a callback: this thread's effects only
                if (r != eager || r[0] != v.to_vector<float>()[0] * 2 + 1) ++wrong;
                ++calls;
              },
              c + 1.0);
        },
        x);
  });
  PrintCapture capture;
  const Array y = outer(vec({0}));
  EXPECT_EQ(y.to_vector<float>(), std::vector<float>{1000});
  hcb::barrier_wait();
  EXPECT_EQ(calls.load(), 1000);
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_EQ(capture.lines().size(), 1000u);
}

TEST(EffectsReentrant, ACallbackResultComputedWithWeftFeedsTheDevice) {
  auto helper = jit([](const Array& v) { return np::tanh(v) * 3.0; });
  auto f = jit([&](const Array& x) {
    return io_callback([&](const HostArray& v) { return helper(Array::from_host(v)).to_host(); },
                       ShapeDtype::like(x), x) +
           1.0;
  });
  const Array x = vec({0.25f, -1});
  const std::vector<float> expected = (np::tanh(x) * 3.0 + 1.0).to_vector<float>();
  const std::vector<float> got = f(x).to_vector<float>();
  for (std::size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], expected[i], 1e-5);
}

// A function whose callback calls it again, `n` levels deep: counts the levels on the way back.
std::function<Array(const Array&)> recursive_countdown() {
  auto self = std::make_shared<std::function<Array(const Array&)>>();
  *self = jit([weak = std::weak_ptr(self)](const Array& n) {
    return io_callback(
        [weak](const HostArray& left) {
          if (left.get_i64(0) == 0) return left;
          const auto countdown = weak.lock();
          const Array below = (*countdown)(Array::scalar_int(left.get_i64(0) - 1, DType::I32));
          return (below + Array::scalar_int(1, DType::I32)).to_host();
        },
        ShapeDtype::like(n), n);
  });
  return [self](const Array& n) { return (*self)(n); };
}

TEST(EffectsReentrant, CallbacksNestUpToTheLimitAndOneLevelMoreIsRefused) {
  const auto countdown = recursive_countdown();
  // n = kMaxCallbackNesting - 1 runs callbacks kMaxCallbackNesting deep.
  EXPECT_EQ(countdown(Array::scalar_int(kMaxCallbackNesting - 1, DType::I32)).item<std::int64_t>(),
            kMaxCallbackNesting - 1);
  try {
    countdown(Array::scalar_int(kMaxCallbackNesting, DType::I32)).to_host();
    FAIL() << "callbacks nested one level past kMaxCallbackNesting were not refused";
  } catch (const CallbackNestingError& e) {
    EXPECT_NE(std::string(e.what()).find("kMaxCallbackNesting = 100"), std::string::npos)
        << e.what();
  }
  // Refusing left nothing behind: the next call nests as deep as before.
  EXPECT_EQ(countdown(Array::scalar_int(3, DType::I32)).item<std::int64_t>(), 3);
}

// --- Errors -----------------------------------------------------------------------------

TEST(EffectsErrors, AThrowingTapFailsAtTheBarrierAndTheTapsAroundItStillRun) {
  std::atomic<int> before{0}, after{0};
  auto f = jit([&](const Array& x) {
    Array v = hcb::id_tap([&](const HostArray&) { ++before; }, x);
    v = hcb::id_tap([](const HostArray&) { throw std::runtime_error("sensor offline"); }, v);
    return hcb::id_tap([&](const HostArray&) { ++after; }, v);
  });
  f(vec({1}));
  try {
    hcb::barrier_wait();
    FAIL() << "the barrier raised nothing";
  } catch (const CallbackException& e) {
    EXPECT_EQ(e.original_message(), "sensor offline");
    EXPECT_NE(std::string(e.what()).find("sensor offline"), std::string::npos) << e.what();
  }
  EXPECT_EQ(before.load(), 1);
  EXPECT_EQ(after.load(), 1);
  // Not sticky: raised once, and the next dispatch runs normally.
  EXPECT_NO_THROW(hcb::barrier_wait());
  auto g = jit([&](const Array& x) { return hcb::id_tap([&](const HostArray&) { ++after; }, x); });
  g(vec({2}));
  EXPECT_NO_THROW(hcb::barrier_wait());
  EXPECT_EQ(after.load(), 2);
}

TEST(EffectsErrors, AThrowingCallFailsTheResultsThatDependOnIt) {
  auto f = jit([](const Array& x) {
    Array y = hcb::call([](const HostArray&) -> HostArray { throw std::runtime_error("no eig"); },
                        x, ShapeDtype::like(x));
    return np::exp(y) + 1.0;
  });
  const Array r = f(vec({1, 2}));
  try {
    r.to_host();
    FAIL() << "the result was computed without the callback's value";
  } catch (const CallbackException& e) {
    EXPECT_EQ(e.original_message(), "no eig");
  }
  // Raised at the result: the barrier does not raise it again.
  EXPECT_NO_THROW(hcb::barrier_wait());
  // The same function with a working callback afterwards.
  auto g = jit([](const Array& x) {
    return hcb::call([](const HostArray& v) { return v; }, x, ShapeDtype::like(x)) * 2.0;
  });
  EXPECT_EQ(g(vec({1, 2})).to_vector<float>(), (std::vector<float>{2, 4}));
}

struct BadResult {
  std::string name;
  std::function<std::vector<HostArray>(const HostArray&)> returns;
  std::string message_part;
};

TEST(EffectsErrors, AResultOfTheWrongShapeDtypeOrArityFailsWithAClearError) {
  const std::vector<BadResult> cases{
      {"shape", [](const HostArray&) { return std::vector<HostArray>{HostArray(DType::F32, {3})}; },
       "f32[3]"},
      {"dtype", [](const HostArray&) { return std::vector<HostArray>{HostArray(DType::I32, {2})}; },
       "i32[2]"},
      {"arity",
       [](const HostArray& v) {
         return std::vector<HostArray>{v, v};
       },
       "returned (f32[2], f32[2])"},
      {"none", [](const HostArray&) { return std::vector<HostArray>{}; }, "returned ()"},
  };
  for (const BadResult& c : cases) {
    auto f = jit([&](const Array& x) {
      return io_callback(c.returns, ShapeDtype{DType::F32, {2}}, x) + 1.0;
    });
    const Array r = f(vec({1, 2}));
    try {
      r.to_host();
      ADD_FAILURE() << c.name << ": no error";
    } catch (const CallbackException& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find(c.message_part), std::string::npos) << c.name << ": " << what;
      EXPECT_NE(what.find("f32[2]"), std::string::npos) << c.name << ": " << what;
    }
    EXPECT_NO_THROW(effects_barrier()) << c.name;
  }
}

TEST(EffectsErrors, AFormatThatDoesNotMatchItsArgumentsFailsAtTraceTime) {
  auto f = jit([](const Array& x) {
    debug_print("x = {} y = {}", x);
    return x;
  });
  try {
    f(vec({1}));
    FAIL() << "no error";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("2"), std::string::npos) << what;
    EXPECT_NE(what.find("effects_test.cpp"), std::string::npos) << what;
  }
  EXPECT_THROW(debug_print("{} {", vec({1})), Error);
}

TEST(EffectsErrors, AFailedCallbackInsideALoopStopsNothingElse) {
  std::atomic<int> calls{0};
  auto f = jit([&](const Array& x) {
    return lax::fori_loop(
        0, 10,
        [&](const Array& i, const Array& c) {
          hcb::id_tap(
              [&](const HostArray& v) {
                ++calls;
                if (v.to_vector<std::int32_t>()[0] == 4) throw std::runtime_error("iteration 4");
              },
              i);
          return c + 1.0;
        },
        x);
  });
  const Array y = f(vec({0}));
  EXPECT_EQ(y.to_vector<float>(), std::vector<float>{10});  // the tap is not on its path
  EXPECT_THROW(hcb::barrier_wait(), CallbackException);
  EXPECT_EQ(calls.load(), 10);
  EXPECT_NO_THROW(hcb::barrier_wait());
}

// --- The compiler's view ----------------------------------------------------------------

TEST(EffectsLowering, TheLoweredTextShowsTokensAndEffectsAndRoundTrips) {
  auto f = jit([](const Array& x) {
    debug_print("a {}", x, kOrdered);
    Array y = io_callback([](const HostArray& v) { return v; }, ShapeDtype::like(x), x,
                          CallbackOptions{.ordered = false});
    debug_print("b {}", y, kOrdered);
    return y;
  });
  const Lowered lowered = f.lower(vec({1}));
  const std::string text = lowered.as_text();
  EXPECT_NE(text.find("token[]"), std::string::npos) << text;
  EXPECT_NE(text.find("# effects:"), std::string::npos) << text;
  EXPECT_NE(text.find("debug_print"), std::string::npos) << text;
  EXPECT_NE(text.find("io_callback"), std::string::npos) << text;
  Graph parsed = parse_graph(print_graph(lowered.graph()));
  parsed.callbacks = lowered.graph().callbacks;
  EXPECT_TRUE(parsed == lowered.graph()) << text;
}

TEST(EffectsLowering, AnUnusedPureCallbackIsRemovedAndAnUnusedIoCallbackIsKept) {
  std::atomic<int> pure_calls{0}, io_calls{0};
  auto f = jit([&](const Array& x) {
    pure_callback(
        [&](const HostArray& v) {
          ++pure_calls;
          return v;
        },
        ShapeDtype::like(x), x);
    io_callback(
        [&](const HostArray& v) {
          ++io_calls;
          return v;
        },
        ShapeDtype::like(x), x);
    return x + 1.0;
  });
  const Array x = vec({1});
  const std::string text = f.lower(x).as_text();
  EXPECT_EQ(text.find("pure_callback"), std::string::npos) << text;
  EXPECT_NE(text.find("io_callback"), std::string::npos) << text;
  f(x);
  effects_barrier();
  EXPECT_EQ(pure_calls.load(), 0);
  EXPECT_EQ(io_calls.load(), 1);
}

TEST(EffectsLowering, APureCallbackWhoseResultIsUsedRunsAndMatchesTheInterpreter) {
  auto host_cube = [](const HostArray& v) {
    std::vector<float> e = v.to_vector<float>();
    for (float& a : e) a = a * a * a;
    return HostArray::from<float>(v.shape(), e);
  };
  auto f = jit([&](const Array& x) {
    return pure_callback(host_cube, ShapeDtype::like(x), np::sin(x)) * 2.0;
  });
  const Array x = vec({0.5f, 1.5f, -2});
  const Lowered lowered = f.lower(x);
  std::vector<HostArray> inputs{x.to_host()};
  for (std::size_t p = 1; p < lowered.graph().params.size(); ++p)
    inputs.emplace_back(DType::Token, Shape{});
  const HostArray expected = interpret(lowered.graph(), inputs).at(0);
  const std::vector<float> got = f(x).to_vector<float>();
  const std::vector<float> want = expected.to_vector<float>();
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-5);
}

}  // namespace
}  // namespace weft
