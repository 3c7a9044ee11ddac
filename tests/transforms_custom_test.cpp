// custom_jvp, custom_vjp and checkpoint on real PoCL runs: JAX host_callback documentation's
// examples with their exact printed lines (print_tangents, print_cotangents, grad through a
// checkpoint), a numerically stable rule that plain differentiation cannot give, a host-side C++
// function made differentiable with custom_vjp, composition with jit, vmap and grad of grad, and
// the errors.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "support/print_capture.h"
#include "support/transform_check.h"
#include "weft/hcb.h"
#include "weft/ops.h"
#include "weft/transforms/custom.h"
#include "weft/transforms/grad.h"
#include "weft/transforms/jvp.h"
#include "weft/transforms/vmap.h"
#include "weft/weft.h"

namespace weft {
namespace {

using testing::PrintCapture;
using testing::values;
using Strings = std::vector<std::string>;

ArrayFunction one(std::function<Array(const std::vector<Array>&)> f) {
  return [f](const std::vector<Array>& a) { return std::vector<Array>{f(a)}; };
}

Array f32(float v) {
  return Array::scalar(v, DType::F32);
}

// host_callback's documented print_tangents: the identity, whose jvp rule prints the tangents.
const ArrayFunction print_tangents =
    custom_jvp([](const std::vector<Array>& args) { return args; },
               [](const std::vector<Array>& primals, const std::vector<Array>& tangents) {
                 hcb::id_print(tangents, {.what = "tangents"});
                 return JvpResult{primals, tangents};
               });

// host_callback's documented print_cotangents: the identity, whose backward rule prints the
// cotangents.
const ArrayFunction print_cotangents =
    custom_vjp([](const std::vector<Array>& args) { return args; },
               [](const std::vector<Array>& args) {
                 return CustomVjpForward{args, {}};
               },
               [](const std::vector<Array>&, const std::vector<Array>& cotangents) {
                 hcb::id_print(cotangents, {.what = "cotangents"});
                 return cotangents;
               });

TEST(CustomJvp, TheSeedsPrintTangentsExample) {
  PrintCapture capture;
  const auto power3_with_tangents = [](const Array& x) {
    const Array y = x * x;
    hcb::id_print({x, y}, {.what = "x,x²"});
    print_tangents({x, y});
    return y * x;
  };
  const auto [y, dy] = jvp(power3_with_tangents, f32(3), f32(0.1f));
  hcb::barrier_wait();
  EXPECT_EQ(capture.lines(), (Strings{"what: x,x² : (3., 9.)", "what: tangents : (0.1, 0.6)"}));
  EXPECT_FLOAT_EQ(y.to_vector<float>()[0], 27);
  EXPECT_FLOAT_EQ(dy.to_vector<float>()[0], 2.7f);
}

TEST(CustomVjp, TheSeedsPrintCotangentsExample) {
  PrintCapture capture;
  const auto power3_with_cotangents = [](const Array& x) {
    const Array y = x * x;
    hcb::id_print({x, y}, {.what = "x,x²"});
    const std::vector<Array> xy = print_cotangents({x, y});
    return xy[1] * xy[0];  // must use print_cotangents' outputs
  };
  const Array g = grad(std::function<Array(const Array&)>(power3_with_cotangents))(f32(3));
  hcb::barrier_wait();
  EXPECT_EQ(capture.lines(), (Strings{"what: x,x² : (3., 9.)", "what: cotangents : (9., 3.)"}));
  EXPECT_FLOAT_EQ(g.to_vector<float>()[0], 27);
}

TEST(Checkpoint, TheSeedsThreeLinesInOrder) {
  PrintCapture capture;
  const ArrayFunction inner =
      checkpoint(one([](const std::vector<Array>& a) { return testing::power3(a[0]); }));
  const auto f = [&](const Array& x) { return testing::power3(inner({x}).at(0)); };
  const Array g = grad(std::function<Array(const Array&)>(f))(f32(3));
  hcb::barrier_wait();
  // The inner power3's forward, the outer's, then the inner's recomputed for the backward pass.
  EXPECT_EQ(capture.lines(), (Strings{"what: x,x² : (3., 9.)", "what: x,x² : (27., 729.)",
                                      "what: x,x² : (3., 9.)"}));
  EXPECT_FLOAT_EQ(g.to_vector<float>()[0], 9 * std::pow(3.0f, 8));  // d(x⁹)/dx
  // grad of a vmapped checkpoint: x⁹ per example, recomputed in the backward pass.
  capture.clear();
  const Array xs = Array::from_vector<float>({2}, {1, 2});
  const std::vector<double> gv =
      values(grad(one([&](const std::vector<Array>& a) {
               return lax::reduce_sum(testing::power3(vmap(inner)({a[0]}).at(0)), {0});
             }))({xs})
                 .at(0));
  EXPECT_NEAR(gv[0], 9, 1e-4);
  EXPECT_NEAR(gv[1], 9 * std::pow(2.0, 8), 1e-2);
  hcb::barrier_wait();
  EXPECT_EQ(capture.lines().size(), 3u);  // forward inner (batched), outer, recomputed inner
  // Called outside any transformation it is its function.
  capture.clear();
  EXPECT_FLOAT_EQ(inner({f32(2)}).at(0).to_vector<float>()[0], 8);
  hcb::barrier_wait();
  EXPECT_EQ(capture.lines(), (Strings{"what: x,x² : (2., 4.)"}));
}

// softplus(x) = log(1 + exp(x)) with its derivative logistic(x), stable where exp overflows.
const ArrayFunction softplus =
    custom_jvp(one([](const std::vector<Array>& a) { return lax::log1p(lax::exp(a[0])); }),
               [](const std::vector<Array>& p, const std::vector<Array>& t) {
                 return JvpResult{{lax::log1p(lax::exp(p[0]))}, {t[0] * lax::logistic(p[0])}};
               });

TEST(CustomJvp, ItsRuleDrivesJvpGradVmapAndGradOfGrad) {
  const Array x = Array::from_vector<float>({4}, {-3, 0, 2, 100});
  const ArrayFunction plain =
      one([](const std::vector<Array>& a) { return lax::log1p(lax::exp(a[0])); });
  const JvpResult r = jvp(softplus, {x}, {Array::from_vector<float>({4}, {1, 1, 1, 1})});
  const std::vector<double> d = values(r.tangents_out[0]);
  for (std::size_t i = 0; i < 3; ++i) EXPECT_NEAR(d[i], 1 / (1 + std::exp(-values(x)[i])), 1e-6);
  EXPECT_NEAR(d[3], 1, 1e-6);  // plain differentiation gives inf/inf = nan here
  EXPECT_TRUE(std::isnan(
      values(jvp(plain, {x}, {Array::from_vector<float>({4}, {1, 1, 1, 1})}).tangents_out[0])[3]));
  // grad of the sum, per example with vmap, and the second derivative logistic'(x).
  const ArrayFunction total =
      one([](const std::vector<Array>& a) { return lax::reduce_sum(softplus({a[0]}).at(0), {0}); });
  const std::vector<double> g = values(grad(total)({x}).at(0));
  EXPECT_NEAR(g[3], 1, 1e-6);
  const ArrayFunction scalar_grad = grad(softplus);
  const std::vector<double> per_example = values(vmap(scalar_grad)({x}).at(0));
  const std::vector<double> second = values(vmap(grad(scalar_grad))({x}).at(0));
  for (std::size_t i = 0; i < 4; ++i) {
    const double s = 1 / (1 + std::exp(-values(x)[i]));
    EXPECT_NEAR(per_example[i], g[i], 1e-6) << i;
    EXPECT_NEAR(second[i], s * (1 - s), 1e-6) << i;
  }
  // grad of a vmapped custom_jvp function: the rule is batched with the function.
  const ArrayFunction batched_total = one([](const std::vector<Array>& a) {
    return lax::reduce_sum(vmap(softplus)({a[0]}).at(0), {0});
  });
  const std::vector<double> gb = values(jit(grad(batched_total))(std::vector<Array>{x}).at(0));
  for (std::size_t i = 0; i < 4; ++i) EXPECT_NEAR(gb[i], g[i], 1e-6) << i;
}

// sin computed on the host, as another library would: hcb::call is not differentiable, but
// custom_vjp gives it a derivative (host_callback's documented "call another library" case).
HostArray host_sin(const HostArray& x) {
  HostArray y = x;
  for (std::int64_t i = 0; i < x.size(); ++i) y.set_f64(i, std::sin(x.get_f64(i)));
  return y;
}
HostArray host_cos(const HostArray& x) {
  HostArray y = x;
  for (std::int64_t i = 0; i < x.size(); ++i) y.set_f64(i, std::cos(x.get_f64(i)));
  return y;
}
Array call_host(HostArray (*fn)(const HostArray&), const Array& x) {
  return hcb::call(fn, x, ShapeDtype{x.dtype(), x.shape()});
}

TEST(CustomVjp, DifferentiatesThroughAHostFunction) {
  const ArrayFunction sin_on_host = custom_vjp(
      one([](const std::vector<Array>& a) { return call_host(host_sin, a[0]); }),
      [](const std::vector<Array>& a) {
        return CustomVjpForward{{call_host(host_sin, a[0])}, {a[0]}};
      },
      [](const std::vector<Array>& residuals, const std::vector<Array>& ct) {
        return std::vector<Array>{ct[0] * call_host(host_cos, residuals[0])};
      });
  const Array x = Array::from_vector<float>({3}, {0.5f, 1, 2});
  const ArrayFunction loss = one([&](const std::vector<Array>& a) {
    return lax::reduce_sum(sin_on_host({a[0] * 2.0}).at(0), {0});
  });
  const std::vector<double> g = values(grad(loss)({x}).at(0));
  for (std::size_t i = 0; i < 3; ++i) EXPECT_NEAR(g[i], 2 * std::cos(2 * values(x)[i]), 1e-5) << i;
  EXPECT_EQ(values(jit(grad(loss))(std::vector<Array>{x}).at(0)), g);
  // vjp with the pullback used later, and per-example gradients with vmap.
  const VjpResult v = vjp(sin_on_host, {x});
  const std::vector<double> pulled =
      values(v.pullback({Array::from_vector<float>({3}, {1, 1, 1})}).at(0));
  for (std::size_t i = 0; i < 3; ++i) EXPECT_NEAR(pulled[i], std::cos(values(x)[i]), 1e-5) << i;
  const ArrayFunction per_example =
      vmap(grad(one([&](const std::vector<Array>& a) { return sin_on_host({a[0]}).at(0); })));
  const std::vector<double> pe = values(per_example({x}).at(0));
  for (std::size_t i = 0; i < 3; ++i) EXPECT_NEAR(pe[i], std::cos(values(x)[i]), 1e-5) << i;
  // grad of a vmapped custom_vjp function: fwd and bwd are batched with it (one host call per
  // batch).
  const Array xs = Array::from_vector<float>({2, 3}, {0.5f, 1, 2, -1, 0.25f, 3});
  const std::vector<double> gv =
      values(grad(one([&](const std::vector<Array>& a) {
               return lax::reduce_sum(vmap(sin_on_host)({a[0]}).at(0), {0, 1});
             }))({xs})
                 .at(0));
  for (std::size_t i = 0; i < 6; ++i) EXPECT_NEAR(gv[i], std::cos(values(xs)[i]), 1e-5) << i;
  // Without custom_vjp the host call stops grad with a clear error.
  try {
    grad(one([](const std::vector<Array>& a) {
      return lax::reduce_sum(call_host(host_sin, a[0]), {0});
    }))({x});
    FAIL() << "grad through hcb::call did not raise";
  } catch (const TransformError& e) {
    EXPECT_NE(std::string(e.what()).find("is not differentiable"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("custom_vjp"), std::string::npos) << e.what();
  }
  // Forward mode through a custom_vjp function is refused, as in JAX.
  try {
    jvp(sin_on_host, {x}, {x});
    FAIL() << "jvp of a custom_vjp function did not raise";
  } catch (const TransformError& e) {
    EXPECT_NE(std::string(e.what()).find("needs custom_jvp"), std::string::npos) << e.what();
  }
}

TEST(CustomJvp, ErrorsNameTheFunctionAndSayWhatToDo) {
  const Array x = Array::from_vector<float>({2}, {1, 2});
  // A rule returning the wrong number of tangents.
  const ArrayFunction bad = custom_jvp(one([](const std::vector<Array>& a) { return a[0] * 2.0; }),
                                       [](const std::vector<Array>& p, const std::vector<Array>&) {
                                         return JvpResult{{p[0] * 2.0}, {}};
                                       });
  try {
    jvp(bad, {x}, {x});
    FAIL() << "a rule with too few tangents did not raise";
  } catch (const TransformError& e) {
    EXPECT_NE(std::string(e.what()).find("custom_jvp at"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("returned 0 arrays; expected 1"), std::string::npos)
        << e.what();
  }
  // A function closing over a value being differentiated.
  try {
    grad(one([&](const std::vector<Array>& a) {
      const Array scale = a[0] * 3.0;
      const ArrayFunction closes =
          custom_jvp(one([&](const std::vector<Array>& b) { return b[0] * scale; }),
                     [&](const std::vector<Array>& p, const std::vector<Array>& t) {
                       return JvpResult{{p[0] * scale}, {t[0] * scale}};
                     });
      return lax::reduce_sum(closes({x}).at(0), {0});
    }))({x});
    FAIL() << "a closure over a differentiated value did not raise";
  } catch (const TransformError& e) {
    EXPECT_NE(std::string(e.what()).find("Pass it as an argument"), std::string::npos) << e.what();
  }
  // Outside any transformation a custom function is its function, also under jit.
  EXPECT_EQ(values(softplus({x}).at(0)), values(jit(softplus)(std::vector<Array>{x}).at(0)));
  EXPECT_EQ(jit(softplus).lower(std::vector<Array>{x}).as_text().find("custom_jvp"),
            std::string::npos);
}

}  // namespace
}  // namespace weft
