// lax control flow (fori_loop, scan, while_loop, cond, switch_) run on the OpenCL device, under
// jit and eagerly, against the reference interpreter evaluating the same traced graph (and, where
// it is simple, against a computation written out here). Static loops (scan, fori_loop with C++
// bounds) run as device loop steps; while_loop, fori_loop with Array bounds, cond and switch_
// decide on the device.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <random>
#include <tuple>
#include <utility>
#include <vector>

#include "support/control_flow_check.h"
#include "support/device_check.h"
#include "weft/opencl/device.h"

namespace weft {
namespace {

using testing::Arrays;
using testing::check_on_device;
using testing::random_array;
using Pair = std::pair<Array, Array>;

class ControlFlowDevice : public ::testing::Test {
 protected:
  std::mt19937 rng{20240611};
  HostArray rand(DType t, const Shape& s, double lo = -2, double hi = 2) {
    return random_array(t, s, lo, hi, rng);
  }
};

HostArray i32_scalar(std::int32_t v) {
  return HostArray::from<std::int32_t>({}, {v});
}

std::vector<float> floats(const Array& a) {
  return a.to_vector<float>();
}

// ---- static loops: these run on the device today ---------------------------------------------

TEST_F(ControlFlowDevice, ForiLoopStaticBoundsSums) {
  auto fn = [](const Arrays& in) {
    const Array& x = in[0];  // f32[37]
    const Array& k = in[1];  // i32[5]
    auto plus_i_x = [&](const Array& i, const Array& acc) { return acc + i * x; };
    auto plus_i_k = [&](const Array& i, const Array& acc) { return acc + i * k; };
    return Arrays{
        lax::fori_loop(2, 7, plus_i_x, np::zeros_like(x)),
        lax::fori_loop(-3, 40, plus_i_k, k),  // negative lower bound
        lax::fori_loop(0, 1, plus_i_k, k),    // one trip, i = 0
        lax::fori_loop(
            0, 10, [](const Array& i, const Array& s) { return s + i; }, Array::scalar_int(0))};
  };
  const HostArray x = rand(DType::F32, {37}), k = rand(DType::I32, {5}, -9, 9);
  EXPECT_EQ(check_on_device(fn, {x, k}), "");
  // Independently: 2+3+4+5+6 = 20, and k plus (-3-2-1+0+...+39) k = 775 k.
  const Arrays out = fn(testing::upload_all({x, k}));
  const auto sum_x = floats(out[0]);
  for (std::size_t j = 0; j < sum_x.size(); ++j)
    EXPECT_NEAR(sum_x[j], 20.0 * x.get_f64(static_cast<std::int64_t>(j)), 1e-4);
  const auto sum_k = out[1].to_vector<std::int32_t>();
  for (std::size_t j = 0; j < sum_k.size(); ++j)
    EXPECT_EQ(sum_k[j], 775 * k.get_i64(static_cast<std::int64_t>(j)));
  EXPECT_EQ(out[3].item<int>(), 45);
}

TEST_F(ControlFlowDevice, ZeroTripStaticForiReturnsInit) {
  auto fn = [](const Arrays& in) {
    auto plus_one = [](const Array&, const Array& v) { return v + 1.0; };
    return Arrays{lax::fori_loop(3, 3, plus_one, in[0]), lax::fori_loop(5, 2, plus_one, in[0]),
                  lax::fori_loop(0, 0, plus_one, in[0] * 2.0)};
  };
  const HostArray x = rand(DType::F32, {4, 3});
  EXPECT_EQ(check_on_device(fn, {x}), "");
  const Arrays out = fn(testing::upload_all({x}));
  EXPECT_EQ(floats(out[0]), x.to_vector<float>());
  EXPECT_EQ(floats(out[1]), x.to_vector<float>());
}

auto cumsum_step = [](const Array& c, const Array& x) {
  Array s = c + x;
  return std::make_pair(s, s);
};

TEST_F(ControlFlowDevice, ScanCumulativeSumAndReverseScan) {
  auto fn = [](const Arrays& in) {
    auto [c, ys] = lax::scan(cumsum_step, Array::scalar(0.0), in[0]);  // f32[64]
    auto [rc, rys] = lax::scan(
        [](const Array& c, const Array& x) {
          Array s = c + x;
          return std::make_pair(s, s * 10.0);
        },
        Array::scalar(0.0), in[0], {.reverse = true});
    // Rows of a matrix, an integer carry.
    auto [mc, mys] = lax::scan(cumsum_step, np::zeros({7}, DType::I32), in[1]);  // i32[20,7]
    auto [mrc, mrys] = lax::scan(cumsum_step, np::zeros({7}, DType::I32), in[1], {.reverse = true});
    return Arrays{c, ys, rc, rys, mc, mys, mrc, mrys};
  };
  const HostArray xs = rand(DType::F32, {64}), m = rand(DType::I32, {20, 7}, -50, 50);
  EXPECT_EQ(check_on_device(fn, {xs, m}), "");

  // Independently: prefix sums and suffix sums.
  const Arrays out = fn(testing::upload_all({xs, m}));
  const auto ys = floats(out[1]), rys = floats(out[3]);
  double prefix = 0;
  for (std::int64_t j = 0; j < 64; ++j) {
    prefix += xs.get_f64(j);
    EXPECT_NEAR(ys[static_cast<std::size_t>(j)], prefix, 1e-4) << j;
  }
  double suffix = 0;
  for (std::int64_t j = 63; j >= 0; --j) {
    suffix += xs.get_f64(j);
    EXPECT_NEAR(rys[static_cast<std::size_t>(j)], 10 * suffix, 1e-3) << j;
  }
  const auto mys = out[5].to_vector<std::int32_t>(), mrys = out[7].to_vector<std::int32_t>();
  for (std::int64_t col = 0; col < 7; ++col) {
    std::int64_t down = 0, up = 0;
    for (std::int64_t r = 0; r < 20; ++r) {
      down += m.get_i64(r * 7 + col);
      up += m.get_i64((19 - r) * 7 + col);
      EXPECT_EQ(mys[static_cast<std::size_t>(r * 7 + col)], down);
      EXPECT_EQ(mrys[static_cast<std::size_t>((19 - r) * 7 + col)], up);
    }
  }
}

TEST_F(ControlFlowDevice, ScanWithSeveralXsAndSeveralStackedYs) {
  using Xs = std::tuple<Array, Array, Array>;  // f32[n,3], i32[n], bool[n]
  auto fn = [](const Arrays& in) {
    auto [carry, ys] = lax::scan(
        [](const Pair& c, const Xs& x) {
          const auto& [a, b, m] = x;
          Array s = np::where(m, c.first + a, c.first - a * 0.5);  // f32[3]
          Array t = c.second + b;                                  // i32[]
          return std::make_pair(Pair{s, t}, std::make_tuple(s * 2.0, t, s > 0.0, np::sum(a)));
        },
        Pair{np::zeros({3}), Array::scalar_int(0)}, Xs{in[0], in[1], in[2]});
    auto& [y0, y1, y2, y3] = ys;
    return Arrays{carry.first, carry.second, y0, y1, y2, y3};
  };
  const std::int64_t n = 23;
  EXPECT_EQ(check_on_device(fn, {rand(DType::F32, {n, 3}), rand(DType::I32, {n}, -100, 100),
                                 rand(DType::Bool, {n})}),
            "");
}

TEST_F(ControlFlowDevice, ScanWithoutXsUsesLength) {
  auto fn = [](const Arrays& in) {
    auto [c, ys] =
        lax::scan([](const Array& c, const std::tuple<>&) { return std::make_pair(c * 2 + 1, c); },
                  in[0], lax::no_xs, {.length = 5});
    // y may be an empty tuple too.
    auto [c2, none] = lax::scan(
        [](const Array& c, const std::tuple<>&) {
          return std::make_pair(np::tanh(c) + 0.5, std::tuple<>{});
        },
        in[1], lax::no_xs, {.length = 7});
    static_assert(std::is_same_v<decltype(none), std::tuple<>>);
    return Arrays{c, ys, c2};
  };
  const HostArray k = rand(DType::I32, {4}, -9, 9);
  EXPECT_EQ(check_on_device(fn, {k, rand(DType::F32, {2, 3})}), "");
  const Arrays out = fn(testing::upload_all({k, rand(DType::F32, {2, 3})}));
  ASSERT_EQ(out[1].shape(), (Shape{5, 4}));
  const auto ys = out[1].to_vector<std::int32_t>();
  for (std::int64_t j = 0; j < 4; ++j) {
    std::int64_t c = k.get_i64(j);
    for (std::int64_t r = 0; r < 5; ++r) {
      EXPECT_EQ(ys[static_cast<std::size_t>(r * 4 + j)], c);
      c = c * 2 + 1;
    }
    EXPECT_EQ(out[0].to_vector<std::int32_t>()[static_cast<std::size_t>(j)], c);
  }
}

TEST_F(ControlFlowDevice, ScanOfLengthZero) {
  auto fn = [](const Arrays& in) {
    // xs with an empty leading axis: the carry comes back unchanged, ys are empty.
    auto [c, ys] = lax::scan(
        [](const Array& c, const Array& x) {
          Array s = c + x;
          return std::make_pair(s, std::make_tuple(s, np::sum(x).astype(DType::I32)));
        },
        in[1], in[0]);
    auto [c2, ys2] = lax::scan(
        [](const Array& c, const std::tuple<>&) { return std::make_pair(c + 1.0, c * 3.0); }, in[1],
        lax::no_xs, {.length = 0});
    return Arrays{c, std::get<0>(ys), std::get<1>(ys), c2, ys2};
  };
  const HostArray row = rand(DType::F32, {4});
  EXPECT_EQ(check_on_device(fn, {HostArray(DType::F32, {0, 4}), row}), "");
  const Arrays out = fn(testing::upload_all({HostArray(DType::F32, {0, 4}), row}));
  EXPECT_EQ(out[1].shape(), (Shape{0, 4}));
  EXPECT_EQ(out[2].shape(), (Shape{0}));
  EXPECT_EQ(out[4].shape(), (Shape{0, 4}));
  EXPECT_EQ(floats(out[0]), row.to_vector<float>());
  EXPECT_EQ(floats(out[3]), row.to_vector<float>());
}

using Mixed = std::tuple<Array, Array, Array>;  // f32[6], i32[], bool[]

Mixed mixed_step(const Array& i, const Mixed& s) {
  const auto& [v, n, flag] = s;
  Array v2 = np::where(flag, v * 0.75 + 1.0, v - 0.5);
  return Mixed{v2, n + i * 2 - 1, np::logical_xor(flag, np::sum(v2) > 3.0)};
}

TEST_F(ControlFlowDevice, TupleCarriesOfMixedDtypes) {
  auto fn = [](const Arrays& in) {
    const Mixed init{in[0], in[1], in[2]};
    auto [v, n, flag] = lax::fori_loop(0, 9, mixed_step, init);
    auto [carry, ys] = lax::scan(
        [](const Mixed& s, const Array& x) {
          Mixed next = mixed_step(x, s);
          return std::make_pair(next, std::make_tuple(std::get<2>(next), std::get<1>(next)));
        },
        init, in[3]);
    return Arrays{v,
                  n,
                  flag,
                  std::get<0>(carry),
                  std::get<1>(carry),
                  std::get<2>(carry),
                  std::get<0>(ys),
                  std::get<1>(ys)};
  };
  for (int trial = 0; trial < 3; ++trial) {
    SCOPED_TRACE(trial);
    EXPECT_EQ(check_on_device(fn, {rand(DType::F32, {6}), rand(DType::I32, {}, -5, 5),
                                   rand(DType::Bool, {}), rand(DType::I32, {11}, -3, 3)}),
              "");
  }
}

TEST_F(ControlFlowDevice, BodyWithReductionAndDot) {
  auto fn = [](const Arrays& in) {
    const Array& m = in[0];  // f32[16,16]
    // Power iteration: a dot and a reduction per step.
    Array v = lax::fori_loop(
        0, 6,
        [&](const Array&, const Array& v) {
          Array w = np::matmul(m, v);
          return w / np::sum(np::abs(w));
        },
        in[1]);
    // Rows through a matrix, reduced along an axis, stacked.
    auto [acc, ys] = lax::scan(
        [&](const Array& c, const Array& row) {
          Array h = np::tanh(np::matmul(row, m) + c);
          return std::make_pair(h, np::sum(h * h, {0}, true));
        },
        np::zeros({16}), in[2]);
    return Arrays{v, acc, ys};
  };
  EXPECT_EQ(check_on_device(fn,
                            {rand(DType::F32, {16, 16}, -1, 1), rand(DType::F32, {16}),
                             rand(DType::F32, {9, 16})},
                            {.rtol = 1e-5, .atol = 1e-5}),
            "");
}

TEST_F(ControlFlowDevice, ClosuresOverConcreteArraysAndOuterTracers) {
  const HostArray w_host = rand(DType::F32, {5}), bias_host = rand(DType::F32, {5});
  const Array w = Array::from_host(w_host), bias = Array::from_host(bias_host);
  auto fn = [&](const Arrays& in) {
    const Array& x = in[0];   // f32[5]
    const Array& xs = in[1];  // f32[4,5]
    Array y = np::tanh(x);    // a value of the jitted function
    Array r = lax::fori_loop(
        0, 3,
        [&](const Array& i, const Array& acc) {
          Array scale = acc * 0.5 + i;  // a value of level 1
          auto [c, ys] = lax::scan(
              [&](const Array& c, const Array& row) {
                // Level 3 reads level 1 (scale), level 2 (c), the jitted function (y, x) and
                // the concrete w.
                Array inner = lax::fori_loop(
                    0, 2,
                    [&](const Array& j, const Array& d) {
                      return d * 0.5 + (scale * c) * 0.01 + w * j + y - x * 0.1;
                    },
                    c);
                return std::make_pair(inner + row * bias, np::sum(inner));
              },
              acc, xs);
          return c + np::sum(ys) * 0.001;
        },
        x);
    return Arrays{r};
  };
  auto f = jit([&](const Arrays& in) { return fn(in); });
  const HostArray x = rand(DType::F32, {5}), xs = rand(DType::F32, {4, 5});
  EXPECT_EQ(f.lower(testing::upload_all({x, xs})).captured().size(), 2u) << "w and bias";
  EXPECT_EQ(check_on_device(fn, {x, xs}, {.rtol = 1e-5, .atol = 1e-5}), "");
}

TEST_F(ControlFlowDevice, StaticLoopsNestedThreeDeep) {
  auto fn = [](const Arrays& in) {
    const Array& x = in[0];  // f32[6,3]
    auto [total, rows] = lax::scan(
        [&](const Array& acc, const Array& xrow) {
          Array mid = lax::fori_loop(
              1, 4,
              [&](const Array& i, const Array& m) {
                auto [inner, ys] = lax::scan(
                    [&](const Array& c, const Array& xr) {
                      Array next = c * 0.9 + xr * i + xrow;
                      return std::make_pair(next, np::max(next));
                    },
                    m, x, {.reverse = true});
                return inner + np::sum(ys) * 0.01;
              },
              acc);
          return std::make_pair(mid, np::mean(mid));
        },
        np::zeros({3}), x);
    return Arrays{total, rows};
  };
  EXPECT_EQ(check_on_device(fn, {rand(DType::F32, {6, 3})}, {.rtol = 1e-5, .atol = 1e-5}), "");
}

TEST_F(ControlFlowDevice, BodyReadsTheIterationIndex) {
  auto fn = [](const Arrays& in) {
    const Array& x = in[0];  // f32[13]
    // out[i] = x[i] * i, written one element per iteration at the index.
    Array scattered = lax::fori_loop(
        0, 13,
        [&](const Array& i, const Array& out) {
          Array xi = lax::dynamic_slice(x, {i}, {1});
          return lax::dynamic_update_slice(out, xi * i.astype(DType::F32), {i});
        },
        np::zeros_like(x));
    // A lower bound other than zero: 3 + 4 + ... + 8 = 33, and the index squared.
    Pair sums = lax::fori_loop(
        3, 9,
        [](const Array& i, const Pair& s) {
          return Pair{s.first + i, s.second + i * i};
        },
        Pair{Array::scalar_int(0), Array::scalar_int(0)});
    // A reverse scan whose body reads the row it is at through the xs.
    auto [last, order] =
        lax::scan([](const Array& c, const Array& r) { return std::make_pair(c * 10 + r, c); },
                  Array::scalar_int(0), np::arange(5), {.reverse = true});
    return Arrays{scattered, sums.first, sums.second, last, order};
  };
  const HostArray x = rand(DType::F32, {13});
  EXPECT_EQ(check_on_device(fn, {x}), "");
  const Arrays out = fn(testing::upload_all({x}));
  const auto scattered = floats(out[0]);
  for (std::int64_t i = 0; i < 13; ++i)
    EXPECT_FLOAT_EQ(scattered[static_cast<std::size_t>(i)],
                    static_cast<float>(x.get_f64(i)) * static_cast<float>(i));
  EXPECT_EQ(out[1].item<int>(), 33);
  EXPECT_EQ(out[2].item<int>(), 9 + 16 + 25 + 36 + 49 + 64);
  EXPECT_EQ(out[3].item<int>(), 43210);
  EXPECT_EQ(out[4].to_vector<std::int32_t>(), (std::vector<std::int32_t>{4321, 432, 43, 4, 0}));
}

// x = x * a + b, `iterations` times, on f32[n].
auto affine_loop(int iterations) {
  return jit([iterations](const Array& x, const Array& a, const Array& b) {
    return lax::fori_loop(
        0, iterations, [&](const Array&, const Array& v) { return v * a + b; }, x);
  });
}

TEST_F(ControlFlowDevice, LongStaticLoopCreatesNoMoreMemoryThanAShortOne) {
  auto* device = dynamic_cast<opencl::OpenCLDevice*>(&default_device());
  ASSERT_NE(device, nullptr);
  const std::int64_t n = 1024;
  // |a| < 1 keeps x bounded: it converges to b / (1 - a).
  const HostArray x = rand(DType::F32, {n}), a = rand(DType::F32, {n}, 0.2, 0.9),
                  b = rand(DType::F32, {n}, -1, 1);
  const Arrays args = testing::upload_all({x, a, b});
  // By default this elementwise loop is one kernel and needs no carry buffers at all; the plan
  // with one launch per iteration (every other static loop's) is the one whose carries must
  // come from the pool. Both compile first, so build-time allocations stay out of the deltas.
  const Graph short_graph = affine_loop(1000).lower(args[0], args[1], args[2]).graph();
  auto short_loop = testing::launch_per_iteration_executable(*device, short_graph);
  auto long_loop = testing::launch_per_iteration_executable(
      *device, affine_loop(100000).lower(args[0], args[1], args[2]).graph());
  ASSERT_EQ(short_loop->plan().steps.size(), 1u);
  ASSERT_EQ(short_loop->plan().steps[0].kind, opencl::StepPlan::Kind::Loop);
  std::vector<std::shared_ptr<Buffer>> inputs;
  for (const HostArray* h : {&x, &a, &b}) inputs.push_back(device->upload(h->raw(), h->nbytes()));
  auto read = [&](const std::shared_ptr<Buffer>& buffer) {
    HostArray got(DType::F32, {n});
    device->download(*buffer, got.raw(), got.nbytes());
    return got;
  };
  read(inputs[2]);  // the uploads have finished

  const auto before_short = device->memory_stats();
  std::vector<std::shared_ptr<Buffer>> short_result = short_loop->run(inputs);
  const HostArray short_values = read(short_result.at(0));
  const auto after_short = device->memory_stats();
  EXPECT_EQ(
      testing::compare_arrays(
          short_values, interpret(short_graph, std::vector<HostArray>{x, a, b}).at(0), 1e-5, 1e-6),
      "");
  short_result.clear();  // its buffer goes back to the pool

  const auto start = std::chrono::steady_clock::now();
  const HostArray long_values = read(long_loop->run(inputs).at(0));
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const auto after_long = device->memory_stats();

  const std::size_t short_delta = after_short.created_bytes - before_short.created_bytes;
  const std::size_t long_delta = after_long.created_bytes - after_short.created_bytes;
  std::printf(
      "[ memory   ] 1,000 iterations created %zu bytes in %zu buffers; 100,000 created %zu "
      "bytes in %zu buffers in %.2f s; pooled now %zu bytes\n",
      short_delta, after_short.created_buffers - before_short.created_buffers, long_delta,
      after_long.created_buffers - after_short.created_buffers, seconds, after_long.pooled_bytes);
  // The runtime recycles each iteration's carry through the buffer pool, so a loop's memory is
  // bounded by a few carries whatever its trip count. The short run has already warmed the pool
  // with buffers of this size, so the long run, a hundred times longer, must get by with no
  // more new memory than the short run created (typically none at all).
  EXPECT_LE(long_delta, short_delta);
  // And the short run itself created a few carries' worth, not one per iteration.
  EXPECT_LT(short_delta, 64 * n * sizeof(float));

  // Independently: the same recurrence on the host (the device may contract x * a + b into
  // an fma, so compare with a tolerance; after 100,000 steps x sits at b / (1 - a)). The
  // default plan (one kernel) must land there too.
  const std::vector<float> one_kernel = floats(affine_loop(100000)(args[0], args[1], args[2]));
  for (std::int64_t j = 0; j < n; ++j) {
    const auto aj = static_cast<float>(a.get_f64(j)), bj = static_cast<float>(b.get_f64(j));
    const float fixed = bj / (1.0f - aj);
    EXPECT_NEAR(static_cast<float>(long_values.get_f64(j)), fixed, 1e-5 + 1e-5 * std::fabs(fixed))
        << j;
    EXPECT_NEAR(one_kernel[static_cast<std::size_t>(j)], fixed, 1e-5 + 1e-5 * std::fabs(fixed))
        << j;
  }
}

// The number of launches in a plan, loops' bodies included, and whether any Loop step is left.
void count_steps(const opencl::BlockPlan& block, int& launches, int& loops) {
  for (const opencl::StepPlan& step : block.steps) {
    launches += step.kind == opencl::StepPlan::Kind::Launch;
    loops += step.kind == opencl::StepPlan::Kind::Loop;
    for (const opencl::BlockPlan& region : step.regions) count_steps(region, launches, loops);
  }
}

TEST_F(ControlFlowDevice, ElementwiseStaticLoopsRunAsOneKernel) {
  // Carries of one shape, bodies of elementwise ops on it and on scalars: one kernel in which
  // every work-item iterates its element (check_on_device also runs the launch-per-iteration
  // plan of each). Sizes: below one work-group, a bulk and a tail, scalars, empty.
  auto fn = [](const Arrays& in) {
    using Triple = std::tuple<Array, Array, Array>;
    const Array& x = in[0];
    const Array& k = in[1];  // i32 of x's shape
    const Array& s = in[2];  // f32[] captured scalar
    auto [v, n, flag] = lax::fori_loop(
        3, 40,
        [&](const Array& i, const Triple& c) {
          const auto& [v, n, flag] = c;
          Array v2 = np::where(flag, v * 0.5 + s, np::sin(v) - i.astype(DType::F32) * 0.01);
          const Shape& shape = n.shape();
          Array position = shape.empty()
                               ? np::zeros_like(n)
                               : lax::iota(DType::I32, shape, static_cast<int>(shape.size()) - 1);
          Array n2 = n * 3 + i - position;
          return Triple{v2, n2 % 1000, np::logical_xor(flag, v2 > 0.25)};
        },
        Triple{x, k, x > 0.0});
    // Reverse, without xs, reading the iteration: the carry remembers the order it saw.
    auto [order, none] =
        lax::scan([](const Array& c,
                     const std::tuple<>&) { return std::make_pair(c * 0.5 + 1.0, std::tuple<>{}); },
                  x, lax::no_xs, {.length = 17, .reverse = true});
    Array tagged = lax::fori_loop(
        0, 6, [](const Array& i, const Array& c) { return c * 10 + i; }, np::zeros_like(k));
    Array untouched = lax::fori_loop(
        0, 0, [](const Array&, const Array& c) { return c + 1.0; }, x);
    return Arrays{v, n, flag, order, tagged, untouched};
  };
  for (const Shape& shape : {Shape{5}, Shape{3, 100}, Shape{}, Shape{0}}) {
    SCOPED_TRACE(shape_to_string(shape));
    EXPECT_EQ(check_on_device(fn, {rand(DType::F32, shape), rand(DType::I32, shape, -9, 9),
                                   rand(DType::F32, {})}),
              "");
  }

  // The plan: one kernel per loop (a bulk and a tail launch at most), no loop step.
  auto* device = dynamic_cast<opencl::OpenCLDevice*>(&default_device());
  ASSERT_NE(device, nullptr);
  const Arrays args = testing::upload_all(
      {rand(DType::F32, {1000}), rand(DType::F32, {1000}), rand(DType::F32, {1000})});
  auto exe = std::dynamic_pointer_cast<opencl::OpenCLExecutable>(
      affine_loop(1000).lower(args[0], args[1], args[2]).compile());
  ASSERT_NE(exe, nullptr);
  int launches = 0, loops = 0;
  count_steps(exe->plan(), launches, loops);
  EXPECT_EQ(loops, 0);
  EXPECT_EQ(launches, 2);  // 1000 = 768 without a bounds check + 232 with one
  ASSERT_EQ(exe->info().kernels.size(), 1u);
  EXPECT_EQ(exe->info().kernels[0].fused_ops, (std::vector<std::string>{"scan", "mul", "add"}));

  // A body with a reduction is not elementwise: it keeps its loop step.
  auto reducing = jit([](const Array& x) {
    return lax::fori_loop(
        0, 4, [](const Array&, const Array& v) { return v - np::sum(v) * 0.01; }, x);
  });
  auto reducing_exe =
      std::dynamic_pointer_cast<opencl::OpenCLExecutable>(reducing.lower(args[0]).compile());
  ASSERT_NE(reducing_exe, nullptr);
  launches = loops = 0;
  count_steps(reducing_exe->plan(), launches, loops);
  EXPECT_EQ(loops, 1);
}

// ---- loops and branches that decide on the device ---------------------------------------------

TEST_F(ControlFlowDevice, ForiLoopWithArrayBoundsIsAWhileLoop) {
  auto fn = [](const Arrays& in) {
    const Array& lo = in[0];  // i32[]
    const Array& hi = in[1];  // i32[]
    const Array& x = in[2];   // f32[8]
    return Arrays{
        lax::fori_loop(
            lo, hi, [](const Array& i, const Array& acc) { return acc + i * i; },
            Array::scalar_int(0)),
        lax::fori_loop(
            0, hi, [&](const Array& i, const Array& acc) { return acc + i * x; },
            np::zeros_like(x)),
        lax::fori_loop(
            lo, 12, [](const Array& i, const Array& acc) { return acc * 2 + i; },
            Array::scalar_int(1)),
        // i64 bounds: i is an i64.
        lax::fori_loop(
            lo.astype(DType::I64), hi.astype(DType::I64),
            [](const Array& i, const Array& acc) { return acc + i * 1000000007LL; },
            Array::scalar_int(0, DType::I64)),
    };
  };
  const HostArray x = rand(DType::F32, {8});
  for (auto [lo, hi] : std::vector<std::pair<int, int>>{{0, 5}, {-4, 9}, {3, 3}, {7, 2}}) {
    SCOPED_TRACE(std::to_string(lo) + ".." + std::to_string(hi));
    EXPECT_EQ(check_on_device(fn, {i32_scalar(lo), i32_scalar(hi), x}), "");
    const Arrays out = fn(testing::upload_all({i32_scalar(lo), i32_scalar(hi), x}));
    std::int64_t squares = 0;
    for (std::int64_t i = lo; i < hi; ++i) squares += i * i;
    EXPECT_EQ(out[0].item<std::int64_t>(), squares);
  }
}

TEST_F(ControlFlowDevice, ZeroTripWhileAndForiLoopsReturnInit) {
  auto fn = [](const Arrays& in) {
    auto r = lax::while_loop([](const Pair& s) { return s.first < 0; },
                             [](const Pair& s) {
                               return Pair{s.first + 1, s.second * 2.0};
                             },
                             Pair{Array::scalar_int(5), in[0]});
    Array fori = lax::fori_loop(
        in[1], in[2], [](const Array&, const Array& v) { return v + 1.0; }, in[0]);
    // A condition that is false on entry only for these data.
    Array w = lax::while_loop([](const Array& v) { return np::sum(v) > 1e9; },
                              [](const Array& v) { return v * 0.5; }, in[0]);
    return Arrays{r.first, r.second, fori, w};
  };
  const HostArray x = rand(DType::F32, {3, 4});
  EXPECT_EQ(check_on_device(fn, {x, i32_scalar(6), i32_scalar(6)}), "");
  EXPECT_EQ(check_on_device(fn, {x, i32_scalar(6), i32_scalar(-6)}), "");
  const Arrays out = fn(testing::upload_all({x, i32_scalar(6), i32_scalar(6)}));
  EXPECT_EQ(out[0].item<int>(), 5);
  for (int k : {1, 2, 3}) EXPECT_EQ(floats(out[static_cast<std::size_t>(k)]), x.to_vector<float>());
}

std::int32_t collatz_steps(std::int32_t n) {
  std::int32_t steps = 0;
  for (; n != 1; ++steps) n = n % 2 == 0 ? n / 2 : 3 * n + 1;
  return steps;
}

Arrays collatz(const Arrays& in) {
  using State = std::tuple<Array, Array>;
  auto [n, steps] = lax::while_loop(
      [](const State& s) { return std::get<0>(s) != 1; },
      [](const State& s) {
        const Array& n = std::get<0>(s);
        Array next = np::where(n % 2 == 0, np::floor_divide(n, np::full_like(n, 2)), 3 * n + 1);
        return State{next, std::get<1>(s) + 1};
      },
      State{in[0], Array::scalar_int(0)});
  return {steps, n};
}

TEST_F(ControlFlowDevice, CollatzStepCountIsDecidedOnTheDevice) {
  for (std::int32_t n : {1, 2, 3, 6, 7, 27, 97, 871}) {
    SCOPED_TRACE(n);
    EXPECT_EQ(check_on_device(collatz, {i32_scalar(n)}), "");
  }
  // One executable, many trip counts, independently counted.
  auto f = jit(collatz);
  for (std::int32_t n : {1, 27, 97, 871, 6171}) {
    const Arrays out = f(Arrays{Array::from_host(i32_scalar(n))});
    EXPECT_EQ(out[0].item<int>(), collatz_steps(n)) << n;
    EXPECT_EQ(out[1].item<int>(), 1);
  }
  EXPECT_EQ(f.compile_count(), 1);
}

TEST_F(ControlFlowDevice, WhileLoopWithMixedDtypeTupleCarry) {
  auto fn = [](const Arrays& in) {
    using State = std::tuple<Array, Array, Array>;
    auto [v, count, done] = lax::while_loop(
        [](const State& s) {
          return np::logical_and(std::get<1>(s) < 10, np::logical_not(std::get<2>(s)));
        },
        [](const State& s) {
          Array v = std::get<0>(s) * 1.5 + 1.0;
          return State{v, std::get<1>(s) + 1, np::sum(v) > 60.0};
        },
        State{in[0], Array::scalar_int(0), Array::scalar_int(0, DType::Bool)});
    return Arrays{v, count, done};
  };
  for (double hi : {0.0, 2.0, 10.0}) {
    SCOPED_TRACE(hi);
    EXPECT_EQ(check_on_device(fn, {rand(DType::F32, {2, 3}, hi - 2, hi)}), "");
  }
}

TEST_F(ControlFlowDevice, WhileLoopBodyWithDotClosuresAndNestedStaticLoops) {
  const HostArray w_host = rand(DType::F32, {4}, -1, 1);
  const Array w = Array::from_host(w_host);
  auto fn = [&](const Arrays& in) {
    const Array& x = in[0];  // f32[4]
    const Array& m = in[1];  // f32[4,4]
    // fori (static) > while (on the device) > scan (static), each closing over outer values.
    Array out = lax::fori_loop(
        0, 3,
        [&](const Array& i, const Array& acc) {
          Array fi = i.astype(DType::F32);
          auto body = [&](const Pair& s) {
            Array fj = s.first.astype(DType::F32);
            auto [c, ys] = lax::scan(
                [&](const Array& c, const Array& wi) {
                  Array c2 = c + wi * x * (fj + 1.0) - fi + np::sum(w) * 0.1;
                  return std::make_pair(c2, c2 * 0.5);
                },
                s.second, m);
            Array mixed = np::matmul(m, c) / (np::sum(np::abs(c)) + 1.0);
            return Pair{s.first + 1, mixed + np::sum(ys) * 0.125};
          };
          return lax::while_loop([&](const Pair& s) { return s.first < i + 2; }, body,
                                 Pair{Array::scalar_int(0), acc})
              .second;
        },
        np::zeros({4}));
    return Arrays{out};
  };
  EXPECT_EQ(check_on_device(fn, {rand(DType::F32, {4}), rand(DType::F32, {4, 4}, -1, 1)},
                            {.rtol = 1e-5, .atol = 1e-5}),
            "");
}

TEST_F(ControlFlowDevice, CondOnTheDevice) {
  auto fn = [](const Arrays& in) {
    // pred from the data; an integer predicate means != 0; a tree operand.
    Array a = lax::cond(
        np::sum(in[0]) > 0.0, [](const Array& x) { return np::exp(x); },
        [](const Array& x) { return x * -3.0; }, in[0]);
    Pair b = lax::cond(
        in[1],
        [](const Pair& p) {
          return Pair{p.second * 2.0, p.first + 1};
        },
        [](const Pair& p) {
          return Pair{p.second - 1.0, p.first * 3};
        },
        Pair{in[1], in[0] * 0.5});
    return Arrays{a, b.first, b.second};
  };
  for (std::int32_t k : {0, 1, -4}) {
    for (int sign : {1, -1}) {
      SCOPED_TRACE(std::to_string(k) + " " + std::to_string(sign));
      HostArray x = rand(DType::F32, {5}, 0.1, 1);
      for (std::int64_t j = 0; j < 5; ++j) x.set_f64(j, sign * x.get_f64(j));
      EXPECT_EQ(check_on_device(fn, {x, i32_scalar(k)}), "");
    }
  }
}

TEST_F(ControlFlowDevice, CondInsideScan) {
  auto fn = [](const Arrays& in) {
    auto [c, ys] = lax::scan(
        [](const Array& c, const Array& x) {
          Array next = lax::cond(
              x > 0.0, [](const Array& c, const Array& x) { return c + x; },
              [](const Array& c, const Array& x) { return c - 2.0 * x; }, c, x);
          return std::make_pair(next, next);
        },
        Array::scalar(1.0), in[0]);
    return Arrays{c, ys};
  };
  const HostArray xs = rand(DType::F32, {31});
  EXPECT_EQ(check_on_device(fn, {xs}), "");
  const Arrays out = fn(testing::upload_all({xs}));
  double c = 1;
  const auto ys = floats(out[1]);
  for (std::int64_t j = 0; j < 31; ++j) {
    const double x = xs.get_f64(j);
    c = x > 0 ? c + x : c - 2 * x;
    EXPECT_NEAR(ys[static_cast<std::size_t>(j)], c, 1e-4) << j;
  }
}

TEST_F(ControlFlowDevice, ScanInsideCond) {
  auto fn = [](const Arrays& in) {
    auto cumsum = [](const Array& xs) {
      return lax::scan(cumsum_step, Array::scalar(0.0), xs).second;
    };
    auto cumprod = [](const Array& xs) {
      return lax::scan(
                 [](const Array& c, const Array& x) {
                   Array p = c * x;
                   return std::make_pair(p, p);
                 },
                 Array::scalar(1.0), xs)
          .second;
    };
    return Arrays{lax::cond(in[0], cumsum, cumprod, in[1])};
  };
  const HostArray xs = rand(DType::F32, {12}, 0.5, 1.5);
  for (bool p : {true, false}) {
    SCOPED_TRACE(p);
    HostArray pred(DType::Bool, {});
    pred.set_i64(0, p);
    EXPECT_EQ(check_on_device(fn, {pred, xs}), "");
  }
}

TEST_F(ControlFlowDevice, SwitchClampsOutOfRangeIndices) {
  auto branches =
      std::make_tuple([](const Array& x) { return x + 1.0; },
                      [](const Array& x) { return x * 2.0; }, [](const Array& x) { return -x; });
  auto fn = [&](const Arrays& in) { return Arrays{lax::switch_(in[0], branches, in[1])}; };
  std::vector<std::function<Array(const Array&)>> as_vector{[](const Array& x) { return x + 1.0; },
                                                            [](const Array& x) { return x * 2.0; },
                                                            [](const Array& x) { return -x; }};
  auto vector_fn = [&](const Arrays& in) { return Arrays{lax::switch_(in[0], as_vector, in[1])}; };
  const HostArray x = rand(DType::F32, {3, 5});
  for (std::int64_t index : {-1000000, -1, 0, 1, 2, 3, 1000000}) {
    SCOPED_TRACE(index);
    const std::int64_t clamped = std::clamp<std::int64_t>(index, 0, 2);
    for (DType t : {DType::I32, DType::I64}) {
      HostArray idx(t, {});
      idx.set_i64(0, index);
      EXPECT_EQ(check_on_device(fn, {idx, x}), "") << dtype_name(t);
      EXPECT_EQ(check_on_device(vector_fn, {idx, x}), "") << dtype_name(t);
    }
    if (index >= 0) {  // u32 has no negative indices
      HostArray idx(DType::U32, {});
      idx.set_i64(0, index);
      EXPECT_EQ(check_on_device(fn, {idx, x}), "");
    }
    // Independently.
    const auto got = floats(fn(testing::upload_all(
        {i32_scalar(static_cast<std::int32_t>(std::clamp<std::int64_t>(index, -5, 5))), x}))[0]);
    for (std::int64_t j = 0; j < x.size(); ++j) {
      const auto v = static_cast<float>(x.get_f64(j));
      const float want = clamped == 0 ? v + 1.0f : clamped == 1 ? v * 2.0f : -v;
      EXPECT_EQ(got[static_cast<std::size_t>(j)], want) << j;
    }
  }
}

TEST_F(ControlFlowDevice, SwitchInsideALoopWithIndicesOnBothSidesOfTheRange) {
  auto fn = [](const Arrays& in) {
    // i - 2 runs from -2 to 4 over three branches: both clamps are taken.
    return Arrays{lax::fori_loop(
        0, 7,
        [](const Array& i, const Array& acc) {
          return lax::switch_(
              i - 2,
              std::make_tuple([](const Array& a) { return a + 1.0; },
                              [](const Array& a) { return a * 0.5; },
                              [](const Array& a) { return np::sin(a) + np::sum(a); }),
              acc);
        },
        in[0])};
  };
  EXPECT_EQ(check_on_device(fn, {rand(DType::F32, {6})}), "");
}

TEST_F(ControlFlowDevice, WhileLoopCallsIssuedBackToBackThenRead) {
  // A long integer loop (an LCG per element, exact on every side), called several times back
  // to back with different trip counts; every call returns its arrays at once (jit enqueues,
  // the device loops), and only then are the results read. Reading them in reverse order also
  // checks that a later call's result does not depend on reading an earlier one first.
  auto f = jit([](const Array& seed, const Array& limit) {
    return lax::while_loop([&](const Pair& s) { return s.first < limit; },
                           [](const Pair& s) {
                             return Pair{s.first + 1,
                                         s.second * Array::scalar_int(1664525, DType::U32) +
                                             Array::scalar_int(1013904223, DType::U32)};
                           },
                           Pair{Array::scalar_int(0), seed});
  });
  const std::vector<std::int32_t> limits{20000, 0, 5, 20001, 3000, 1};
  std::vector<HostArray> seeds;
  std::vector<Pair> results;
  for (std::int32_t limit : limits) {
    seeds.push_back(rand(DType::U32, {64}, 0, 4e9));
    results.push_back(f(Array::from_host(seeds.back()), Array::from_host(i32_scalar(limit))));
  }
  for (std::size_t k = limits.size(); k-- > 0;) {
    SCOPED_TRACE(limits[k]);
    EXPECT_EQ(results[k].first.item<int>(), std::max(limits[k], 0));
    const auto got = results[k].second.to_vector<std::uint32_t>();
    for (std::int64_t j = 0; j < 64; ++j) {
      auto v = static_cast<std::uint32_t>(seeds[k].get_i64(j));
      for (std::int32_t it = 0; it < limits[k]; ++it) v = v * 1664525u + 1013904223u;
      ASSERT_EQ(got[static_cast<std::size_t>(j)], v) << j;
    }
  }
  EXPECT_EQ(f.compile_count(), 1);
  // And against the interpreter for one short call.
  const Arrays args{Array::from_host(seeds[2]), Array::from_host(i32_scalar(5))};
  auto g = jit([&f](const Arrays& in) {
    Pair p = f(in[0], in[1]);
    return Arrays{p.first, p.second};
  });
  EXPECT_EQ(testing::compare_outputs(
                g(args), testing::expected_of(g, args, {seeds[2], i32_scalar(5)}), 0, 0),
            "");
}

}  // namespace
}  // namespace weft
