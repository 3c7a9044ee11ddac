// Reverse mode on real PoCL runs: vjp checked against jvp by the adjoint identity
// <ct, J t> = <Jᵀ ct, t> for every linear primitive the rules produce, grad against known
// derivatives and finite differences, composition with jit and with itself, JAX host_callback
// documentation's callback behaviour under grad, and the errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "support/device_check.h"
#include "support/print_capture.h"
#include "support/transform_check.h"
#include "weft/hcb.h"
#include "weft/interp/interpreter.h"
#include "weft/ir/text.h"
#include "weft/ops.h"
#include "weft/transforms/grad.h"
#include "weft/transforms/jacobian.h"
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

double dot(const Array& a, const Array& b) {
  const HostArray x = a.to_host(), y = b.to_host();
  double s = 0;
  for (std::int64_t i = 0; i < x.size(); ++i) s += x.get_f64(i) * y.get_f64(i);
  return s;
}

// <ct, J t> against <Jᵀ ct, t> over all inputs and outputs.
// `rounding`: the relative error a case adds by itself (a round trip through f32).
void expect_adjoint(const ArrayFunction& f, const std::vector<Array>& primals, std::mt19937& rng,
                    const std::string& what, double rounding = 0) {
  std::vector<Array> tangents;
  for (const Array& p : primals) tangents.push_back(random(p.shape(), -1, 1, rng));
  const JvpResult forward = jvp(f, primals, tangents);
  const VjpResult backward = vjp(f, primals);
  std::vector<Array> cotangents;
  for (const Array& y : backward.primals_out) cotangents.push_back(random(y.shape(), -1, 1, rng));
  const std::vector<Array> pulled = backward.pullback(cotangents);
  double lhs = 0, rhs = 0;
  for (std::size_t k = 0; k < cotangents.size(); ++k)
    lhs += dot(cotangents[k], forward.tangents_out[k]);
  for (std::size_t i = 0; i < primals.size(); ++i) rhs += dot(pulled[i], tangents[i]);
  const double tolerance = std::max(rounding, float_type() == DType::F64 ? 1e-9 : 1e-4);
  EXPECT_NEAR(lhs, rhs, tolerance * (1 + std::abs(lhs))) << what;
}

TEST(Vjp, TransposesEveryLinearPrimitiveByTheAdjointIdentity) {
  std::mt19937 rng(21);
  const Array m = random({3, 4}, -1, 1, rng), n = random({4, 5}, -1, 1, rng);
  const Array v = random({4}, -1, 1, rng), b = random({2, 3, 4}, -1, 1, rng);
  const Array pos = random({3, 4}, 0.5, 1.5, rng);
  struct Case {
    const char* name;
    ArrayFunction f;
    std::vector<Array> primals;
  };
  auto one = [](auto fn) {
    return ArrayFunction([fn](const std::vector<Array>& a) { return std::vector<Array>{fn(a)}; });
  };
  const std::vector<Case> cases = {
      {"neg/add/sub",
       one([](auto& a) { return lax::sub(lax::neg(a[0]), lax::add(a[0], a[1])); }),
       {m, pos}},
      {"mul/div",
       one([](auto& a) { return lax::div(lax::mul(a[0], a[1]), a[1] + 2.0); }),
       {m, pos}},
      {"unary chain",
       one([](auto& a) { return lax::tanh(lax::exp(lax::sin(a[0])) * lax::log(a[1])); }),
       {m, pos}},
      {"max/min/pow",
       one([](auto& a) {
         return lax::pow(lax::max(a[1], a[0] + 1.0), lax::min(a[1], a[1] * 0.5 + 0.2));
       }),
       {m, pos}},
      {"convert",
       one([](auto& a) {
         return lax::convert_element_type(lax::convert_element_type(a[0], DType::F32),
                                          a[0].dtype());
       }),
       {m}},
      {"select",
       one([](auto& a) {
         return lax::select(lax::gt(a[0], a[1] - 1.0), a[0] * a[1], lax::cos(a[1]));
       }),
       {m, pos}},
      {"broadcast (new axis)",
       one([](auto& a) {
         return lax::broadcast_in_dim(a[0], {3, 4}, {1});
       }),
       {v}},
      {"broadcast (size-1 axis)",
       one([](auto& a) {
         return lax::broadcast_in_dim(lax::reshape(a[0], {1, 4}), {3, 4}, {0, 1});
       }),
       {v}},
      {"reshape/transpose",
       one([](auto& a) {
         return lax::transpose(lax::reshape(a[0], {2, 2, 3}), {2, 0, 1});
       }),
       {m}},
      {"slice",
       one([](auto& a) {
         return lax::slice(a[0], {0, 1}, {3, 4}, {2, 2});
       }),
       {m}},
      {"pad",
       one([](auto& a) {
         return lax::pad(a[0], a[1], {1, -1}, {2, 0}, {1, 0});
       }),
       {m, Array::scalar(0.5, float_type())}},
      {"concatenate",
       one([](auto& a) {
         return lax::concatenate({a[0], a[1], a[0]}, 1);
       }),
       {m, pos}},
      {"dynamic_slice",
       one([](auto& a) {
         return lax::dynamic_slice(a[0], {Array::scalar_int(1), Array::scalar_int(1)}, {2, 3});
       }),
       {m}},
      {"dynamic_update_slice",
       one([](auto& a) {
         return lax::dynamic_update_slice(a[0], lax::slice(a[1], {0, 0}, {2, 2}),
                                          {Array::scalar_int(1), Array::scalar_int(2)});
       }),
       {m, pos}},
      {"reduce_sum/prod/max/min",
       one([](auto& a) {
         return lax::reduce_sum(a[0], {1}) + lax::reduce_prod(a[1], {1}) +
                lax::reduce_max(a[0], {1}) - lax::reduce_min(a[1], {1});
       }),
       {m, pos}},
      {"dot (matrix)",
       one([](auto& a) {
         return lax::dot_general(
             a[0], a[1],
             {.lhs_contracting = {1}, .rhs_contracting = {0}, .lhs_batch = {}, .rhs_batch = {}});
       }),
       {m, n}},
      {"dot (batched, contract first axes)",
       one([](auto& a) {
         return lax::dot_general(
             a[0], a[1],
             {.lhs_contracting = {1}, .rhs_contracting = {1}, .lhs_batch = {0}, .rhs_batch = {0}});
       }),
       {random({2, 3, 5}, -1, 1, rng), b}},
  };
  for (const Case& c : cases)
    expect_adjoint(c.f, c.primals, rng, c.name, std::string(c.name) == "convert" ? 1e-6 : 0);
}

TEST(Grad, KnownDerivativesAndArgnums) {
  const Array x = Array::from_vector<float>({3}, {1, 2, 3});
  auto sum_of_squares = grad([](const Array& a) { return lax::reduce_sum(a * a, {0}); });
  EXPECT_EQ(sum_of_squares(x).to_vector<float>(), (std::vector<float>{2, 4, 6}));
  // d/dy of sum(x * y^2) = 2 x y; argnums picks y; value_and_grad gives the value first.
  const Array y = Array::from_vector<float>({3}, {4, 5, 6});
  auto f = [](const std::vector<Array>& a) {
    return std::vector<Array>{lax::reduce_sum(a[0] * a[1] * a[1], {0})};
  };
  const std::vector<Array> vg = value_and_grad(f, {.argnums = {1, 0}})({x, y});
  ASSERT_EQ(vg.size(), 3u);
  EXPECT_FLOAT_EQ(vg[0].item<float>(), 16 + 50 + 108);
  EXPECT_EQ(vg[1].to_vector<float>(), (std::vector<float>{8, 20, 36}));
  EXPECT_EQ(vg[2].to_vector<float>(), (std::vector<float>{16, 25, 36}));
}

TEST(Grad, ComposesWithJitAndWithItself) {
  auto cube = [](const Array& a) { return a * a * a; };
  const Array x = Array::scalar(2.0, DType::F32);
  EXPECT_FLOAT_EQ(grad(jit(cube))(x).item<float>(), 12);
  auto jitted = jit([&](const Array& a) { return grad(cube)(a); });
  EXPECT_FLOAT_EQ(jitted(x).item<float>(), 12);
  EXPECT_FLOAT_EQ(grad(grad(cube))(x).item<float>(), 12);  // 6 x
  EXPECT_FLOAT_EQ(grad(grad(grad(cube)))(x).item<float>(), 6);
  // The text of grad(f) is ordinary IR.
  const std::string text = jit([&](const Array& a) { return grad(cube)(a); }).lower(x).as_text();
  EXPECT_NE(text.find("mul"), std::string::npos) << text;
}

TEST(Grad, SmallMlpLossAgreesWithFiniteDifferences) {
  std::mt19937 rng(22);
  const Array inputs = random({4, 3}, -1, 1, rng), w = random({3, 2}, -1, 1, rng);
  const Array bias = random({2}, -0.5, 0.5, rng), target = random({4, 2}, -1, 1, rng);
  auto loss = [&](const std::vector<Array>& p) {
    const Array h = lax::dot_general(
        inputs, p[0],
        {.lhs_contracting = {1}, .rhs_contracting = {0}, .lhs_batch = {}, .rhs_batch = {}});
    const Array out = lax::tanh(h + lax::broadcast_in_dim(p[1], {4, 2}, {1}));
    const Array err = out - target;
    return std::vector<Array>{lax::reduce_sum(err * err, {0, 1})};
  };
  const std::vector<Array> g = grad(loss, {.argnums = {0, 1}})({w, bias});
  const double h = float_type() == DType::F64 ? 1e-6 : 1e-2;
  const double tolerance = float_type() == DType::F64 ? 1e-6 : 2e-2;
  for (int which = 0; which < 2; ++which) {
    const Array p = which == 0 ? w : bias;
    const HostArray grad_host = g[static_cast<std::size_t>(which)].to_host();
    for (std::int64_t i = 0; i < p.size(); ++i) {
      HostArray e(p.dtype(), p.shape());
      e.set_f64(i, h);
      const Array step = Array::from_host(e);
      std::vector<Array> plus{w, bias}, minus{w, bias};
      plus[static_cast<std::size_t>(which)] = p + step;
      minus[static_cast<std::size_t>(which)] = p - step;
      const double fd = (loss(plus)[0].item<double>() - loss(minus)[0].item<double>()) / (2 * h);
      EXPECT_NEAR(grad_host.get_f64(i), fd, tolerance * (1 + std::abs(fd)))
          << "param " << which << " element " << i;
    }
  }
}

using testing::power3;

TEST(Grad, ATapSeesPrimalValuesOnceAsTheSeedSays) {
  PrintCapture capture;
  // jax.grad(power3)(3.) prints "what: x,x² : (3., 9.)" once.
  EXPECT_FLOAT_EQ(grad(power3)(Array::scalar(3.0, DType::F32)).item<float>(), 27);
  hcb::barrier_wait();
  EXPECT_EQ(capture.lines(), Strings{"what: x,x² : (3., 9.)"});
}

// Each Jacobian entry against central differences of one input element.
TEST(Jacobian, JacfwdAndJacrevAgreeWithFiniteDifferencesAndHessianWithTheFormula) {
  std::mt19937 rng(31);
  const Array x = random({3}, -1, 1, rng), a = random({2, 3}, -1, 1, rng);
  // f(x, a) = (a · sin(x), sum(x²)): outputs [2] and [].
  const ArrayFunction f = [](const std::vector<Array>& v) {
    const Array y = lax::dot_general(
        v[1], lax::sin(v[0]),
        {.lhs_contracting = {1}, .rhs_contracting = {0}, .lhs_batch = {}, .rhs_batch = {}});
    return std::vector<Array>{y, lax::reduce_sum(v[0] * v[0], {0})};
  };
  const std::vector<Array> forward = jacfwd(f, {.argnums = {0, 1}})({x, a});
  const std::vector<Array> reverse = jacrev(f, {.argnums = {0, 1}})({x, a});
  ASSERT_EQ(forward.size(), 4u);  // (out 0, x), (out 0, a), (out 1, x), (out 1, a)
  ASSERT_EQ(reverse.size(), 4u);
  const std::vector<Shape> shapes{{2, 3}, {2, 2, 3}, {3}, {2, 3}};
  const bool f64 = float_type() == DType::F64;
  const double h = f64 ? 1e-6 : 1e-2, tolerance = f64 ? 1e-6 : 2e-2;
  for (std::size_t j = 0; j < 4; ++j) {
    EXPECT_EQ(forward[j].shape(), shapes[j]) << j;
    EXPECT_EQ(reverse[j].shape(), shapes[j]) << j;
    const std::size_t out = j / 2, arg = j % 2;
    const HostArray fw = forward[j].to_host(), rv = reverse[j].to_host();
    const HostArray base = (arg == 0 ? x : a).to_host();
    const std::int64_t inputs = base.size();
    for (std::int64_t e = 0; e < inputs; ++e) {
      HostArray up = base, down = base;
      up.set_f64(e, base.get_f64(e) + h);
      down.set_f64(e, base.get_f64(e) - h);
      std::vector<Array> plus{x, a}, minus{x, a};
      plus[arg] = Array::from_host(up);
      minus[arg] = Array::from_host(down);
      const HostArray fp = f(plus)[out].to_host(), fm = f(minus)[out].to_host();
      for (std::int64_t o = 0; o < fp.size(); ++o) {
        const double fd = (fp.get_f64(o) - fm.get_f64(o)) / (2 * h);
        const std::int64_t at = o * inputs + e;
        EXPECT_NEAR(fw.get_f64(at), fd, tolerance * (1 + std::abs(fd))) << j << " " << at;
        EXPECT_NEAR(rv.get_f64(at), fd, tolerance * (1 + std::abs(fd))) << j << " " << at;
      }
    }
  }
  // hessian of x -> xᵀ M x is M + Mᵀ.
  const Array m = random({3, 3}, -1, 1, rng);
  const ArrayFunction quadratic = [m](const std::vector<Array>& v) {
    const Array mx = lax::dot_general(
        m, v[0],
        {.lhs_contracting = {1}, .rhs_contracting = {0}, .lhs_batch = {}, .rhs_batch = {}});
    return std::vector<Array>{lax::reduce_sum(v[0] * mx, {0})};
  };
  const Array hess = hessian(quadratic)({x}).at(0);
  ASSERT_EQ(hess.shape(), (Shape{3, 3}));
  const HostArray hm = hess.to_host(), mm = m.to_host();
  for (std::int64_t i = 0; i < 3; ++i)
    for (std::int64_t k = 0; k < 3; ++k)
      EXPECT_NEAR(hm.get_f64(i * 3 + k), mm.get_f64(i * 3 + k) + mm.get_f64(k * 3 + i),
                  f64 ? 1e-9 : 1e-4);
}

// grad(f) under jit is an ordinary program: its IR text parses back, the reference interpreter
// runs it to the same gradient, and it goes through the persistent cache with a stable key.
TEST(Grad, LowersToOrdinaryIrThatTheInterpreterAndTheCacheTakeLikeAnyProgram) {
  const Array x = Array::from_vector<float>({3}, {0.5f, -1, 2});
  const auto df = jit(grad(ArrayFunction([](const std::vector<Array>& a) {
    return std::vector<Array>{lax::reduce_sum(lax::sin(a[0]) * a[0], {0})};
  })));
  const Lowered lowered = df.lower(std::vector<Array>{x});
  const std::string text = lowered.as_text();
  EXPECT_EQ(text.find("= custom_"), std::string::npos) << text;
  const Graph parsed = parse_graph(text);
  verify(parsed);
  const HostArray input = x.to_host();
  const std::vector<HostArray> interpreted =
      interpret(parsed, std::span<const HostArray>(&input, 1));
  const std::vector<float> on_device = df(std::vector<Array>{x}).at(0).to_vector<float>();
  ASSERT_EQ(interpreted.size(), 1u);
  for (std::int64_t i = 0; i < 3; ++i) {
    const double v = input.get_f64(i);
    EXPECT_NEAR(interpreted[0].get_f64(i), std::cos(v) * v + std::sin(v), 1e-5) << i;
    EXPECT_NEAR(on_device[static_cast<std::size_t>(i)], interpreted[0].get_f64(i), 1e-5) << i;
  }
  const auto first = lowered.compile();
  const auto second = df.lower(std::vector<Array>{x}).compile();
  EXPECT_NE(first->info().cache_status, "off");
  EXPECT_EQ(first->info().cache_key.size(), 32u);
  EXPECT_EQ(first->info().cache_key, second->info().cache_key);
}

TEST(Grad, ClearErrors) {
  const Array x = Array::from_vector<float>({2}, {1, 2});
  EXPECT_THROW(grad([](const Array& a) { return a * a; })(x), InvalidArgumentError);  // not scalar
  auto f = [](const std::vector<Array>& a) {
    return std::vector<Array>{lax::reduce_sum(a[0], {0})};
  };
  EXPECT_THROW(grad(f, {.argnums = {1}})({x}), InvalidArgumentError);
  const VjpResult r = vjp(f, {x});
  EXPECT_THROW(r.pullback({x}), ShapeError);  // a cotangent of the wrong shape
}

}  // namespace
}  // namespace weft
