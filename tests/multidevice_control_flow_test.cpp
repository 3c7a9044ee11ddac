// lax control flow on two devices at once (two PoCL devices: CTest runs this with
// POCL_DEVICES="pthread pthread"): the same loop functions on both devices, called from two
// threads and interleaved from one, each result against the reference interpreter; several
// while loops in flight on one device and on two.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include "support/control_flow_check.h"
#include "support/device_check.h"
#include "support/test_devices.h"

namespace weft {
namespace {

using testing::Arrays;
using testing::check_on_device;
using testing::compare_outputs;
using testing::random_array;
using Pair = std::pair<Array, Array>;

class TwoDevicesControlFlow : public ::testing::Test {
 protected:
  void SetUp() override { WEFT_SKIP_WITHOUT_TWO_DEVICES(); }
  // The pair of devices the tests run on (support/test_devices.h).
  Device& d0() { return *testing::two_devices().at(0); }
  Device& d1() { return *testing::two_devices().at(1); }
};

HostArray i32_scalar(std::int32_t v) {
  return HostArray::from<std::int32_t>({}, {v});
}

// Static loops: a cumulative sum, a reverse scan with a dot per row, a fori_loop power iteration.
Arrays static_loops(const Arrays& in) {
  const Array& xs = in[0];  // f32[24,8]
  const Array& m = in[1];   // f32[8,8]
  // Computed from an operand, so that eager calls keep it on the operands' device:
  // np::zeros and np::zeros_like make their array on the default device.
  const Array zeros = np::sum(xs, {0}) * 0.0;
  auto [c, ys] = lax::scan(
      [](const Array& c, const Array& x) {
        Array s = c + x;
        return std::make_pair(s, s);
      },
      zeros, xs);
  auto [rc, rys] = lax::scan(
      [&](const Array& c, const Array& x) {
        Array h = np::tanh(np::matmul(x, m) * 0.5 + c);
        return std::make_pair(h, np::sum(h));
      },
      zeros, xs, {.reverse = true});
  Array v = lax::fori_loop(
      0, 5,
      [&](const Array& i, const Array& v) {
        Array w = np::matmul(m, v) + i.astype(DType::F32) * 0.01;
        return w / (np::sum(np::abs(w)) + 1.0);
      },
      c);
  return {c, ys, rc, rys, v};
}

// Loops and branches that decide on the device: a Collatz step count, an Array-bounded
// fori_loop, and a cond inside a scan.
Arrays dynamic_loops(const Arrays& in) {
  const Array& n0 = in[0];  // i32[]
  const Array& xs = in[1];  // f32[24,8]
  using State = std::tuple<Array, Array>;
  auto [n, steps] = lax::while_loop(
      [](const State& s) { return std::get<0>(s) != 1; },
      [](const State& s) {
        const Array& n = std::get<0>(s);
        Array next = np::where(n % 2 == 0, np::floor_divide(n, np::full_like(n, 2)), 3 * n + 1);
        return State{next, std::get<1>(s) + 1};
      },
      State{n0, Array::scalar_int(0)});
  Array total = lax::fori_loop(
      0, steps, [&](const Array& i, const Array& acc) { return acc * 0.99 + i.astype(DType::F32); },
      Array::scalar(0.0));
  auto [c, ys] = lax::scan(
      [](const Array& c, const Array& x) {
        Array next = lax::cond(
            np::sum(x) > 0.0, [](const Array& c, const Array& x) { return c + x; },
            [](const Array& c, const Array& x) { return c * 0.5 - x; }, c, x);
        return std::make_pair(next, np::max(next));
      },
      np::sum(xs, {0}) * 0.0, xs);
  return {steps, n, total, c, ys};
}

std::vector<HostArray> static_inputs(unsigned seed) {
  std::mt19937 rng(seed);
  return {random_array(DType::F32, {24, 8}, -1, 1, rng),
          random_array(DType::F32, {8, 8}, -1, 1, rng)};
}

std::vector<HostArray> dynamic_inputs(unsigned seed) {
  std::mt19937 rng(seed);
  const std::int32_t starts[] = {27, 97, 871, 6171, 7, 1, 703, 231};
  return {i32_scalar(starts[seed % 8]), random_array(DType::F32, {24, 8}, -1, 1, rng)};
}

// Runs `fn` rounds times on `device` against the interpreter; the first difference, or empty.
std::string check_rounds(const testing::ArraysFn& fn, std::vector<HostArray> (*inputs)(unsigned),
                         Device* device, unsigned first_seed, int rounds) {
  for (int r = 0; r < rounds; ++r) {
    try {
      std::string diff = check_on_device(fn, inputs(first_seed + static_cast<unsigned>(r)),
                                         {.rtol = 1e-5, .atol = 1e-5, .device = device});
      if (!diff.empty()) return device->name() + " round " + std::to_string(r) + ": " + diff;
    } catch (const std::exception& e) {
      return device->name() + " round " + std::to_string(r) + " threw: " + e.what();
    }
  }
  return {};
}

void run_on_both_from_two_threads(const testing::ArraysFn& fn,
                                  std::vector<HostArray> (*inputs)(unsigned), Device& a,
                                  Device& b) {
  std::string diff_a, diff_b;
  std::thread ta([&] { diff_a = check_rounds(fn, inputs, &a, 100, 6); });
  std::thread tb([&] { diff_b = check_rounds(fn, inputs, &b, 200, 6); });
  ta.join();
  tb.join();
  EXPECT_EQ(diff_a, "");
  EXPECT_EQ(diff_b, "");
}

TEST_F(TwoDevicesControlFlow, StaticLoopsOnBothDevicesFromTwoThreads) {
  run_on_both_from_two_threads(static_loops, static_inputs, d0(), d1());
}

TEST_F(TwoDevicesControlFlow, WhileLoopsAndCondsOnBothDevicesFromTwoThreads) {
  run_on_both_from_two_threads(dynamic_loops, dynamic_inputs, d0(), d1());
}

// Issues every call first, alternating devices, then reads them all: each device has several
// runs of the function queued while the other runs its own.
void interleave(const testing::ArraysFn& fn, std::vector<HostArray> (*inputs)(unsigned), Device& a,
                Device& b, int calls) {
  auto on_a = jit([&fn](const Arrays& in) { return fn(in); }, {.name = "on_a", .device = &a});
  auto on_b = jit([&fn](const Arrays& in) { return fn(in); }, {.name = "on_b", .device = &b});
  std::vector<std::vector<HostArray>> feeds;
  std::vector<Arrays> results;
  std::vector<Device*> where;
  for (int k = 0; k < calls; ++k) {
    Device& dev = k % 2 == 0 ? a : b;
    feeds.push_back(inputs(300 + static_cast<unsigned>(k)));
    const Arrays args = testing::upload_all(feeds.back(), &dev);
    results.push_back(k % 2 == 0 ? on_a(args) : on_b(args));
    where.push_back(&dev);
  }
  for (int k = calls; k-- > 0;) {
    SCOPED_TRACE("call " + std::to_string(k));
    const auto kk = static_cast<std::size_t>(k);
    for (const Array& r : results[kk]) EXPECT_EQ(&r.device(), where[kk]);
    const Arrays args = testing::upload_all(feeds[kk]);
    EXPECT_EQ(compare_outputs(results[kk], testing::expected_of(on_a, args, feeds[kk]), 1e-5, 1e-5),
              "");
  }
}

TEST_F(TwoDevicesControlFlow, StaticLoopsInterleavedFromOneThread) {
  interleave(static_loops, static_inputs, d0(), d1(), 8);
}

TEST_F(TwoDevicesControlFlow, WhileLoopsInterleavedFromOneThread) {
  interleave(dynamic_loops, dynamic_inputs, d0(), d1(), 8);
}

// Outside jit each control-flow call compiles its one op for the device of its operands.
void check_eager_on_each(Device& a, Device& b, Arrays (*fn)(const Arrays&),
                         std::vector<HostArray> (*inputs)(unsigned)) {
  for (Device* dev : {&a, &b}) {
    SCOPED_TRACE(dev->name());
    const std::vector<HostArray> feed = inputs(7);
    const Arrays args = testing::upload_all(feed, dev);
    const Arrays eager = fn(args);
    for (const Array& r : eager) EXPECT_EQ(&r.device(), dev);
    auto f = jit(fn);
    EXPECT_EQ(compare_outputs(eager, testing::expected_of(f, args, feed), 1e-5, 1e-5), "");
  }
}

TEST_F(TwoDevicesControlFlow, EagerStaticLoopsRunWhereTheirOperandsLive) {
  check_eager_on_each(d0(), d1(), static_loops, static_inputs);
}

TEST_F(TwoDevicesControlFlow, EagerWhileLoopsAndCondsRunWhereTheirOperandsLive) {
  check_eager_on_each(d0(), d1(), dynamic_loops, dynamic_inputs);
}

// An LCG per element, `limit` times: exact everywhere, so checked against the host directly.
auto lcg_loop() {
  return jit([](const Array& seed, const Array& limit) {
    return lax::while_loop([&](const Pair& s) { return s.first < limit; },
                           [](const Pair& s) {
                             return Pair{s.first + 1,
                                         s.second * Array::scalar_int(1664525, DType::U32) +
                                             Array::scalar_int(1013904223, DType::U32)};
                           },
                           Pair{Array::scalar_int(0), seed});
  });
}

std::vector<std::uint32_t> lcg_on_host(const HostArray& seed, std::int32_t limit) {
  std::vector<std::uint32_t> out;
  for (std::int64_t j = 0; j < seed.size(); ++j) {
    auto v = static_cast<std::uint32_t>(seed.get_i64(j));
    for (std::int32_t it = 0; it < limit; ++it) v = v * 1664525u + 1013904223u;
    out.push_back(v);
  }
  return out;
}

void several_in_flight(const std::vector<Device*>& targets) {
  auto f = lcg_loop();
  std::mt19937 rng(5);
  const std::int32_t limits[] = {12000, 7, 0, 9000, 15001, 1, 4000, 2};
  std::vector<HostArray> seeds;
  std::vector<Pair> results;
  std::vector<Device*> where;
  for (std::size_t k = 0; k < std::size(limits); ++k) {
    Device* dev = targets[k % targets.size()];
    seeds.push_back(random_array(DType::U32, {96}, 0, 4e9, rng));
    results.push_back(
        f(Array::from_host(seeds.back(), dev), Array::from_host(i32_scalar(limits[k]), dev)));
    where.push_back(dev);
  }
  // Read in reverse: the last issued first.
  for (std::size_t k = std::size(limits); k-- > 0;) {
    SCOPED_TRACE("limit " + std::to_string(limits[k]));
    EXPECT_EQ(&results[k].second.device(), where[k]);
    EXPECT_EQ(results[k].first.item<int>(), limits[k]);
    EXPECT_EQ(results[k].second.to_vector<std::uint32_t>(), lcg_on_host(seeds[k], limits[k]));
  }
  EXPECT_EQ(f.compile_count(), static_cast<int>(targets.size()));
}

TEST_F(TwoDevicesControlFlow, SeveralWhileLoopsInFlightOnOneDevice) {
  several_in_flight({&d1()});
}

TEST_F(TwoDevicesControlFlow, SeveralWhileLoopsInFlightOnTwoDevices) {
  several_in_flight({&d0(), &d1()});
}

TEST_F(TwoDevicesControlFlow, WhileLoopsInFlightOnTwoDevicesFromTwoThreads) {
  auto f = lcg_loop();
  std::string errors[2];
  auto work = [&](int t) {
    Device& dev = t == 0 ? d0() : d1();
    std::mt19937 rng(static_cast<unsigned>(40 + t));
    std::vector<HostArray> seeds;
    std::vector<Pair> results;
    const std::int32_t limits[] = {8000, 3, 11000, 0, 5000};
    try {
      for (std::int32_t limit : limits) {
        seeds.push_back(random_array(DType::U32, {33}, 0, 4e9, rng));
        results.push_back(
            f(Array::from_host(seeds.back(), &dev), Array::from_host(i32_scalar(limit), &dev)));
      }
      for (std::size_t k = 0; k < std::size(limits); ++k) {
        if (results[k].first.item<int>() != limits[k] ||
            results[k].second.to_vector<std::uint32_t>() != lcg_on_host(seeds[k], limits[k]))
          errors[t] += dev.name() + ": wrong result for limit " + std::to_string(limits[k]) + "\n";
      }
    } catch (const std::exception& e) {
      errors[t] += dev.name() + " threw: " + e.what();
    }
  };
  std::thread t0(work, 0), t1(work, 1);
  t0.join();
  t1.join();
  EXPECT_EQ(errors[0], "");
  EXPECT_EQ(errors[1], "");
}

}  // namespace
}  // namespace weft
