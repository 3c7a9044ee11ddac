// vmap on real PoCL runs: a batched call equals the per-example calls stacked, for every
// batching rule (elementwise, broadcast, layout, reductions, dot with one or both sides
// batched), in_axes/out_axes, unbatched arguments, composition with jit and grad, and errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "support/print_capture.h"
#include "support/transform_check.h"
#include "weft/ops.h"
#include "weft/transforms/grad.h"
#include "weft/transforms/vmap.h"
#include "weft/weft.h"

namespace weft {
namespace {

using testing::PrintCapture;
using Strings = std::vector<std::string>;

std::vector<double> values(const Array& a) {
  const HostArray h = a.to_host();
  std::vector<double> out(static_cast<std::size_t>(h.size()));
  for (std::int64_t i = 0; i < h.size(); ++i) out[static_cast<std::size_t>(i)] = h.get_f64(i);
  return out;
}

// Example `b` of `x` along axis 0.
Array example(const Array& x, std::int64_t b) {
  Shape start(x.shape().size(), 0), limit = x.shape();
  start[0] = b;
  limit[0] = b + 1;
  Shape rest(x.shape().begin() + 1, x.shape().end());
  return lax::reshape(lax::slice(x, start, limit), rest);
}

// vmap(f) on batched args against f on each example, outputs compared element by element.
void expect_matches_per_example(const ArrayFunction& f, const std::vector<Array>& batched_args,
                                const std::vector<bool>& batched, const std::string& what) {
  VmapOptions options;
  for (bool b : batched) options.in_axes.push_back(b ? std::optional<int>(0) : std::nullopt);
  const std::vector<Array> got = vmap(f, options)(batched_args);
  std::int64_t size = 0;
  for (std::size_t i = 0; i < batched.size(); ++i)
    if (batched[i]) size = batched_args[i].shape()[0];
  for (std::int64_t b = 0; b < size; ++b) {
    std::vector<Array> one;
    for (std::size_t i = 0; i < batched_args.size(); ++i)
      one.push_back(batched[i] ? example(batched_args[i], b) : batched_args[i]);
    const std::vector<Array> expected = f(one);
    ASSERT_EQ(expected.size(), got.size()) << what;
    for (std::size_t k = 0; k < got.size(); ++k) {
      const std::vector<double> e = values(expected[k]), g = values(example(got[k], b));
      ASSERT_EQ(e.size(), g.size()) << what << " output " << k;
      for (std::size_t j = 0; j < e.size(); ++j)
        EXPECT_NEAR(g[j], e[j], 1e-9 * (1 + std::abs(e[j])))
            << what << ": output " << k << " example " << b << " element " << j;
    }
  }
}

TEST(Vmap, EveryBatchingRuleMatchesThePerExampleCalls) {
  std::mt19937 rng(31);
  auto r = [&](const Shape& s) { return testing::random_float(s, -1, 1, rng); };
  const Array xs = r({5, 3, 4}), ys = r({5, 3, 4}), vs = r({5, 4}), m = r({4, 2}),
              shared = r({3, 4}), pad_values = r({5});
  // Per-example start indices, some out of range (clamped) and negative (wrapped).
  const Array starts = Array::from_vector<std::int32_t>({5}, {0, 1, 2, -1, 7});
  struct Case {
    const char* name;
    ArrayFunction f;
    std::vector<Array> args;
    std::vector<bool> batched;
  };
  auto one = [](auto fn) {
    return ArrayFunction([fn](const std::vector<Array>& a) { return std::vector<Array>{fn(a)}; });
  };
  const std::vector<Case> cases = {
      {"elementwise, unbatched operand broadcast",
       one([](auto& a) { return lax::tanh(a[0] * a[1]) + lax::exp(a[1]); }),
       {xs, shared},
       {true, false}},
      {"compare and select",
       one([](auto& a) { return lax::select(lax::gt(a[0], a[1]), a[0], a[1] * 2.0); }),
       {xs, ys},
       {true, true}},
      {"broadcast_in_dim",
       one([](auto& a) {
         return lax::broadcast_in_dim(a[0], {3, 4}, {1});
       }),
       {vs},
       {true}},
      {"reshape/transpose",
       one([](auto& a) {
         return lax::transpose(lax::reshape(a[0], {2, 6}), {1, 0});
       }),
       {xs},
       {true}},
      {"slice/pad",
       one([](auto& a) {
         return lax::pad(lax::slice(a[0], {0, 1}, {3, 4}, {2, 1}), Array::scalar(0.0, a[0].dtype()),
                         {1, 0}, {0, 1}, {0, 1});
       }),
       {xs},
       {true}},
      {"concatenate",
       one([](auto& a) {
         return lax::concatenate({a[0], a[1]}, 1);
       }),
       {xs, shared},
       {true, false}},
      {"dynamic_slice/update",
       one([](auto& a) {
         return lax::dynamic_update_slice(
             a[0], lax::dynamic_slice(a[0], {Array::scalar_int(1), Array::scalar_int(0)}, {2, 2}),
             {Array::scalar_int(0), Array::scalar_int(2)});
       }),
       {xs},
       {true}},
      {"dynamic_slice/update with per-example starts",
       one([](auto& a) {
         const Array piece = lax::dynamic_slice(a[0], {a[1], Array::scalar_int(0)}, {2, 3});
         return lax::dynamic_update_slice(a[0], piece * 2.0, {Array::scalar_int(1), a[1]});
       }),
       {xs, starts},
       {true, true}},
      {"dynamic_slice of a shared operand at per-example starts",
       one([](auto& a) {
         return lax::dynamic_slice(a[0], {a[1], a[1]}, {2, 2});
       }),
       {shared, starts},
       {false, true}},
      {"pad with a per-example value",
       one([](auto& a) {
         return lax::pad(a[0], a[1], {1, -1}, {0, 2}, {1, 0});
       }),
       {xs, pad_values},
       {true, true}},
      {"reductions",
       one([](auto& a) {
         return lax::reduce_sum(a[0], {1}) +
                lax::reduce_max(a[0], {1}) * lax::reduce_prod(a[0], {1});
       }),
       {xs},
       {true}},
      {"argmax",
       one([](auto& a) { return lax::convert_element_type(lax::argmax(a[0], {0}), a[0].dtype()); }),
       {xs},
       {true}},
      {"dot, both batched",
       one([](auto& a) {
         return lax::dot_general(
             a[0], a[1],
             {.lhs_contracting = {1}, .rhs_contracting = {0}, .lhs_batch = {}, .rhs_batch = {}});
       }),
       {xs, r({5, 4, 2})},
       {true, true}},
      {"dot, lhs batched",
       one([](auto& a) {
         return lax::dot_general(
             a[0], a[1],
             {.lhs_contracting = {1}, .rhs_contracting = {0}, .lhs_batch = {}, .rhs_batch = {}});
       }),
       {xs, m},
       {true, false}},
      {"dot, rhs batched",
       one([](auto& a) {
         return lax::dot_general(
             a[0], a[1],
             {.lhs_contracting = {1}, .rhs_contracting = {0}, .lhs_batch = {}, .rhs_batch = {}});
       }),
       {shared, r({5, 4, 2})},
       {false, true}},
  };
  for (const Case& c : cases) expect_matches_per_example(c.f, c.args, c.batched, c.name);
}

TEST(Vmap, InAxesAndOutAxes) {
  const Array x = Array::from_vector<float>({2, 3}, {1, 2, 3, 4, 5, 6});  // batch along axis 1
  const Array y = Array::from_vector<float>({2}, {10, 20});
  auto f = [](const std::vector<Array>& a) { return std::vector<Array>{a[0] * a[1]}; };
  const Array out = vmap(f, {.in_axes = {1, std::nullopt}, .out_axes = {1}})({x, y}).at(0);
  EXPECT_EQ(out.shape(), (Shape{2, 3}));
  EXPECT_EQ(out.to_vector<float>(), (std::vector<float>{10, 20, 30, 80, 100, 120}));
}

TEST(Vmap, ComposesWithJitAndGrad) {
  auto loss = [](const Array& w) { return lax::reduce_sum(lax::sin(w) * w, {0}); };
  const Array ws = Array::from_vector<float>({3, 2}, {0.1f, 0.2f, 0.3f, 0.4f, 0.5f, 0.6f});
  // Per-example gradients: vmap of grad, also under jit.
  const Array per_example = vmap(grad(loss))(ws);
  const Array jitted = jit([&](const Array& w) { return vmap(grad(loss))(w); })(ws);
  const std::vector<float> got = per_example.to_vector<float>(),
                           got_jit = jitted.to_vector<float>();
  const std::vector<float> w = ws.to_vector<float>();
  for (std::size_t i = 0; i < w.size(); ++i) {
    const float expected = std::cos(w[i]) * w[i] + std::sin(w[i]);
    EXPECT_NEAR(got[i], expected, 1e-5);
    EXPECT_NEAR(got_jit[i], expected, 1e-5);
  }
  // grad of a vmapped function.
  const Array g = grad([&](const Array& w) { return lax::reduce_sum(vmap(loss)(w), {0}); })(ws);
  EXPECT_EQ(g.shape(), ws.shape());
  const std::vector<float> gv = g.to_vector<float>();
  for (std::size_t i = 0; i < w.size(); ++i)
    EXPECT_NEAR(gv[i], std::cos(w[i]) * w[i] + std::sin(w[i]), 1e-5);
}

TEST(Vmap, ATapReceivesTheWholeBatchOnce) {
  PrintCapture capture;
  const Array r = vmap(testing::power3)(Array::from_vector<float>({2}, {2, 3}));
  EXPECT_EQ(r.to_vector<float>(), (std::vector<float>{8, 27}));
  hcb::barrier_wait();
  // The seed: "transforms: [('batch', {'batch_dims': (0, 0)})] what: x,x² : ([2., 3.], [4., 9.])"
  // — weft prints the values as numpy's array2string does (as JAX's id_print does), so the
  // arrays read "[2. 3.]".
  EXPECT_EQ(
      capture.lines(),
      (std::vector<std::string>{
          "transforms: [('batch', {'batch_dims': (0, 0)})] what: x,x² : ([2. 3.], [4. 9.])"}));
}

// jax.debug.print under vmap prints once per example. JAX 0.10 prints, for the same calls:
// "hello: 0", "hello: 1"; "hello: [0. 1.]", "hello: [2. 3.]"; and for the nested vmap (the
// inner vmap's examples outermost): "x 0 y 0", "x 2 y 10", "x 1 y 0", "x 3 y 10". Unordered
// prints may come in any order; ordered ones come in that order.
TEST(Vmap, DebugPrintPrintsOncePerExampleAsJaxDoes) {
  PrintCapture capture;
  const auto hello = [](DebugPrintOptions options) {
    return std::function<Array(const Array&)>([options](const Array& x) {
      debug_print("hello: {}", x, options);
      return x;
    });
  };
  const Array r = vmap(hello({.ordered = false}))(np::arange(2));
  EXPECT_EQ(r.to_vector<int>(), (std::vector<int>{0, 1}));
  effects_barrier();
  Strings lines = capture.lines();
  std::sort(lines.begin(), lines.end());
  EXPECT_EQ(lines, (Strings{"hello: 0", "hello: 1"}));

  capture.clear();
  auto rows = jit([&](const Array& x) { return vmap(hello({.ordered = true}))(x); });
  rows(np::reshape(np::arange(4, DType::F32), {2, 2}));
  effects_barrier();
  EXPECT_EQ(capture.lines(), (Strings{"hello: [0. 1.]", "hello: [2. 3.]"}));

  capture.clear();
  const ArrayFunction print_xy = [](const std::vector<Array>& a) {
    debug_print("x {} y {}", a[0], a[1], DebugPrintOptions{.ordered = true});
    return std::vector<Array>{a[0]};
  };
  const ArrayFunction inner = vmap(print_xy, {.in_axes = {0, std::nullopt}, .out_axes = {}});
  vmap(inner)({np::reshape(np::arange(4), {2, 2}), np::arange(2) * 10});
  effects_barrier();
  EXPECT_EQ(capture.lines(), (Strings{"x 0 y 0", "x 2 y 10", "x 1 y 0", "x 3 y 10"}));
}

TEST(Vmap, ATapSeesWhichArgumentsAreBatchedInItsContext) {
  std::vector<std::string> seen;
  const Array shared = Array::from_vector<float>({3}, {1, 2, 3});
  const ArrayFunction f = [&](const std::vector<Array>& a) {
    const std::vector<Array> tapped = hcb::id_tap(
        [&](const std::vector<HostArray>& v, const HostCallbackContext& context) {
          seen.push_back(describe_transforms(context.transforms) + " " +
                         std::to_string(v.at(0).shape().size()) + "," +
                         std::to_string(v.at(1).shape().size()));
        },
        std::vector<Array>{a[0], shared});
    return std::vector<Array>{tapped[0] + tapped[1]};
  };
  const Array xs = Array::from_vector<float>({2, 3}, {1, 2, 3, 4, 5, 6});
  const Array out = vmap(f)({xs}).at(0);
  EXPECT_EQ(out.to_vector<float>(), (std::vector<float>{2, 4, 6, 5, 7, 9}));
  // Nested: the inner vmap's entry first, then the outer's.
  const Array xss = Array::from_vector<float>({1, 2, 3}, {1, 2, 3, 4, 5, 6});
  vmap(vmap(f))({xss});
  hcb::barrier_wait();
  EXPECT_EQ(
      seen,
      (std::vector<std::string>{
          "[('batch', {'batch_dims': (0, None)})] 2,1",
          "[('batch', {'batch_dims': (0, None)}), ('batch', {'batch_dims': (0, None)})] 3,1"}));
}

TEST(Vmap, ClearErrors) {
  auto f = [](const std::vector<Array>& a) { return std::vector<Array>{a[0] + a[1]}; };
  const Array x = Array::from_vector<float>({2}, {1, 2});
  const Array y = Array::from_vector<float>({3}, {1, 2, 3});
  EXPECT_THROW(vmap(f)({x, y}), ShapeError);
  EXPECT_THROW(vmap(f, {.in_axes = {0}, .out_axes = {}})({x, x}), InvalidArgumentError);
  EXPECT_THROW(vmap(f, {.in_axes = {2, 0}, .out_axes = {}})({x, x}), InvalidArgumentError);
}

}  // namespace
}  // namespace weft
