// jvp on real PoCL runs: every value primitive's tangent against central finite differences
// (f64 where the device has it), composition with jit, closures, integer inputs, host callbacks
// seeing primal values once (the host-callback seed), and the errors.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "support/device_check.h"
#include "support/print_capture.h"
#include "support/transform_check.h"
#include "weft/hcb.h"
#include "weft/ops.h"
#include "weft/transforms/jvp.h"
#include "weft/weft.h"

namespace weft {
namespace {

using testing::PrintCapture;
using Strings = std::vector<std::string>;

DType float_type() {
  return testing::widest_float();
}

Array random(const Shape& shape, double lo, double hi, std::mt19937& rng) {
  return testing::random_float(shape, lo, hi, rng);
}

using testing::expect_tangent_matches_differences;
using testing::values;

struct UnaryCase {
  const char* name;
  Array (*op)(const Array&, std::source_location);
  double lo, hi;
};

TEST(Jvp, EveryUnaryPrimitiveAgreesWithFiniteDifferences) {
  const UnaryCase cases[] = {
      {"neg", lax::neg, -2, 2},      {"abs", lax::abs, 0.1, 2},
      {"exp", lax::exp, -2, 2},      {"exp2", lax::exp2, -2, 2},
      {"log", lax::log, 0.2, 3},     {"log1p", lax::log1p, -0.5, 3},
      {"expm1", lax::expm1, -2, 2},  {"sqrt", lax::sqrt, 0.2, 3},
      {"rsqrt", lax::rsqrt, 0.2, 3}, {"sin", lax::sin, -3, 3},
      {"cos", lax::cos, -3, 3},      {"tan", lax::tan, -1.2, 1.2},
      {"tanh", lax::tanh, -2, 2},    {"logistic", lax::logistic, -3, 3},
      {"erf", lax::erf, -2, 2},
  };
  std::mt19937 rng(11);
  for (const UnaryCase& c : cases) {
    const Array x = random({7}, c.lo, c.hi, rng);
    const Array t = random({7}, -1, 1, rng);
    expect_tangent_matches_differences(
        [&](const std::vector<Array>& in) {
          return std::vector<Array>{c.op(in[0], std::source_location::current())};
        },
        {x}, {t}, c.name);
  }
}

struct BinaryCase {
  const char* name;
  Array (*op)(const Array&, const Array&, std::source_location);
  double lo, hi;
};

TEST(Jvp, EveryBinaryPrimitiveAgreesWithFiniteDifferencesInBothOperands) {
  const BinaryCase cases[] = {
      {"add", lax::add, -2, 2},  {"sub", lax::sub, -2, 2},    {"mul", lax::mul, -2, 2},
      {"div", lax::div, 0.5, 2}, {"rem", lax::rem, 0.3, 2.9}, {"pow", lax::pow, 0.5, 2},
      {"max", lax::max, -2, 2},  {"min", lax::min, -2, 2},    {"atan2", lax::atan2, -2, 2},
  };
  std::mt19937 rng(12);
  for (const BinaryCase& c : cases) {
    const Array x = random({6}, c.lo, c.hi, rng);
    const Array y = random({6}, c.lo, c.hi, rng);
    const Array tx = random({6}, -1, 1, rng);
    const Array ty = random({6}, -1, 1, rng);
    auto f = [&](const std::vector<Array>& in) {
      return std::vector<Array>{c.op(in[0], in[1], std::source_location::current())};
    };
    expect_tangent_matches_differences(f, {x, y}, {tx, ty}, std::string(c.name) + " (both)");
    expect_tangent_matches_differences(f, {x, y}, {tx, ty * 0.0},
                                       std::string(c.name) + " (x only)");
  }
}

TEST(Jvp, LayoutReductionAndDotPrimitivesAgreeWithFiniteDifferences) {
  std::mt19937 rng(13);
  const Array m = random({3, 4}, -1, 1, rng), tm = random({3, 4}, -1, 1, rng);
  const Array v = random({4}, -1, 1, rng), tv = random({4}, -1, 1, rng);
  const Array p = random({3, 4}, 0.5, 1.5, rng);
  struct Case {
    const char* name;
    ArrayFunction f;
    std::vector<Array> primals, tangents;
  };
  const std::vector<Case> cases = {
      {"broadcast_in_dim",
       [](const std::vector<Array>& a) {
         return std::vector<Array>{lax::broadcast_in_dim(a[0], {3, 4}, {1})};
       },
       {v},
       {tv}},
      {"reshape",
       [](const std::vector<Array>& a) {
         return std::vector<Array>{lax::reshape(a[0], {2, 6})};
       },
       {m},
       {tm}},
      {"transpose",
       [](const std::vector<Array>& a) {
         return std::vector<Array>{lax::transpose(a[0], {1, 0})};
       },
       {m},
       {tm}},
      {"slice",
       [](const std::vector<Array>& a) {
         return std::vector<Array>{lax::slice(a[0], {0, 1}, {3, 4}, {2, 1})};
       },
       {m},
       {tm}},
      {"pad",
       [](const std::vector<Array>& a) {
         return std::vector<Array>{lax::pad(a[0], a[1], {1, 0}, {0, 2}, {0, 1})};
       },
       {m, Array::scalar(0.5, float_type())},
       {tm, Array::scalar(0.25, float_type())}},
      {"concatenate",
       [](const std::vector<Array>& a) {
         return std::vector<Array>{lax::concatenate({a[0], a[0] * a[0]}, 0)};
       },
       {m},
       {tm}},
      {"dynamic_slice",
       [](const std::vector<Array>& a) {
         return std::vector<Array>{
             lax::dynamic_slice(a[0], {Array::scalar_int(1), Array::scalar_int(2)}, {2, 2})};
       },
       {m},
       {tm}},
      {"dynamic_update_slice",
       [](const std::vector<Array>& a) {
         return std::vector<Array>{
             lax::dynamic_update_slice(a[0], lax::slice(a[0] * a[0], {0, 0}, {2, 2}),
                                       {Array::scalar_int(1), Array::scalar_int(1)})};
       },
       {m},
       {tm}},
      {"reduce_sum",
       [](const std::vector<Array>& a) { return std::vector<Array>{lax::reduce_sum(a[0], {1})}; },
       {m},
       {tm}},
      {"reduce_prod",
       [](const std::vector<Array>& a) { return std::vector<Array>{lax::reduce_prod(a[0], {0})}; },
       {p},
       {tm}},
      {"reduce_max",
       [](const std::vector<Array>& a) { return std::vector<Array>{lax::reduce_max(a[0], {1})}; },
       {m},
       {tm}},
      {"reduce_min",
       [](const std::vector<Array>& a) {
         return std::vector<Array>{lax::reduce_min(a[0], {0, 1})};
       },
       {m},
       {tm}},
      {"dot_general",
       [](const std::vector<Array>& a) {
         return std::vector<Array>{lax::dot_general(
             a[0], a[1],
             {.lhs_contracting = {1}, .rhs_contracting = {0}, .lhs_batch = {}, .rhs_batch = {}})};
       },
       {m, v},
       {tm, tv}},
      {"select",
       [](const std::vector<Array>& a) {
         return std::vector<Array>{lax::select(lax::gt(a[0], a[1]), a[0] * a[1], lax::sin(a[1]))};
       },
       {m, p},
       {tm, tm}},
  };
  for (const Case& c : cases)
    expect_tangent_matches_differences(c.f, c.primals, c.tangents, c.name);
}

TEST(Jvp, ReduceProdIsExactWhereTheRowHasZeros) {
  // Rows: no zero, one zero, two zeros. d prod / dx_i is the product of the others.
  const Array x = Array::from_vector<float>({3, 3}, {2, 3, 4, 2, 0, 4, 0, 3, 0});
  const Array t = Array::from_vector<float>({3, 3}, {1, 1, 1, 1, 1, 1, 1, 1, 1});
  const auto [y, dy] = jvp([](const Array& a) { return lax::reduce_prod(a, {1}); }, x, t);
  EXPECT_EQ(y.to_vector<float>(), (std::vector<float>{24, 0, 0}));
  // 3*4 + 2*4 + 2*3 = 26; only the zero's neighbours' product survives: 2*4 = 8; two zeros: 0.
  EXPECT_EQ(dy.to_vector<float>(), (std::vector<float>{26, 8, 0}));
}

TEST(Jvp, ComposesWithJitBothWaysAndWithItself) {
  const Array x = Array::scalar(0.7, DType::F32);
  const Array one = Array::scalar(1.0, DType::F32);
  auto f = [](const Array& a) { return lax::sin(a) * a; };
  const double expected = std::cos(0.7) * 0.7 + std::sin(0.7);
  // jvp of a jitted function (inlined into jvp's trace) and jit of jvp.
  auto jitted_f = jit(f);
  EXPECT_NEAR(jvp(jitted_f, x, one).second.item<double>(), expected, 1e-6);
  auto derivative = jit([&](const Array& a) { return jvp(f, a, one).second; });
  EXPECT_NEAR(derivative(x).item<double>(), expected, 1e-6);
  EXPECT_EQ(derivative.trace_count(), 1);
  // The second derivative: jvp of jvp.
  auto second = [&](const Array& a) {
    return jvp([&](const Array& b) { return jvp(f, b, one).second; }, a, one).second;
  };
  EXPECT_NEAR(second(x).item<double>(), 2 * std::cos(0.7) - 0.7 * std::sin(0.7), 1e-5);
}

TEST(Jvp, ClosedOverValuesAreConstantsAndIntegersHaveZeroTangents) {
  const Array c = Array::from_vector<float>({2}, {2, 5});
  const Array x = Array::from_vector<float>({2}, {1, 3});
  const Array n = Array::from_vector<std::int32_t>({2}, {4, 6});
  const JvpResult r = jvp(
      [&](const std::vector<Array>& a) {
        return std::vector<Array>{a[0] * c + lax::convert_element_type(a[1], DType::F32),
                                  a[1] * a[1]};
      },
      {x, n},
      {Array::from_vector<float>({2}, {1, 1}), Array::from_vector<std::int32_t>({2}, {7, 7})});
  EXPECT_EQ(r.primals_out[0].to_vector<float>(), (std::vector<float>{6, 21}));
  EXPECT_EQ(r.tangents_out[0].to_vector<float>(), (std::vector<float>{2, 5}));
  EXPECT_EQ(r.tangents_out[1].dtype(), DType::I32);
  EXPECT_EQ(r.tangents_out[1].to_vector<std::int32_t>(), (std::vector<std::int32_t>{0, 0}));
}

using testing::power3;

TEST(Jvp, ATapSeesPrimalValuesOnceAsTheSeedSays) {
  PrintCapture capture;
  // jax.jvp(power3, (3.,), (0.1,)) prints "what: x,x² : (3., 9.)" once.
  const auto [y, dy] = jvp(power3, Array::scalar(3.0, DType::F32), Array::scalar(0.1, DType::F32));
  EXPECT_FLOAT_EQ(y.item<float>(), 27);
  EXPECT_NEAR(dy.item<float>(), 2.7, 1e-5);  // 3 x^2 * 0.1
  hcb::barrier_wait();
  EXPECT_EQ(capture.lines(), Strings{"what: x,x² : (3., 9.)"});
  // Under jit too.
  capture.clear();
  auto jitted =
      jit([](const Array& x) { return jvp(power3, x, Array::scalar(0.1, DType::F32)).second; });
  EXPECT_NEAR(jitted(Array::scalar(3.0, DType::F32)).item<float>(), 2.7, 1e-5);
  hcb::barrier_wait();
  EXPECT_EQ(capture.lines(), Strings{"what: x,x² : (3., 9.)"});
}

TEST(Jvp, AHostCallWithATangentIsNotDifferentiable) {
  auto host_sin = [](const HostArray& a) {
    std::vector<float> v = a.to_vector<float>();
    for (float& e : v) e = std::sin(e);
    return HostArray::from<float>(a.shape(), v);
  };
  auto f = [&](const Array& x) { return hcb::call(host_sin, x, ShapeDtype::like(x)); };
  const Array x = Array::from_vector<float>({2}, {0.5f, 1.0f});
  try {
    jvp(f, x, x);
    FAIL() << "expected TransformError";
  } catch (const TransformError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("hcb.call"), std::string::npos) << message;
    EXPECT_NE(message.find("not differentiable"), std::string::npos) << message;
    EXPECT_NE(message.find("custom_jvp"), std::string::npos) << message;
  }
  // Without a tangent flowing into it, it runs.
  auto g = [&](const Array& a) {
    return a + hcb::call(host_sin, Array::from_vector<float>({2}, {0, 0}), ShapeDtype::like(a));
  };
  EXPECT_EQ(jvp(g, x, x).second.to_vector<float>(), x.to_vector<float>());
}

TEST(Jvp, MismatchedTangentsAreClearErrors) {
  const Array x = Array::from_vector<float>({2}, {1, 2});
  auto f = [](const Array& a) { return a * a; };
  EXPECT_THROW(jvp(f, x, Array::from_vector<float>({3}, {1, 2, 3})), ShapeError);
  EXPECT_THROW(jvp(f, x, Array::from_vector<std::int32_t>({2}, {1, 2})), DTypeError);
  EXPECT_THROW(jvp([](const std::vector<Array>& a) { return a; }, {x}, {}), InvalidArgumentError);
}

// linearize runs f once (its tap prints once) and each jvp only the linear part, which agrees
// with jvp; eagerly and inside jit.
TEST(Linearize, RunsTheForwardPassOnceAndAgreesWithJvp) {
  PrintCapture capture;
  std::mt19937 rng(41);
  const Array x = random({4}, -1, 1, rng), w = random({4}, 0.5, 1.5, rng);
  const ArrayFunction f = [](const std::vector<Array>& a) {
    hcb::id_print(a[0], {.what = "x"});
    return std::vector<Array>{lax::sin(a[0]) * a[1], lax::reduce_sum(a[0] * a[0], {0})};
  };
  const LinearizeResult lin = linearize(f, {x, w});
  hcb::barrier_wait();
  EXPECT_EQ(capture.lines().size(), 1u);
  for (int k = 0; k < 2; ++k) {
    const std::vector<Array> t{random({4}, -1, 1, rng), random({4}, -1, 1, rng)};
    const std::vector<Array> got = lin.jvp(t);
    const JvpResult want = jvp(f, {x, w}, t);
    ASSERT_EQ(got.size(), 2u);
    for (std::size_t o = 0; o < 2; ++o) {
      const std::vector<double> g = values(got[o]), e = values(want.tangents_out[o]);
      for (std::size_t i = 0; i < e.size(); ++i)
        EXPECT_NEAR(g[i], e[i], 1e-9 + 1e-6 * std::abs(e[i]));
    }
  }
  hcb::barrier_wait();
  EXPECT_EQ(capture.lines().size(), 3u);  // the two jvp calls above printed once each, lin.jvp none
  // Inside jit: linearize and its jvp in the same trace.
  const Array t = random({4}, -1, 1, rng);
  const auto jitted = jit([&](const Array& a, const Array& b) {
    const LinearizeResult l = linearize(f, {a, b});
    return l.jvp({t, t}).at(1);
  });
  const double want = values(jvp(f, {x, w}, {t, t}).tangents_out[1])[0];
  EXPECT_NEAR(values(jitted(x, w))[0], want, 1e-9 + 1e-6 * std::abs(want));
  EXPECT_THROW(lin.jvp({x}), InvalidArgumentError);
}

}  // namespace
}  // namespace weft
