// Effects across two devices (two PoCL devices: CTest runs this with POCL_DEVICES="pthread
// pthread"): the f of JAX's note on sequencing side effects, on the first device printing "hello"
// and g on the second printing "world", called alternately, print in program order every time when
// ordered, even with the first device's work slower and callbacks delayed at random; unordered
// prints all arrive and the barrier waits for both devices; each device calls back with its own
// name; threads on different devices keep their own orders; a failure on one device is raised once.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "support/print_capture.h"
#include "support/test_devices.h"
#include "weft/opencl/register.h"
#include "weft/weft.h"

namespace weft {
namespace {

using testing::PrintCapture;
using Strings = std::vector<std::string>;

constexpr DebugPrintOptions kOrdered{.ordered = true};

class TwoDevicesEffects : public ::testing::Test {
 protected:
  void SetUp() override { WEFT_SKIP_WITHOUT_TWO_DEVICES(); }
  // The pair of devices the tests run on (support/test_devices.h).
  Device& d0() { return *testing::two_devices().at(0); }
  Device& d1() { return *testing::two_devices().at(1); }
};

// A random delay of up to `max_us` microseconds, different on every call.
void random_delay(int max_us) {
  thread_local std::mt19937 rng(std::random_device{}());
  std::this_thread::sleep_for(
      std::chrono::microseconds(std::uniform_int_distribution<int>(0, max_us)(rng)));
}

TEST_F(TwoDevicesEffects, HelloOnCpu0AndWorldOnCpu1PrintInProgramOrderTwoHundredTimes) {
  PrintCapture capture;
  const Array m0 = Array::from_host(HostArray(DType::F32, {192, 192}), &d0());
  // f's print waits for a matmul chain and a randomly delayed tap on d0, so left alone d1's
  // "world" would often come first.
  auto f = jit(
      [](const Array& m) {
        Array a = m;
        for (int k = 0; k < 4; ++k) a = np::tanh(np::matmul(a, m) + 0.5);
        Array s = hcb::id_tap([](const HostArray&) { random_delay(1500); }, np::sum(a));
        debug_print("hello", kOrdered);
        return s;
      },
      {.device = &d0()});
  auto g = jit(
      [](const Array& x) {
        debug_print("world", kOrdered);
        return x + 1.0;
      },
      {.device = &d1()});
  const Array x1 = Array::from_vector<float>({1}, {0}, &d1());
  constexpr int kRounds = 200;
  for (int i = 0; i < kRounds; ++i) {
    f(m0);
    g(x1);
  }
  effects_barrier();
  const Strings lines = capture.lines();
  ASSERT_EQ(lines.size(), 2u * kRounds);
  for (int i = 0; i < kRounds; ++i) {
    ASSERT_EQ(lines[2 * i], "hello") << "round " << i;
    ASSERT_EQ(lines[2 * i + 1], "world") << "round " << i;
  }
}

TEST_F(TwoDevicesEffects, OrderedCallbacksAlternateAcrossDevicesWithRandomDelays) {
  std::mutex mutex;
  std::vector<int> order;
  auto tap_on = [&](Device& d, int tag) {
    return jit(
        [&, tag](const Array& x) {
          return hcb::id_tap(
              [&, tag](const HostArray&) {
                random_delay(tag == 0 ? 800 : 100);
                std::lock_guard lock(mutex);
                order.push_back(tag);
              },
              x);
        },
        {.device = &d});
  };
  auto on0 = tap_on(d0(), 0);
  auto on1 = tap_on(d1(), 1);
  const Array a = Array::from_vector<float>({1}, {0}, &d0());
  const Array b = Array::from_vector<float>({1}, {0}, &d1());
  constexpr int kRounds = 200;
  for (int i = 0; i < kRounds; ++i) {
    on0(a);
    on1(b);
  }
  hcb::barrier_wait();
  std::lock_guard lock(mutex);
  ASSERT_EQ(order.size(), 2u * kRounds);
  for (std::size_t i = 0; i < order.size(); ++i)
    ASSERT_EQ(order[i], static_cast<int>(i % 2)) << "call " << i;
}

TEST_F(TwoDevicesEffects, UnorderedPrintsOnBothDevicesAllArriveBeforeTheBarrierReturns) {
  PrintCapture capture;
  auto f = jit(
      [](const Array& x) {
        hcb::id_tap([](const HostArray&) { random_delay(2000); }, x);
        debug_print("zero {}", x);
        return x;
      },
      {.device = &d0()});
  auto g = jit(
      [](const Array& x) {
        debug_print("one {}", x);
        return x;
      },
      {.device = &d1()});
  Strings expected;
  for (int i = 0; i < 20; ++i) {
    f(Array::from_vector<std::int32_t>({1}, {i}, &d0()));
    g(Array::from_vector<std::int32_t>({1}, {i}, &d1()));
    expected.push_back("zero [" + std::to_string(i) + "]");
    expected.push_back("one [" + std::to_string(i) + "]");
  }
  effects_barrier();
  Strings lines = capture.lines();
  std::sort(lines.begin(), lines.end());
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(lines, expected);
}

TEST_F(TwoDevicesEffects, EachDeviceCallsBackWithItsOwnNameAndGetsItsOwnResult) {
  std::mutex mutex;
  Strings seen;
  const std::string second = d1().name();
  auto host_sin = [&](const HostArray& x, const std::string& device) {
    {
      std::lock_guard lock(mutex);
      seen.push_back("Invoking host_sin with " + shape_to_string(x.shape()) + " on " + device);
    }
    std::vector<float> v = x.to_vector<float>();
    for (float& e : v) e = std::sin(e) + (device == second ? 10.0f : 0.0f);
    return HostArray::from<float>(x.shape(), v);
  };
  auto body = [&](const Array& x) {
    return hcb::call(host_sin, x, ShapeDtype::like(x), {.call_with_device = true});
  };
  auto on0 = jit(body, {.device = &d0()});
  auto on1 = jit(body, {.device = &d1()});
  const std::vector<float> ones(4, 1.0f);
  const std::vector<float> r0 = on0(Array::from_vector<float>({4}, ones, &d0())).to_vector<float>();
  const std::vector<float> r1 = on1(Array::from_vector<float>({4}, ones, &d1())).to_vector<float>();
  for (float v : r0) EXPECT_FLOAT_EQ(v, std::sin(1.0f));
  for (float v : r1) EXPECT_FLOAT_EQ(v, std::sin(1.0f) + 10.0f);
  std::lock_guard lock(mutex);
  std::sort(seen.begin(), seen.end());
  Strings expected{"Invoking host_sin with [4] on " + d0().name(),
                   "Invoking host_sin with [4] on " + d1().name()};
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(seen, expected);
}

TEST_F(TwoDevicesEffects, ThreadsOnDifferentDevicesEachKeepTheirOwnOrder) {
  PrintCapture capture;
  auto printer_on = [&](Device& d) {
    return jit(
        [](const Array& tag, const Array& k) {
          debug_print("{} {}", tag, k, kOrdered);
          return k + 1;
        },
        {.device = &d});
  };
  auto p0 = printer_on(d0());
  auto p1 = printer_on(d1());
  constexpr int kPrints = 80;
  auto run = [&](auto& printer, Device& d, int tag) {
    const Array t = Array::from_vector<std::int32_t>({}, {tag}, &d);
    Array k = Array::from_vector<std::int32_t>({}, {0}, &d);
    for (int i = 0; i < kPrints; ++i) k = printer(t, k);
  };
  std::thread a([&] { run(p0, d0(), 0); });
  std::thread b([&] { run(p1, d1(), 1); });
  a.join();
  b.join();
  effects_barrier();
  std::vector<int> next(2, 0);
  const Strings lines = capture.lines();
  ASSERT_EQ(lines.size(), 2u * kPrints);
  for (const std::string& line : lines) {
    std::istringstream in(line);
    int tag = -1, k = -1;
    in >> tag >> k;
    ASSERT_TRUE(tag == 0 || tag == 1) << line;
    EXPECT_EQ(k, next[static_cast<std::size_t>(tag)]++) << line;
  }
}

TEST_F(TwoDevicesEffects, AFailureOnOneDeviceIsRaisedOnceAndTheOtherDeviceGoesOn) {
  std::atomic<int> good{0};
  auto fails = jit(
      [](const Array& x) {
        return hcb::id_tap(
            [](const HostArray&) { throw std::runtime_error("tap on the second device"); }, x);
      },
      {.device = &d1()});
  auto works =
      jit([&](const Array& x) { return hcb::id_tap([&](const HostArray&) { ++good; }, x); },
          {.device = &d0()});
  const Array a = Array::from_vector<float>({1}, {0}, &d0());
  const Array b = Array::from_vector<float>({1}, {0}, &d1());
  works(a);
  fails(b);
  works(a);
  try {
    effects_barrier();
    FAIL() << "no error";
  } catch (const CallbackException& e) {
    EXPECT_EQ(e.original_message(), "tap on the second device");
  }
  EXPECT_EQ(good.load(), 2);
  EXPECT_NO_THROW(effects_barrier());
  works(a);
  EXPECT_NO_THROW(effects_barrier());
  EXPECT_EQ(good.load(), 3);
}

}  // namespace
}  // namespace weft
