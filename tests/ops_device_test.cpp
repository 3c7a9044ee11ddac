// Every primitive, compiled to OpenCL and run on the default device, against the reference
// interpreter. Sizes are deliberately not multiples of any work-group or tile size.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <limits>

#include "support/device_check.h"
#include "weft/interp/interpreter.h"
#include "weft/weft.h"

namespace weft {
namespace {

using testing::check_against_interpreter;
using testing::random_array;
using V = std::vector<Array>;

const Shape kShape{37, 53};

class OpsOnDevice : public ::testing::Test {
 protected:
  std::mt19937 rng{1234};
  HostArray rand(DType t, const Shape& s = kShape, double lo = -3, double hi = 3) {
    return random_array(t, s, lo, hi, rng);
  }
};

TEST_F(OpsOnDevice, FloatUnary) {
  using UnaryFn = Array (*)(const Array&, std::source_location);
  struct Case {
    const char* name;
    UnaryFn fn;
    double lo, hi;
  };
  const Case cases[] = {
      {"neg", lax::neg, -3, 3},        {"abs", lax::abs, -3, 3},
      {"sign", lax::sign, -3, 3},      {"floor", lax::floor, -3, 3},
      {"ceil", lax::ceil, -3, 3},      {"round", lax::round, -3, 3},
      {"exp", lax::exp, -5, 5},        {"exp2", lax::exp2, -5, 5},
      {"log", lax::log, 0.01, 10},     {"log1p", lax::log1p, -0.9, 10},
      {"expm1", lax::expm1, -3, 3},    {"sqrt", lax::sqrt, 0, 10},
      {"rsqrt", lax::rsqrt, 0.01, 10}, {"sin", lax::sin, -6, 6},
      {"cos", lax::cos, -6, 6},        {"tan", lax::tan, -1.4, 1.4},
      {"tanh", lax::tanh, -4, 4},      {"logistic", lax::logistic, -8, 8},
      {"erf", lax::erf, -3, 3},
  };
  // One program holding every unary op keeps the number of device builds low.
  // 7000 elements: CPU devices compute the first 4096 in 16-wide vectors, the rest scalar.
  std::vector<HostArray> inputs;
  for (const auto& c : cases) inputs.push_back(rand(DType::F32, {70, 100}, c.lo, c.hi));
  auto fn = [&](const V& xs) {
    V out;
    for (std::size_t i = 0; i < std::size(cases); ++i)
      out.push_back(cases[i].fn(xs[i], std::source_location::current()));
    return out;
  };
  EXPECT_EQ(check_against_interpreter(fn, inputs, 1e-5, 1e-6), "");
}

// floor, ceil and both roundings where they are easy to get wrong: halves, signed zeros, values
// a hair from a half, magnitudes around 2^52 and 2^53 (f64 codegen rounds by adding 2^52),
// infinities and NaN; f64, and f32 through the OpenCL builtins. Checked bit for bit (the sign of
// zero too) against the C library, an independent computation, and the interpreter.
TEST_F(OpsOnDevice, RoundingAtHalvesZerosAndLargeMagnitudes) {
  const double inf = std::numeric_limits<double>::infinity();
  const double p52 = 4503599627370496.0;  // 2^52
  std::vector<double> values = {0.0,
                                -0.0,
                                0.5,
                                -0.5,
                                1.5,
                                -1.5,
                                2.5,
                                -2.5,
                                0.3,
                                -0.3,
                                0.7,
                                -0.7,
                                0.49999999999999994,
                                -0.49999999999999994,
                                1e-310,
                                -1e-310,
                                p52 - 0.5,
                                -(p52 - 0.5),
                                p52 - 1.5,
                                p52,
                                -p52,
                                p52 + 1,
                                2 * p52 + 2,
                                -(2 * p52 + 2),
                                1e300,
                                -1e300,
                                inf,
                                -inf,
                                std::numeric_limits<double>::quiet_NaN()};
  for (int k = 0; k < 40; ++k) values.push_back((k - 20) * 0.25);  // every quarter in [-5, 5)
  const HostArray x = HostArray::from<double>({static_cast<std::int64_t>(values.size())}, values);
  auto fn = [](const V& a) {
    const Array f32 = np::astype(a[0], DType::F32);
    return V{lax::floor(a[0]),
             lax::ceil(a[0]),
             lax::round(a[0]),
             lax::round(a[0], lax::RoundingMethod::ToNearestEven),
             np::round(a[0]),
             lax::floor(f32),
             lax::ceil(f32),
             lax::round(f32),
             lax::round(f32, lax::RoundingMethod::ToNearestEven)};
  };
  using Host = double (*)(double);
  const Host host[] = {
      [](double v) { return std::floor(v); },     [](double v) { return std::ceil(v); },
      [](double v) { return std::round(v); },     [](double v) { return std::nearbyint(v); },
      [](double v) { return std::nearbyint(v); }, [](double v) { return std::floor(v); },
      [](double v) { return std::ceil(v); },      [](double v) { return std::round(v); },
      [](double v) { return std::nearbyint(v); }};
  auto f = jit(fn, {.name = "rounding_edges"});
  const V args{Array::from_host(x)};
  const V got = f(args);
  const std::vector<HostArray> interpreted =
      interpret(f.lower(args).graph(), std::vector<HostArray>{x});
  ASSERT_EQ(got.size(), std::size(host));
  for (std::size_t o = 0; o < got.size(); ++o) {
    const HostArray g = got[o].to_host();
    const bool f32 = o >= 5;
    for (std::int64_t i = 0; i < g.size(); ++i) {
      const double input =
          f32 ? static_cast<double>(static_cast<float>(values[static_cast<std::size_t>(i)]))
              : values[static_cast<std::size_t>(i)];
      const double want = host[o](input);
      for (const double value : {g.get_f64(i), interpreted[o].get_f64(i)}) {
        const bool same = std::isnan(want)
                              ? std::isnan(value)
                              : value == want && std::signbit(value) == std::signbit(want);
        EXPECT_TRUE(same) << "output " << o << " element " << i << " (x = " << input << "): got "
                          << value << ", expected " << want;
      }
    }
  }
}

// A result assembled from regions along one axis (a concatenate, or a sum of zero pads tiling the
// axis, as the gradient of a concatenate is) runs one launch per region; regions of 3 x 5 x 7
// elements need the checked tail launch. Bit for bit against the interpreter, -0 included (the
// sum of pads adds zeros: -0 becomes +0).
TEST_F(OpsOnDevice, ResultsAssembledFromRegionsAlongOneAxis) {
  const HostArray a = rand(DType::F32, {3, 5, 7}), b = rand(DType::F32, {3, 2, 7}),
                  c = rand(DType::F32, {3, 64, 7});
  auto fn = [](const V& x) {
    const Array zero = np::zeros({}, DType::F32);
    const Array negative_zero = x[0] * -0.0f;  // -0 where x[0] > 0
    const Array pads =
        lax::add(lax::add(lax::pad(x[0] * 2.0f, zero, {0, 0, 0}, {0, 66, 0}, {0, 0, 0}),
                          lax::pad(np::tanh(x[1]), zero, {0, 5, 0}, {0, 64, 0}, {0, 0, 0})),
                 lax::pad(x[2] - 1.0f, zero, {0, 7, 0}, {0, 0, 0}, {0, 0, 0}));
    return V{pads, lax::concatenate({x[2] * x[2], np::exp(x[1]), negative_zero}, 1),
             lax::concatenate({x[0], x[0] + 1.0f}, 2),
             lax::add(lax::pad(negative_zero, zero, {0, 0, 0}, {0, 0, 7}, {0, 0, 0}),
                      lax::pad(x[0], zero, {0, 0, 7}, {0, 0, 0}, {0, 0, 0}))};
  };
  auto f = jit(fn, {.name = "assembled_regions"});
  const V args{Array::from_host(a), Array::from_host(b), Array::from_host(c)};
  const V got = f(args);
  const std::vector<HostArray> expected =
      interpret(f.lower(args).graph(), std::vector<HostArray>{a, b, c});
  ASSERT_EQ(got.size(), expected.size());
  for (std::size_t o = 0; o < got.size(); ++o) {
    const HostArray g = got[o].to_host();
    ASSERT_EQ(g.shape(), expected[o].shape()) << "output " << o;
    for (std::int64_t i = 0; i < g.size(); ++i) {
      const double value = g.get_f64(i), want = expected[o].get_f64(i);
      EXPECT_TRUE(std::abs(value - want) <= 1e-6 * std::abs(want) &&
                  std::signbit(value) == std::signbit(want))
          << "output " << o << " element " << i << ": got " << value << ", expected " << want;
    }
  }
  EXPECT_NE(f.lower(args).compile()->info().source.find("_part1"), std::string::npos)
      << "no launch per region";
}

// Chains of two or more transcendentals run 4 interleaved 16-lane vectors per work-item on CPU
// devices (single calls run one): 3 * 4096 + 77 elements give a bulk launch of several
// work-groups and a scalar remainder, whose elements must all match the interpreter.
TEST_F(OpsOnDevice, TranscendentalChainsMatchInterpreterInBulkAndRemainder) {
  const Shape shape{3 * 4096 + 77};
  auto fn = [](const V& xs) {
    const Array& x = xs[0];
    return V{np::tanh(np::exp(x * 0.5f) - 1.0f) * 2.0f, lax::log1p(lax::exp(x)),
             lax::erf(lax::sin(x) * lax::logistic(x)), lax::exp(x) * lax::cos(xs[1])};
  };
  EXPECT_EQ(check_against_interpreter(
                fn, {rand(DType::F32, shape, -6, 6), rand(DType::F32, shape, -6, 6)}, 1e-5, 1e-6),
            "");
}

TEST_F(OpsOnDevice, F64UnaryAndBinary) {
  auto fn = [](const V& xs) {
    return V{lax::exp(xs[0]), lax::sin(xs[0]), lax::div(xs[0], xs[1]),
             lax::pow(lax::abs(xs[0]), xs[1]), lax::atan2(xs[0], xs[1])};
  };
  EXPECT_EQ(check_against_interpreter(fn, {rand(DType::F64), rand(DType::F64)}, 1e-12, 1e-14), "");
}

TEST_F(OpsOnDevice, FloatBinaryWithNaNs) {
  HostArray a = rand(DType::F32), b = rand(DType::F32, kShape, 0.1, 3);
  a.set_f64(3, std::numeric_limits<double>::quiet_NaN());
  b.set_f64(7, std::numeric_limits<double>::quiet_NaN());
  b.set_f64(8, 0.0);
  auto fn = [](const V& x) {
    return V{lax::add(x[0], x[1]), lax::sub(x[0], x[1]), lax::mul(x[0], x[1]),
             lax::div(x[0], x[1]), lax::rem(x[0], x[1]), lax::pow(x[1], x[0]),
             lax::max(x[0], x[1]), lax::min(x[0], x[1]), lax::atan2(x[0], x[1]),
             lax::eq(x[0], x[1]),  lax::ne(x[0], x[1]),  lax::lt(x[0], x[1]),
             lax::le(x[0], x[1]),  lax::gt(x[0], x[1]),  lax::ge(x[0], x[1])};
  };
  EXPECT_EQ(check_against_interpreter(fn, {a, b}, 1e-5, 1e-6), "");
}

// max and min with a constant run as one compare and select; they must still give NaN for NaN
// and order the zeros (+0 > -0), exactly as the interpreter does. Through tanh (exact at these
// inputs) the first 4096 elements run in the 16-lane kernel of a CPU device, the rest scalar.
TEST_F(OpsOnDevice, MaxMinWithConstantsKeepNaNAndSignedZeros) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  const double specials[] = {0.0, -0.0, nan, inf, -inf, 1e-5, -1e-5, 3e-6, -3e-6};
  HostArray x(DType::F32, {7000});
  for (std::int64_t i = 0; i < x.size(); ++i) x.set_f64(i, specials[i % std::size(specials)]);
  auto fn = [inf](const V& a) {
    const Array t = lax::tanh(a[0]);
    auto c = [](double v) { return Array::scalar(v); };
    return V{np::maximum(t, c(0.0)),
             np::maximum(t, c(-0.0)),
             np::minimum(t, c(0.0)),
             np::minimum(t, c(-0.0)),
             np::maximum(t, c(1e-5)),
             np::minimum(c(-1e-5), t),
             np::maximum(c(inf), t),
             np::minimum(t, c(-inf)),
             np::minimum(np::maximum(t, c(-3e-6)), c(3e-6)),
             np::maximum(a[0], c(0.0))};
  };
  auto f = jit(fn, {.name = "max_min_constants"});
  const V args{Array::from_host(x)};
  const V got = f(args);
  const Lowered lowered = f.lower(args);
  ASSERT_NE(lowered.as_text().find("constant[value=-0.0]"), std::string::npos) << lowered.as_text();
  const std::vector<HostArray> expected = interpret(lowered.graph(), std::vector<HostArray>{x});
  ASSERT_EQ(got.size(), expected.size());
  for (std::size_t o = 0; o < got.size(); ++o) {
    const HostArray g = got[o].to_host();
    for (std::int64_t i = 0; i < g.size(); ++i) {
      const double a = g.get_f64(i), e = expected[o].get_f64(i);
      const bool same =
          std::isnan(e) ? std::isnan(a) : a == e && std::signbit(a) == std::signbit(e);
      EXPECT_TRUE(same) << "output " << o << " element " << i << " (x = " << x.get_f64(i)
                        << "): got " << a << ", expected " << e;
    }
  }
}

TEST_F(OpsOnDevice, IntegerOpsIncludingEdgeCases) {
  for (DType t : {DType::I32, DType::I64, DType::U32}) {
    SCOPED_TRACE(std::string(dtype_name(t)));
    HostArray a = rand(t, kShape, 0, 40), b = rand(t, kShape, 0, 7);
    if (t != DType::U32) {
      a = rand(t, kShape, -40, 40);
      b = rand(t, kShape, -7, 7);
      a.set_i64(0, t == DType::I32 ? std::numeric_limits<std::int32_t>::min()
                                   : std::numeric_limits<std::int64_t>::min());
      b.set_i64(0, -1);
      a.set_i64(1, t == DType::I32 ? std::numeric_limits<std::int32_t>::max()
                                   : std::numeric_limits<std::int64_t>::max());
      b.set_i64(1, 2);
    }
    b.set_i64(2, 0);  // division and remainder by zero are defined
    HostArray small = rand(t, kShape, 0, 5);
    auto fn = [](const V& x) {
      return V{lax::add(x[0], x[1]),
               lax::sub(x[0], x[1]),
               lax::mul(x[0], x[1]),
               lax::div(x[0], x[1]),
               lax::rem(x[0], x[1]),
               lax::pow(x[1], x[2]),
               lax::max(x[0], x[1]),
               lax::min(x[0], x[1]),
               lax::logical_and(x[0], x[1]),
               lax::logical_or(x[0], x[1]),
               lax::logical_xor(x[0], x[1]),
               lax::logical_not(x[0]),
               lax::neg(x[0]),
               lax::abs(x[0]),
               lax::sign(x[0]),
               lax::lt(x[0], x[1]),
               lax::ge(x[0], x[1]),
               lax::eq(x[0], x[1])};
    };
    EXPECT_EQ(check_against_interpreter(fn, {a, b, small}), "");
  }
}

TEST_F(OpsOnDevice, NegativeIntegerPowers) {
  HostArray base = HostArray::from<std::int32_t>({6}, {1, -1, -1, 2, 0, 3});
  HostArray expo = HostArray::from<std::int32_t>({6}, {-3, -3, -2, -1, 5, 0});
  EXPECT_EQ(
      check_against_interpreter([](const V& x) { return V{lax::pow(x[0], x[1])}; }, {base, expo}),
      "");
}

TEST_F(OpsOnDevice, BoolLogicSelectAndCompare) {
  auto fn = [](const V& x) {
    return V{lax::logical_and(x[0], x[1]), lax::logical_or(x[0], x[1]),
             lax::logical_xor(x[0], x[1]), lax::logical_not(x[0]),
             lax::eq(x[0], x[1]),          lax::ne(x[0], x[1]),
             lax::select(x[0], x[2], x[3])};
  };
  EXPECT_EQ(check_against_interpreter(
                fn, {rand(DType::Bool), rand(DType::Bool), rand(DType::F32), rand(DType::F32)}),
            "");
}

TEST_F(OpsOnDevice, ConvertBetweenEveryPairOfTypes) {
  std::vector<HostArray> inputs;
  for (DType from : kAllDTypes) {
    HostArray h = rand(from, {64}, -3e9, 3e9);
    if (is_float(from)) {
      h.set_f64(0, std::numeric_limits<double>::quiet_NaN());
      h.set_f64(1, std::numeric_limits<double>::infinity());
      h.set_f64(2, -2.5);
      h.set_f64(3, 0.0);
    }
    inputs.push_back(h);
  }
  auto fn = [](const V& x) {
    V out;
    for (std::size_t i = 0; i < std::size(kAllDTypes); ++i)
      for (DType to : kAllDTypes) out.push_back(lax::convert_element_type(x[i], to));
    return out;
  };
  EXPECT_EQ(check_against_interpreter(fn, inputs), "");
}

TEST_F(OpsOnDevice, LayoutOps) {
  const Shape s3{5, 7, 9};
  auto fn = [&](const V& x) {
    const Array& a = x[0];  // f32[5,7,9]
    Array start0 = Array::scalar_int(3, DType::I32), start1 = Array::scalar_int(-2, DType::I32);
    Array start2 = Array::scalar_int(100, DType::I64);
    return V{
        lax::iota(DType::I32, {4, 6}, 1),
        lax::iota(DType::F32, {3, 5, 2}, 0),
        lax::broadcast_in_dim(x[1], {4, 7, 3}, {1}),  // f32[7] -> [4,7,3]
        lax::broadcast_in_dim(lax::reshape(x[1], {7, 1}), {7, 6}, {0, 1}),
        lax::reshape(a, {35, 9}),
        lax::transpose(a, {2, 0, 1}),
        lax::slice(a, {1, 0, 2}, {5, 7, 9}, {2, 3, 1}),
        lax::dynamic_slice(a, {start0, start1, start2}, {2, 3, 4}),
        lax::dynamic_update_slice(a, x[2], {start0, Array::scalar_int(2, DType::I32), start2}),
        lax::concatenate({a, lax::slice(a, {0, 0, 0}, {5, 7, 2}), a}, 2),
        lax::pad(a, Array::scalar(-1.5f), {1, -2, 0}, {2, 1, -3}, {0, 1, 2}),
        lax::pad(lax::slice(a, {0, 0, 0}, {0, 7, 9}), Array::scalar(4.0f), {1, 0, 0}, {0, 0, 0}),
    };
  };
  EXPECT_EQ(check_against_interpreter(
                fn, {rand(DType::F32, s3), rand(DType::F32, {7}), rand(DType::F32, {2, 3, 4})}),
            "");
}

TEST_F(OpsOnDevice, Reductions) {
  HostArray f = rand(DType::F32, {6, 7, 11}, -2, 2);
  f.set_f64(5, std::numeric_limits<double>::quiet_NaN());
  HostArray clean = rand(DType::F32, {6, 7, 11}, -2, 2);
  HostArray i = rand(DType::I32, {6, 7, 11}, -100, 100);
  HostArray u = rand(DType::U32, {6, 7, 11}, 0, 100);
  auto fn = [](const V& x) {
    V out;
    for (const lax::Axes& axes :
         {lax::Axes{0}, lax::Axes{2}, lax::Axes{0, 2}, lax::Axes{0, 1, 2}, lax::Axes{}}) {
      out.push_back(lax::reduce_sum(x[1], axes));
      out.push_back(lax::reduce_max(x[0], axes));
      out.push_back(lax::reduce_min(x[1], axes));
      out.push_back(lax::reduce_prod(np::multiply(x[1], Array::scalar(0.5f)), axes));
      out.push_back(lax::reduce_sum(x[2], axes));
      out.push_back(lax::reduce_max(x[3], axes));
      out.push_back(lax::reduce_prod(np::remainder(x[2], Array::scalar_int(3)), axes));
      if (!axes.empty()) {
        out.push_back(lax::argmax(x[0], axes, DType::I32));
        out.push_back(lax::argmin(x[1], axes, DType::I64));
        out.push_back(lax::argmax(x[2], axes, DType::I32));
      }
    }
    return out;
  };
  EXPECT_EQ(check_against_interpreter(fn, {f, clean, i, u}, 1e-5, 1e-5), "");
}

TEST_F(OpsOnDevice, LargeReductionsUseTheTwoStagePath) {
  const std::int64_t n = (1 << 20) + 17;
  HostArray x = rand(DType::F32, {n}, -1, 1);
  x.set_f64(n - 5, 7.5);  // a unique maximum near the end
  HostArray i = rand(DType::I32, {3, n / 3}, -5, 5);
  auto fn = [](const V& v) {
    return V{lax::reduce_sum(v[0], {0}), lax::reduce_max(v[0], {0}),
             lax::argmax(v[0], {0}),     lax::argmin(v[0], {0}, DType::I64),
             lax::reduce_sum(v[1], {1}), lax::reduce_sum(lax::mul(v[0], v[0]), {0})};
  };
  // f32 accumulation over a million terms: compare loosely in absolute terms.
  EXPECT_EQ(check_against_interpreter(fn, {x, i}, 1e-4, 5e-2), "");
}

// Outer-axis reductions to few outputs (a bias gradient) split their elements into ranges on
// CPUs, folded in a second kernel: uneven ranges, NaN, integers, two outer axes, a fused
// producer; arg-reductions keep one work-item per output.
TEST_F(OpsOnDevice, OuterReductionsToFewOutputsSplitTheirElements) {
  HostArray x = rand(DType::F32, {10007, 64}, -1, 1);
  x.set_f64(64 * 9000 + 5, std::numeric_limits<double>::quiet_NaN());
  HostArray i = rand(DType::I32, {3000, 3, 5}, -1000, 1000);
  auto fn = [](const V& v) {
    return V{lax::reduce_sum(v[0], {0}),
             lax::reduce_max(v[0], {0}),
             lax::reduce_sum(lax::mul(v[0], v[0]), {0}),
             lax::argmin(v[0], {0}),
             lax::reduce_sum(v[1], {0}),
             lax::reduce_min(v[1], {0, 1})};
  };
  EXPECT_EQ(check_against_interpreter(fn, {x, i}, 1e-5, 1e-4), "");
}

TEST_F(OpsOnDevice, RowReductionsUseOneWorkGroupPerRow) {
  HostArray x = rand(DType::F32, {100, 1000}, -1, 1);
  x.set_f64(2500, std::numeric_limits<double>::quiet_NaN());
  HostArray i = rand(DType::I64, {7, 3, 300}, -1000, 1000);
  auto fn = [](const V& v) {
    return V{lax::reduce_sum(v[0], {1}),
             lax::reduce_max(v[0], {1}),
             lax::argmax(v[0], {1}),
             lax::argmin(v[0], {0, 1}),
             lax::reduce_min(v[1], {1, 2}),
             lax::argmax(v[1], {2}),
             lax::reduce_prod(lax::sign(v[1]), {2})};
  };
  EXPECT_EQ(check_against_interpreter(fn, {x, i}, 1e-5, 1e-4), "");
}

// Softmax-shaped programs on every reduction kernel shape: rows folded 16 lanes at a time
// (with a remainder), short rows, an outer axis, few long rows (two-stage); the exp is the
// sum kernel's side output (multi-output fusion) that the normalising kernel reads. Rows hold
// NaN and -inf (a masked row), a layer norm shares the centred values.
TEST_F(OpsOnDevice, SoftmaxShapedProgramsOnEveryReductionPath) {
  HostArray rows = rand(DType::F32, {37, 1000}, -30, 30);
  rows.set_f64(1234, std::numeric_limits<double>::quiet_NaN());
  for (int c = 0; c < 1000; c += 3)
    rows.set_f64(5 * 1000 + c, -std::numeric_limits<double>::infinity());
  HostArray short_rows = rand(DType::F32, {50, 40}, -5, 5);
  HostArray cube = rand(DType::F32, {13, 7, 129}, -5, 5);
  HostArray long_rows = rand(DType::F32, {3, 20000}, -5, 5);
  auto fn = [](const V& v) {
    auto softmax = [](const Array& x, std::int64_t axis) {
      const Array m = np::max(x, {axis}, true);
      const Array e = np::exp(x - m);
      return e / np::sum(e, {axis}, true);
    };
    auto layer_norm = [](const Array& x) {
      const Array centred = x - np::mean(x, {-1}, true);
      return centred * np::rsqrt(np::mean(centred * centred, {-1}, true) + 1e-5f);
    };
    return V{softmax(v[0], 1), softmax(v[1], 1), softmax(v[2], 2),
             softmax(v[2], 0), softmax(v[3], 1), np::logsumexp(v[0], 1),
             layer_norm(v[1]), layer_norm(v[3]), np::exp(v[1]) / np::sum(np::exp(v[1]))};
  };
  EXPECT_EQ(check_against_interpreter(fn, {rows, short_rows, cube, long_rows}, 1e-5, 1e-6), "");
}

// Loop kernels over rows, 16 lanes at a time (CPU devices): per-column values (a bias),
// per-row values (a max, a mean), both at once, a rank-3 array, rows not a multiple of 16
// long, transcendentals, and NaN.
TEST_F(OpsOnDevice, RowKernelsWithPerRowAndPerColumnValues) {
  HostArray x = rand(DType::F32, {37, 1000}, -3, 3);
  x.set_f64(777, std::numeric_limits<double>::quiet_NaN());
  HostArray bias = rand(DType::F32, {1000}, -1, 1);
  HostArray cube = rand(DType::F32, {5, 7, 100}, -3, 3);
  HostArray plane = rand(DType::F32, {7, 100}, -1, 1);
  HostArray narrow = rand(DType::F32, {40, 33}, -3, 3);
  auto fn = [](const V& v) {
    const Array biased = v[0] + lax::broadcast_in_dim(v[1], {37, 1000}, {1});
    return V{
        np::tanh(biased), biased / np::max(v[0], {1}, true),
        np::erf(biased * 0.7f) * (biased - np::mean(v[0], {1}, true)),
        np::exp(v[2] - lax::broadcast_in_dim(v[3], {5, 7, 100}, {1, 2})) + np::sum(v[2], {2}, true),
        np::sigmoid(v[4] * np::max(v[4], {1}, true))};
  };
  // atol: output 3 adds row sums of 100 terms near 3 in f32 (ulp 2e-6) to small values.
  EXPECT_EQ(check_against_interpreter(fn, {x, bias, cube, plane, narrow}, 1e-5, 2e-5), "");
  // On CPU devices the biased tanh is one row kernel with 16-lane chunks.
  if (default_device().name().rfind("cpu:", 0) == 0) {
    auto f = jit([](const Array& a, const Array& b) {
      return np::tanh(a + lax::broadcast_in_dim(b, {37, 1000}, {1}));
    });
    const std::string source =
        f.lower(Array::from_host(x), Array::from_host(bias)).compile()->info().source;
    EXPECT_NE(source.find("c + 16 <= 1000"), std::string::npos) << source;
  }
}

// Row chains (CPU devices): consecutive kernels over the rows of one matrix run as one kernel,
// each work-item running every phase for its row. Softmax with NaN and a masked row, a layer
// norm with scale and offset, rank 3, a per-row logsumexp; a transposed read of a chain's
// result and a dot after it must stay kernels of their own (they read other rows).
TEST_F(OpsOnDevice, RowChainsRunOneKernelPerChain) {
  HostArray x = rand(DType::F32, {256, 1000}, -20, 20);
  x.set_f64(3 * 1000 + 17, std::numeric_limits<double>::quiet_NaN());
  for (int c = 0; c < 1000; c += 2)
    x.set_f64(9 * 1000 + c, -std::numeric_limits<double>::infinity());
  HostArray act = rand(DType::F32, {64, 771}, -3, 3);
  HostArray scale = rand(DType::F32, {771}, 0.5, 1.5);
  HostArray offset = rand(DType::F32, {771}, -1, 1);
  HostArray cube = rand(DType::F32, {6, 7, 300}, -5, 5);
  HostArray square = rand(DType::F32, {128, 128}, -5, 5);
  auto layer_norm = [](const Array& a, const Array& s, const Array& o) {
    const Array centred = a - np::mean(a, {-1}, true);
    const Array inv = np::rsqrt(np::mean(centred * centred, {-1}, true) + 1e-5f);
    return centred * inv * lax::broadcast_in_dim(s, a.shape(), {1}) +
           lax::broadcast_in_dim(o, a.shape(), {1});
  };
  auto mixes_rows = [](const Array& a) {
    const Array e = np::exp(a - np::max(a, {1}, true));
    const Array row_sums = np::sum(e, {1});
    const Array y = e / lax::broadcast_in_dim(row_sums, a.shape(), {0});
    // Divides by other rows' sums: a row phase in lane mode, reading a per-column value.
    const Array by_columns = e / lax::broadcast_in_dim(row_sums, a.shape(), {1});
    return V{by_columns, y + np::transpose(y), np::matmul(y, a)};
  };
  auto fn = [&](const V& v) {
    V out{np::softmax(v[0], 1), layer_norm(v[1], v[2], v[3]), np::softmax(v[4], 2),
          np::logsumexp(v[0], 1)};
    for (const Array& m : mixes_rows(v[5])) out.push_back(m);
    return out;
  };
  EXPECT_EQ(check_against_interpreter(fn, {x, act, scale, offset, cube, square}, 1e-5, 1e-5), "");
  if (default_device().name().rfind("cpu:", 0) != 0) return;
  auto kinds = [](const CompiledInfo& info) {
    std::string all;
    for (const KernelSummary& k : info.kernels) all += (all.empty() ? "" : " ") + k.kind;
    return all;
  };
  auto softmax = jit([](const Array& a) { return np::softmax(a, 1); });
  EXPECT_EQ(kinds(softmax.lower(Array::from_host(x)).compile()->info()), "rows");
  auto norm = jit(layer_norm);
  EXPECT_EQ(
      kinds(norm.lower(Array::from_host(act), Array::from_host(scale), Array::from_host(offset))
                .compile()
                ->info()),
      "rows");
  auto lse = jit([](const Array& a) { return np::logsumexp(a, 1); });
  EXPECT_EQ(kinds(lse.lower(Array::from_host(x)).compile()->info()), "rows");
  auto mixed = jit([&](const Array& a) { return mixes_rows(a); });
  const CompiledInfo info = mixed.lower(Array::from_host(square)).compile()->info();
  ASSERT_GE(info.kernels.size(), 3u) << kinds(info);
  EXPECT_EQ(info.kernels[0].kind, "rows") << kinds(info);
  for (std::size_t k = 1; k < info.kernels.size(); ++k)
    EXPECT_NE(info.kernels[k].kind, "rows") << kinds(info);
}

TEST_F(OpsOnDevice, DotGeneral) {
  auto fn = [](const V& x) {
    return V{
        // Plain matmul with sizes off the 32x32 tile.
        lax::dot_general(x[0], x[1], {{1}, {0}, {}, {}}),
        // Batched, with the contraction on a leading axis of the lhs.
        lax::dot_general(x[2], x[3], {{1}, {2}, {0}, {0}}),
        // Contract both axes of a matrix with a transposed one: a full inner product.
        lax::dot_general(x[0], x[0], {{0, 1}, {0, 1}, {}, {}}),
        // Outer product (no contraction).
        lax::dot_general(x[4], x[4], {{}, {}, {}, {}}),
        // Integers accumulate with wrap-around.
        lax::dot_general(x[5], x[6], {{1}, {0}, {}, {}}),
        // An lhs stored [K, M], an rhs stored [N, K], read transposed.
        lax::dot_general(x[5], x[7], {{0}, {0}, {}, {}}),
        lax::dot_general(x[5], x[8], {{1}, {1}, {}, {}}),
    };
  };
  EXPECT_EQ(check_against_interpreter(
                fn,
                {rand(DType::F32, {45, 70}), rand(DType::F32, {70, 33}),
                 rand(DType::F32, {3, 17, 5}), rand(DType::F32, {3, 4, 17}), rand(DType::F32, {9}),
                 rand(DType::I32, {20, 30}, -50, 50), rand(DType::I32, {30, 19}, -50, 50),
                 rand(DType::I32, {20, 11}, -50, 50), rand(DType::I32, {19, 30}, -50, 50)},
                1e-4, 1e-4),
            "");
}

TEST_F(OpsOnDevice, DotBlocksAlignedAndDouble) {
  auto fn = [](const V& x) {
    return V{lax::dot_general(x[0], x[1], {{1}, {0}, {}, {}}),
             lax::dot_general(x[2], x[3], {{1}, {0}, {}, {}}),
             lax::dot_general(x[4], x[5], {{2}, {1}, {0}, {0}})};
  };
  EXPECT_EQ(check_against_interpreter(fn,
                                      {rand(DType::F32, {64, 128}), rand(DType::F32, {128, 40}),
                                       rand(DType::F64, {16, 9}), rand(DType::F64, {9, 24}),
                                       rand(DType::F32, {2, 8, 3}), rand(DType::F32, {2, 3, 16})},
                                      1e-4, 1e-4),
            "");
}

// The CPU register-blocked dot in each of its shapes: C narrower than a vector (one vector per
// row, reading past each row of B except in the last rows, which go through a private array:
// K from 1 up), one or two vectors per row with edge blocks, row-block groups that end part
// way (130 rows: groups of 8, 8 and 1 blocks of 8 rows, the last one partial), batches; a last
// column block with one whole vector left (N = 48), or one vector and more columns (N = 57).
TEST_F(OpsOnDevice, DotRegisterBlockShapes) {
  const std::vector<std::array<std::int64_t, 3>> mnk = {
      {5, 1, 1},     {9, 3, 2},    {64, 10, 256}, {16, 15, 5},  {17, 7, 40},  {24, 20, 9},
      {130, 40, 33}, {64, 72, 17}, {8, 32, 1},    {70, 96, 12}, {24, 48, 20}, {20, 57, 9}};
  std::vector<HostArray> inputs;
  for (const auto& [m, n, k] : mnk) {
    inputs.push_back(rand(DType::F32, {m, k}));
    inputs.push_back(rand(DType::F32, {k, n}));
  }
  inputs.push_back(rand(DType::F32, {3, 9, 7}));
  inputs.push_back(rand(DType::F32, {3, 7, 10}));
  // The lhs stored [K, M] (a weight's gradient X^T dY), read transposed; and batched.
  const std::vector<std::array<std::int64_t, 3>> mnk_lhs_t = {
      {9, 3, 2}, {24, 48, 20}, {130, 40, 33}, {20, 57, 9}};
  const std::size_t first_lhs_t = inputs.size();
  for (const auto& [m, n, k] : mnk_lhs_t) {
    inputs.push_back(rand(DType::F32, {k, m}));
    inputs.push_back(rand(DType::F32, {k, n}));
  }
  inputs.push_back(rand(DType::F32, {3, 7, 9}));
  // The rhs stored [N, K] (dY W^T), read transposed: whole 4x4 blocks with K a multiple of the
  // vector width or not, edge blocks, K = 1; and batched.
  const std::vector<std::array<std::int64_t, 3>> mnk_rhs_t = {
      {8, 8, 16}, {24, 48, 20}, {130, 41, 33}, {5, 3, 1}, {64, 256, 100}};
  const std::size_t first_rhs_t = inputs.size();
  for (const auto& [m, n, k] : mnk_rhs_t) {
    inputs.push_back(rand(DType::F32, {m, k}));
    inputs.push_back(rand(DType::F32, {n, k}));
  }
  inputs.push_back(rand(DType::F32, {3, 10, 7}));
  auto fn = [&](const V& x) {
    V out;
    for (std::size_t i = 0; i < mnk.size(); ++i)
      out.push_back(lax::dot_general(x[2 * i], x[2 * i + 1], {{1}, {0}, {}, {}}));
    out.push_back(lax::dot_general(x[2 * mnk.size()], x[2 * mnk.size() + 1], {{2}, {1}, {0}, {0}}));
    for (std::size_t i = 0; i < mnk_lhs_t.size(); ++i)
      out.push_back(
          lax::dot_general(x[first_lhs_t + 2 * i], x[first_lhs_t + 2 * i + 1], {{0}, {0}, {}, {}}));
    out.push_back(
        lax::dot_general(x[first_rhs_t - 1], x[2 * mnk.size() + 1], {{1}, {1}, {0}, {0}}));
    for (std::size_t i = 0; i < mnk_rhs_t.size(); ++i)
      out.push_back(
          lax::dot_general(x[first_rhs_t + 2 * i], x[first_rhs_t + 2 * i + 1], {{1}, {1}, {}, {}}));
    out.push_back(lax::dot_general(x[2 * mnk.size()], x.back(), {{2}, {2}, {0}, {0}}));
    return out;
  };
  EXPECT_EQ(check_against_interpreter(fn, inputs, 1e-4, 1e-4), "");
  if (default_device().name().rfind("cpu:", 0) == 0) {
    auto narrow = jit([](const Array& a, const Array& b) {
      return lax::dot_general(a, b, {{1}, {0}, {}, {}});
    });
    const std::string source =
        narrow.lower(Array::from_host(inputs[2]), Array::from_host(inputs[3]))
            .compile()
            ->info()
            .source;
    EXPECT_NE(source.find(" out["), std::string::npos) << source;  // the narrow store
  }
}

// Dots into C of a few hundred rows or more copy B into contiguous column slabs first (CPU): whole
// slabs, a last slab of one vector and more columns (N = 57, 100), one whole vector (N = 48),
// columns past N zero in the copy; a batch; the lhs read transposed; an epilogue.
TEST_F(OpsOnDevice, DotsPackingBIntoSlabs) {
  const std::vector<std::array<std::int64_t, 3>> mnk = {
      {256, 64, 64}, {300, 100, 70}, {257, 48, 65}, {260, 57, 128}};
  std::vector<HostArray> inputs;
  for (const auto& [m, n, k] : mnk) {
    inputs.push_back(rand(DType::F32, {m, k}));
    inputs.push_back(rand(DType::F32, {k, n}));
  }
  inputs.push_back(rand(DType::F32, {2, 264, 80}));
  inputs.push_back(rand(DType::F32, {2, 80, 72}));
  inputs.push_back(rand(DType::F32, {64, 280}));  // stored [K, M]
  inputs.push_back(rand(DType::F32, {64}, -1, 1));
  auto fn = [&](const V& x) {
    V out;
    for (std::size_t i = 0; i < mnk.size(); ++i)
      out.push_back(lax::dot_general(x[2 * i], x[2 * i + 1], {{1}, {0}, {}, {}}));
    out.push_back(lax::dot_general(x[8], x[9], {{2}, {1}, {0}, {0}}));
    out.push_back(lax::dot_general(x[10], x[1], {{0}, {0}, {}, {}}));
    const Array d = np::matmul(x[0], x[1]);
    out.push_back(np::tanh(d + lax::broadcast_in_dim(x[11], {256, 64}, {1})));
    return out;
  };
  EXPECT_EQ(check_against_interpreter(fn, inputs, 1e-4, 1e-4), "");
  if (default_device().name().rfind("cpu:", 0) != 0) return;
  auto square = jit([](const Array& a, const Array& b) { return np::matmul(a, b); });
  const CompiledInfo info =
      square.lower(Array::from_host(inputs[0]), Array::from_host(inputs[1])).compile()->info();
  EXPECT_NE(info.source.find("_pack("), std::string::npos) << info.source;
}

// A weight gradient's x^T dy: the lhs stored contracting axis first is read transposed by the
// dot kernel (f32 and f64), with no transpose kernel before it: narrow results, edge blocks,
// a batch, an epilogue; integers keep the transpose.
TEST_F(OpsOnDevice, DotsReadATransposedLhsInPlace) {
  const std::vector<std::array<std::int64_t, 3>> mnk = {
      {5, 3, 40}, {64, 96, 300}, {17, 40, 9}, {9, 7, 1}, {130, 33, 20}};
  std::vector<HostArray> inputs;
  for (const auto& [m, n, k] : mnk) {
    inputs.push_back(rand(DType::F32, {k, m}));
    inputs.push_back(rand(DType::F32, {k, n}));
  }
  inputs.push_back(rand(DType::F32, {3, 11, 9}));
  inputs.push_back(rand(DType::F32, {3, 11, 20}));
  inputs.push_back(rand(DType::F64, {30, 12}));
  inputs.push_back(rand(DType::F64, {30, 17}));
  inputs.push_back(rand(DType::I32, {30, 12}, -50, 50));
  inputs.push_back(rand(DType::I32, {30, 17}, -50, 50));
  inputs.push_back(rand(DType::F32, {33}));
  auto fn = [&](const V& x) {
    V out;
    std::size_t i = 0;
    for (; i < mnk.size(); ++i)
      out.push_back(lax::dot_general(x[2 * i], x[2 * i + 1], {{0}, {0}, {}, {}}));
    out.push_back(lax::dot_general(x[2 * i], x[2 * i + 1], {{1}, {1}, {0}, {0}}));
    out.push_back(lax::dot_general(x[2 * i + 2], x[2 * i + 3], {{0}, {0}, {}, {}}));
    out.push_back(lax::dot_general(x[2 * i + 4], x[2 * i + 5], {{0}, {0}, {}, {}}));
    out.push_back(np::relu(lax::dot_general(x[8], x[9], {{0}, {0}, {}, {}}) + x[2 * i + 6]));
    return out;
  };
  EXPECT_EQ(check_against_interpreter(fn, inputs, 1e-4, 1e-4), "");
  // Long contractions into a small C split k into ranges on CPUs (partial Cs, then their sum):
  // transposed and plain lhs, f64, a remainder range.
  const std::vector<HostArray> long_k = {
      rand(DType::F32, {50001, 9}),  rand(DType::F32, {50001, 40}), rand(DType::F32, {20, 20003}),
      rand(DType::F32, {20003, 33}), rand(DType::F64, {41001, 5}),  rand(DType::F64, {41001, 8})};
  EXPECT_EQ(check_against_interpreter(
                [](const V& x) {
                  return V{lax::dot_general(x[0], x[1], {{0}, {0}, {}, {}}),
                           lax::dot_general(x[2], x[3], {{1}, {0}, {}, {}}),
                           lax::dot_general(x[4], x[5], {{0}, {0}, {}, {}})};
                },
                long_k, 1e-4, 5e-2),
            "");
  auto gradient = jit([](const Array& dy, const Array& x) {
    return lax::dot_general(dy, x, {{0}, {0}, {}, {}});
  });
  const CompiledInfo& info =
      gradient.lower(Array::from_host(inputs[2]), Array::from_host(inputs[3])).compile()->info();
  ASSERT_EQ(info.kernels.size(), 1u) << info.source;
  EXPECT_EQ(info.kernels[0].kind, "dot");
}

// Dot epilogues (CPU devices): the loop kernel after a dot (bias, activation) runs on each
// block of the dot's result inside the dot kernel: whole 8x32 blocks, edge blocks, narrow
// results (N < 16), a batch, exact GELU; the dot's result stored as well where it is also an
// output; a transposed read of the result stays a kernel of its own.
TEST_F(OpsOnDevice, DotEpiloguesRunInTheDotKernel) {
  const std::vector<std::array<std::int64_t, 3>> mnk = {
      {64, 64, 50}, {37, 70, 100}, {64, 10, 256}, {9, 3, 20}, {16, 96, 33}};
  std::vector<HostArray> inputs;
  for (const auto& [m, n, k] : mnk) {
    inputs.push_back(rand(DType::F32, {m, k}, -1, 1));
    inputs.push_back(rand(DType::F32, {k, n}, -0.3, 0.3));
    inputs.push_back(rand(DType::F32, {n}, -1, 1));
  }
  inputs.push_back(rand(DType::F32, {3, 9, 40}, -1, 1));
  inputs.push_back(rand(DType::F32, {3, 40, 48}, -0.3, 0.3));
  // A last column block of one vector and 8 more columns.
  inputs.push_back(rand(DType::F32, {16, 30}, -1, 1));
  inputs.push_back(rand(DType::F32, {30, 56}, -0.3, 0.3));
  inputs.push_back(rand(DType::F32, {56}, -1, 1));
  auto layer = [](const Array& x, const Array& w, const Array& b) {
    const Array d = np::matmul(x, w);
    return d + lax::broadcast_in_dim(b, d.shape(), {1});
  };
  auto gelu = [](const Array& h) { return h * 0.5f * (np::erf(h * 0.70710678f) + 1.0f); };
  auto fn = [&](const V& x) {
    V out{np::tanh(layer(x[0], x[1], x[2])), layer(x[3], x[4], x[5]) * 2.0f,
          layer(x[6], x[7], x[8]),           np::sigmoid(layer(x[9], x[10], x[11])),
          gelu(layer(x[12], x[13], x[14])),  np::tanh(layer(x[17], x[18], x[19]))};
    const Array d = np::matmul(x[0], x[1]);
    out.push_back(d);  // an output itself: stored besides its epilogue
    out.push_back(np::tanh(d) + np::transpose(d));
    out.push_back(np::exp(np::matmul(x[15], x[16]) * 0.1f));
    return out;
  };
  EXPECT_EQ(check_against_interpreter(fn, inputs, 1e-4, 1e-4), "");
  if (default_device().name().rfind("cpu:", 0) != 0) return;
  auto mlp = jit([&](const Array& a, const Array& w1, const Array& b1, const Array& w2,
                     const Array& b2) { return layer(np::tanh(layer(a, w1, b1)), w2, b2); });
  const HostArray w2 = rand(DType::F32, {64, 10}), b2 = rand(DType::F32, {10});
  const CompiledInfo info =
      mlp.lower(Array::from_host(inputs[0]), Array::from_host(inputs[1]),
                Array::from_host(inputs[2]), Array::from_host(w2), Array::from_host(b2))
          .compile()
          ->info();
  ASSERT_EQ(info.kernels.size(), 2u) << info.source;
  for (const KernelSummary& k : info.kernels) {
    EXPECT_EQ(k.kind, "dot");
    EXPECT_NE(std::find(k.fused_ops.begin(), k.fused_ops.end(), "add"), k.fused_ops.end());
  }
  auto mixed = jit([](const Array& a, const Array& w) {
    const Array d = np::matmul(a, w);
    return np::tanh(d) + np::transpose(d);
  });
  const CompiledInfo separate =
      mixed.lower(Array::from_host(inputs[0]), Array::from_host(inputs[1])).compile()->info();
  ASSERT_EQ(separate.kernels.size(), 2u) << separate.source;
  EXPECT_EQ(separate.kernels[1].kind, "loop");
}

// Wide dots with a long K run in blocks of 8 columns: their epilogue calls the math library's
// 8-lane functions (tanh, exp through sigmoid, erf), which must be defined in the program.
TEST_F(OpsOnDevice, DotEpiloguesCallEightLaneMathFunctions) {
  const std::vector<HostArray> inputs = {rand(DType::F32, {64, 784}, -1, 1),
                                         rand(DType::F32, {784, 256}, -0.05, 0.05),
                                         rand(DType::F32, {256}, -1, 1)};
  const std::vector<std::function<Array(const Array&)>> epilogues = {
      [](const Array& h) { return np::tanh(h); }, [](const Array& h) { return np::sigmoid(h); },
      [](const Array& h) { return np::erf(h * 0.70710678f); },
      [](const Array& h) { return np::exp(h * 0.5f); }};
  for (std::size_t e = 0; e < epilogues.size(); ++e) {
    auto fn = [&](const V& x) {
      const Array d = np::matmul(x[0], x[1]);
      return V{epilogues[e](d + lax::broadcast_in_dim(x[2], d.shape(), {1}))};
    };
    EXPECT_EQ(check_against_interpreter(fn, inputs, 1e-4, 1e-4), "") << "epilogue " << e;
  }
}

// A weight gradient's accumulation (acc + X^T dY) after other dots in node order still runs in
// its dot's kernel: the schedule moves it right after the dot (CPU devices).
TEST_F(OpsOnDevice, DotConsumerAfterOtherDotsBecomesItsEpilogue) {
  const std::vector<HostArray> inputs = {rand(DType::F32, {16, 24}), rand(DType::F32, {16, 40}),
                                         rand(DType::F32, {24, 40}), rand(DType::F32, {40, 8})};
  auto fn = [](const V& x) {
    const Array grad = lax::dot_general(x[0], x[1], {{0}, {0}, {}, {}});
    const Array other = np::matmul(x[1], x[3]);
    return V{x[2] + grad, other};
  };
  EXPECT_EQ(check_against_interpreter(fn, inputs, 1e-4, 1e-4), "");
  if (default_device().name().rfind("cpu:", 0) != 0) return;
  auto step = jit([&](const std::vector<Array>& x) { return fn(x); });
  std::vector<Array> args;
  for (const HostArray& h : inputs) args.push_back(Array::from_host(h));
  const CompiledInfo info = step.lower(args).compile()->info();
  ASSERT_EQ(info.kernels.size(), 2u) << info.source;
  for (const KernelSummary& k : info.kernels) EXPECT_EQ(k.kind, "dot") << info.source;
  const auto& first = info.kernels[0].fused_ops;
  EXPECT_NE(std::find(first.begin(), first.end(), "add"), first.end()) << info.source;
}

TEST_F(OpsOnDevice, EmptyArraysAndScalars) {
  auto fn = [](const V& x) {
    return V{lax::add(x[0], x[0]), lax::reduce_sum(x[0], {0}), lax::reduce_sum(x[0], {1}),
             lax::mul(x[1], x[1]), lax::dot_general(x[0], x[2], {{0}, {0}, {}, {}})};
  };
  EXPECT_EQ(check_against_interpreter(
                fn, {HostArray(DType::F32, {0, 4}), HostArray::from<float>({}, {3.0f}),
                     HostArray(DType::F32, {0, 2})}),
            "");
}

}  // namespace
}  // namespace weft
