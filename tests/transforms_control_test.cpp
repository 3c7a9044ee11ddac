// Transformations through control flow on real PoCL runs: jvp of while, cond and scan
// (fori_loop) against finite differences; grad through cond, switch, scan and static fori_loop
// (and grad of grad) against finite differences; grad through a while loop refused with a clear
// error, as in JAX; vmap of cond (a shared or a per-example index), while (a shared or a
// per-example condition) and scan against a loop over the examples; callbacks inside loops
// seeing primal values once per iteration.
#include <gtest/gtest.h>

#include <cmath>
#include <mutex>
#include <random>
#include <string>
#include <vector>

#include "support/device_check.h"
#include "support/print_capture.h"
#include "support/transform_check.h"
#include "weft/control_flow.h"
#include "weft/hcb.h"
#include "weft/ops.h"
#include "weft/transforms/grad.h"
#include "weft/transforms/jvp.h"
#include "weft/transforms/vmap.h"
#include "weft/weft.h"

namespace weft {
namespace {

using testing::expect_grad_matches_differences;
using testing::expect_tangent_matches_differences;
using testing::random_float;
using testing::values;

ArrayFunction one(std::function<Array(const std::vector<Array>&)> f) {
  return [f](const std::vector<Array>& a) { return std::vector<Array>{f(a)}; };
}

Array sum_all(const Array& x) {
  lax::Axes axes;
  for (std::size_t d = 0; d < x.shape().size(); ++d) axes.push_back(static_cast<std::int64_t>(d));
  return axes.empty() ? x : lax::reduce_sum(x, axes);
}

// x_{t+1} = sin(x_t) * w + x_t * 0.5, five times: a static fori_loop (a scan).
Array fori_sin(const Array& x, const Array& w) {
  return lax::fori_loop(
      0, 5, [&](const Array&, const Array& c) { return lax::sin(c) * w + c * 0.5; }, x);
}

// Doubles c and adds x until c exceeds 10: the trip count depends on the data.
Array while_grow(const Array& c0, const Array& x) {
  return lax::while_loop(
      [](const Array& c) { return lax::lt(sum_all(c), Array::scalar(10.0, c.dtype())); },
      [&](const Array& c) { return c * 2.0 + x; }, c0);
}

// A branch on the data: sin(x) * y when sum(x) > 0, else x³ - y.
Array cond_branch(const Array& x, const Array& y) {
  const Array positive = lax::gt(sum_all(x), Array::scalar(0.0, x.dtype()));
  return lax::cond(
      positive, [](const Array& a, const Array& b) { return lax::sin(a) * b; },
      [](const Array& a, const Array& b) { return a * a * a - b; }, x, y);
}

// An RNN cell scanned over xs: h = tanh(W h + x_t), returns (h_last, all h).
std::pair<Array, Array> rnn(const Array& w, const Array& h0, const Array& xs) {
  return lax::scan(
      [&](const Array& h, const Array& x) {
        const Array next = lax::tanh(lax::dot_general(w, h,
                                                      {.lhs_contracting = {1},
                                                       .rhs_contracting = {0},
                                                       .lhs_batch = {},
                                                       .rhs_batch = {}}) +
                                     x);
        return std::pair<Array, Array>(next, next * next);
      },
      h0, xs);
}

TEST(ControlJvp, StaticForiLoopWhileAndCondAgreeWithFiniteDifferences) {
  std::mt19937 rng(3);
  const Array x = random_float({4}, -1, 1, rng), w = random_float({4}, 0.5, 1.5, rng);
  const Array tx = random_float({4}, -1, 1, rng), tw = random_float({4}, -1, 1, rng);
  expect_tangent_matches_differences(one([](auto& a) { return fori_sin(a[0], a[1]); }), {x, w},
                                     {tx, tw}, "fori_loop");
  // Only the constant x perturbed: the carry gets a tangent through the body (the fixpoint).
  expect_tangent_matches_differences(
      one([](auto& a) { return while_grow(a[0], a[1]); }),
      {random_float({3}, 0.1, 0.5, rng), random_float({3}, 0.1, 0.5, rng)},
      {random_float({3}, -1, 1, rng) * 0.0, random_float({3}, -1, 1, rng)}, "while_loop");
  for (double sign : {1.0, -1.0}) {
    const Array xs = random_float({3}, 0.2, 1, rng) * sign;
    expect_tangent_matches_differences(
        one([](auto& a) { return cond_branch(a[0], a[1]); }), {xs, random_float({3}, -1, 1, rng)},
        {random_float({3}, -1, 1, rng), random_float({3}, -1, 1, rng)},
        sign > 0 ? "cond, true branch" : "cond, false branch");
  }
}

TEST(ControlJvp, ScanWithXsAndBothOutputs) {
  std::mt19937 rng(4);
  const Array w = random_float({3, 3}, -0.5, 0.5, rng), h0 = random_float({3}, -1, 1, rng);
  const Array xs = random_float({6, 3}, -1, 1, rng);
  const ArrayFunction f = [](const std::vector<Array>& a) {
    auto [last, all] = rnn(a[0], a[1], a[2]);
    return std::vector<Array>{last, all};
  };
  expect_tangent_matches_differences(
      f, {w, h0, xs},
      {random_float({3, 3}, -1, 1, rng), random_float({3}, -1, 1, rng),
       random_float({6, 3}, -1, 1, rng)},
      "scan");
}

TEST(ControlGrad, ScanForiLoopCondAndSwitchAgreeWithFiniteDifferences) {
  std::mt19937 rng(5);
  const Array w = random_float({3, 3}, -0.5, 0.5, rng), h0 = random_float({3}, -1, 1, rng);
  const Array xs = random_float({6, 3}, -1, 1, rng);
  expect_grad_matches_differences(one([](auto& a) {
                                    auto [last, all] = rnn(a[0], a[1], a[2]);
                                    return sum_all(last) + sum_all(all) * 0.3;
                                  }),
                                  {w, h0, xs}, rng, "scan (RNN)");
  const Array x = random_float({4}, -1, 1, rng), v = random_float({4}, 0.5, 1.5, rng);
  expect_grad_matches_differences(one([](auto& a) { return sum_all(fori_sin(a[0], a[1])); }),
                                  {x, v}, rng, "fori_loop");
  for (double sign : {1.0, -1.0})
    expect_grad_matches_differences(
        one([](auto& a) { return sum_all(cond_branch(a[0], a[1]) * a[0]); }),
        {random_float({3}, 0.2, 1, rng) * sign, random_float({3}, -1, 1, rng)}, rng,
        sign > 0 ? "cond, true branch" : "cond, false branch");
  for (int index : {-1, 1, 2, 7}) {
    const auto branches = std::make_tuple([](const Array& a) { return lax::exp(a); },
                                          [](const Array& a) { return a * a; },
                                          [](const Array& a) { return lax::cos(a) * 3.0; });
    expect_grad_matches_differences(
        one([&](auto& a) {
          return sum_all(lax::switch_(Array::scalar_int(index), branches, a[0]));
        }),
        {random_float({2, 2}, -1, 1, rng)}, rng, "switch_ index " + std::to_string(index));
  }
}

TEST(ControlGrad, ReverseScanGradOfGradAndJit) {
  std::mt19937 rng(6);
  // A reverse scan whose constant y enters every step: its cotangent accumulates.
  const ArrayFunction f = one([](const std::vector<Array>& a) {
    const Array& y = a[1];
    auto [c, ys] = lax::scan(
        [&](const Array& carry, const Array& x) {
          const Array next = carry * lax::sin(x) + y * carry;
          return std::pair<Array, Array>(next, next * x);
        },
        a[0], a[2], lax::ScanOptions{.reverse = true});
    return sum_all(c) + sum_all(ys);
  });
  const Array c0 = random_float({2}, -1, 1, rng), y = random_float({2}, -0.5, 0.5, rng);
  const Array xs = random_float({5, 2}, -1, 1, rng);
  expect_grad_matches_differences(f, {c0, y, xs}, rng, "reverse scan");
  // jit of grad equals grad.
  const auto g = grad(f, {.argnums = {0, 1, 2}});
  const std::vector<Array> eager = g({c0, y, xs});
  const std::vector<Array> jitted = jit(g)(std::vector<Array>{c0, y, xs});
  for (std::size_t i = 0; i < eager.size(); ++i) {
    const std::vector<double> a = values(eager[i]), b = values(jitted[i]);
    for (std::size_t j = 0; j < a.size(); ++j) EXPECT_NEAR(a[j], b[j], 1e-5 * (1 + std::abs(a[j])));
  }
  // Second derivative of x -> sum(fori_sin(x, w)) along d against differences of its gradient.
  const Array x = random_float({3}, -1, 1, rng), w = random_float({3}, 0.5, 1.5, rng);
  const ArrayFunction first = [w](const std::vector<Array>& a) {
    return grad(one([](auto& b) { return sum_all(fori_sin(b[0], b[1])); }),
                {.argnums = {0}})({a[0], w});
  };
  expect_grad_matches_differences(one([&](auto& a) { return sum_all(first(a).at(0) * a[0]); }), {x},
                                  rng, "grad of grad through fori_loop");
}

TEST(ControlGrad, WhileLoopIsRefusedWithAClearError) {
  const Array x = Array::from_host(HostArray::from<float>({3}, {0.5f, 0.25f, 0.125f}));
  try {
    grad(one([](auto& a) { return sum_all(while_grow(a[0], a[0])); }))({x});
    FAIL() << "grad through a while loop did not raise";
  } catch (const TransformError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("while_loop at"), std::string::npos) << what;
    EXPECT_NE(what.find("reverse-mode"), std::string::npos) << what;
    EXPECT_NE(what.find("fori_loop with C++ integer bounds or scan"), std::string::npos) << what;
  }
  // Forward mode through the same loop works.
  const JvpResult r = jvp(one([](auto& a) { return while_grow(a[0], a[0]); }), {x}, {x});
  EXPECT_EQ(r.tangents_out.at(0).shape(), Shape{3});
}

// linearize is forward mode, so a while loop is fine (its linear part runs the jvp loop again).
// JAX 0.10: linearize of `while c < 5: c += 1` at 1. gives 5. and f_lin(1.) = 1.; of x^6 by a
// loop multiplying (c, p) = (c + 1, p * x) from (0, x) while c < 5, at 1.5: 11.390625 (1.5^6)
// and f_lin(2.) = 91.125 (6 * 1.5^5 times the tangent).
TEST(ControlLinearize, AWhileLoopLinearizesAsInJax) {
  const ArrayFunction count_to_five = one([](auto& a) {
    return lax::while_loop([](const Array& c) { return lax::lt(c, Array::scalar(5.0)); },
                           [](const Array& c) { return c + 1.0; }, a[0]);
  });
  const LinearizeResult lin = linearize(count_to_five, {Array::scalar(1.0)});
  EXPECT_EQ(lin.primals_out.at(0).item<float>(), 5.0f);
  EXPECT_EQ(lin.jvp({Array::scalar(1.0)}).at(0).item<float>(), 1.0f);

  const ArrayFunction power6 = one([](auto& a) {
    using Carry = std::pair<Array, Array>;
    const Array x = a[0];
    return lax::while_loop([](const Carry& c) { return lax::lt(c.first, Array::scalar(5.0)); },
                           [&](const Carry& c) {
                             return Carry{c.first + 1.0, c.second * x};
                           },
                           Carry{Array::scalar(0.0), x})
        .second;
  });
  const LinearizeResult p = linearize(power6, {Array::scalar(1.5)});
  EXPECT_FLOAT_EQ(p.primals_out.at(0).item<float>(), 11.390625f);
  EXPECT_FLOAT_EQ(p.jvp({Array::scalar(2.0)}).at(0).item<float>(), 91.125f);
  // grad of the same function is still refused.
  EXPECT_THROW(grad(power6)({Array::scalar(1.5)}), TransformError);
}

TEST(ControlGrad, TapsInsideALoopSeePrimalValuesOncePerIteration) {
  std::mutex mutex;
  std::vector<double> seen;
  const auto tap = [&](const HostArray& v) {
    std::lock_guard lock(mutex);
    seen.push_back(v.get_f64(0));
  };
  const ArrayFunction f = one([&](const std::vector<Array>& a) {
    const Array out = lax::fori_loop(
        0, 3, [&](const Array&, const Array& c) { return hcb::id_tap(tap, c) * a[0]; },
        Array::scalar(1.0, a[0].dtype()) + a[0] * 0.0);
    return out;
  });
  const Array x = Array::scalar(2.0, testing::widest_float());
  const std::vector<Array> g = grad(f)({x});
  hcb::barrier_wait();
  EXPECT_NEAR(values(g.at(0))[0], 12.0, 1e-5);  // d(x³)/dx at 2
  const std::lock_guard lock(mutex);
  EXPECT_EQ(seen, (std::vector<double>{1.0, 2.0, 4.0}));
}

std::vector<Array> per_example(const ArrayFunction& f, const std::vector<Array>& batched) {
  const std::int64_t n = batched[0].shape()[0];
  std::vector<std::vector<Array>> outs;
  for (std::int64_t i = 0; i < n; ++i) {
    std::vector<Array> args;
    for (const Array& b : batched) {
      Shape start(b.shape().size(), 0), limit = b.shape();
      start[0] = i;
      limit[0] = i + 1;
      Shape row(b.shape().begin() + 1, b.shape().end());
      args.push_back(lax::reshape(lax::slice(b, start, limit, {}), row));
    }
    outs.push_back(f(args));
  }
  std::vector<Array> stacked;
  for (std::size_t k = 0; k < outs[0].size(); ++k) {
    std::vector<Array> rows;
    for (auto& o : outs) {
      Shape shape{1};
      shape.insert(shape.end(), o[k].shape().begin(), o[k].shape().end());
      rows.push_back(lax::reshape(o[k], shape));
    }
    stacked.push_back(lax::concatenate(rows, 0));
  }
  return stacked;
}

void expect_vmap_matches_loop(const ArrayFunction& f, const std::vector<Array>& batched,
                              const std::string& what) {
  const std::vector<Array> got = vmap(f)(batched);
  const std::vector<Array> want = per_example(f, batched);
  ASSERT_EQ(got.size(), want.size()) << what;
  for (std::size_t k = 0; k < got.size(); ++k) {
    ASSERT_EQ(got[k].shape(), want[k].shape()) << what << " output " << k;
    const std::vector<double> a = values(got[k]), b = values(want[k]);
    for (std::size_t j = 0; j < a.size(); ++j)
      EXPECT_NEAR(a[j], b[j], 1e-5 * (1 + std::abs(b[j])))
          << what << " output " << k << " element " << j;
  }
}

TEST(ControlVmap, CondWhileAndScanMatchALoopOverTheExamples) {
  std::mt19937 rng(7);
  // cond: the index differs per example (both signs present), then a shared index.
  const Array xs =
      lax::concatenate({random_float({3, 2}, 0.2, 1, rng), random_float({3, 2}, -1, -0.2, rng)}, 0);
  const Array ys = random_float({6, 2}, -1, 1, rng);
  expect_vmap_matches_loop(one([](auto& a) { return cond_branch(a[0], a[1]); }), {xs, ys},
                           "cond with a per-example predicate");
  expect_vmap_matches_loop(one([](auto& a) {
                             return lax::switch_(
                                 Array::scalar_int(1),
                                 std::make_tuple([](const Array& v) { return v * 2.0; },
                                                 [](const Array& v) { return lax::exp(v); }),
                                 a[0]);
                           }),
                           {xs}, "switch_ with a shared index");
  // while: each example stops after its own number of iterations.
  expect_vmap_matches_loop(one([](auto& a) { return while_grow(a[0], a[1]); }),
                           {random_float({5, 2}, 0.1, 2, rng), random_float({5, 2}, 0.1, 0.5, rng)},
                           "while_loop with a per-example condition");
  // while with a shared trip count (fori_loop with an Array bound).
  expect_vmap_matches_loop(one([](auto& a) {
                             return lax::fori_loop(
                                 0, Array::scalar_int(4),
                                 [&](const Array&, const Array& c) { return c * a[1] + 1.0; },
                                 a[0]);
                           }),
                           {random_float({4, 3}, -1, 1, rng), random_float({4, 3}, -1, 1, rng)},
                           "fori_loop with an Array bound");
  // scan: an RNN per example.
  const Array w = random_float({3, 3}, -0.5, 0.5, rng);
  expect_vmap_matches_loop(
      [w](const std::vector<Array>& a) {
        auto [last, all] = rnn(w, a[0], a[1]);
        return std::vector<Array>{last, all};
      },
      {random_float({4, 3}, -1, 1, rng), random_float({4, 6, 3}, -1, 1, rng)}, "scan (RNN)");
}

// The safe-sqrt pattern: the untaken branch's derivative (sqrt's at 0 is inf) must not reach
// the examples that did not take it. JAX 0.10: grad of sum(vmap(f)) at [0, 0, 4] is
// [0, 0, 0.25] (and grad(f)(0.) = 0, vmap(grad(f)) and jvp(vmap(f)) give 0 at zeros too).
TEST(ControlVmap, GradThroughAPerExampleCondIgnoresTheUntakenBranch) {
  const std::function<Array(const Array&)> safe_sqrt = [](const Array& x) {
    return lax::cond(
        lax::lt(x, Array::scalar(1e-3)), [](const Array&) { return Array::scalar(1e-3); },
        [](const Array& v) { return lax::sqrt(v); }, x);
  };
  const ArrayFunction total = one([&](auto& a) { return sum_all(vmap(safe_sqrt)(a[0])); });
  const Array xs = Array::from_vector<float>({3}, {0, 0, 4});
  EXPECT_EQ(grad(total)({xs}).at(0).to_vector<float>(), (std::vector<float>{0, 0, 0.25f}));
  // switch_ takes the same path with an integer index.
  const ArrayFunction switched = one([](auto& a) {
    return sum_all(vmap(std::function<Array(const Array&)>([](const Array& x) {
      return lax::switch_(lax::convert_element_type(lax::ge(x, Array::scalar(1e-3)), DType::I32),
                          std::make_tuple([](const Array&) { return Array::scalar(1e-3); },
                                          [](const Array& v) { return lax::sqrt(v); }),
                          x);
    }))(a[0]));
  });
  EXPECT_EQ(grad(switched)({xs}).at(0).to_vector<float>(), (std::vector<float>{0, 0, 0.25f}));
}

TEST(ControlVmap, ComposesWithGrad) {
  std::mt19937 rng(8);
  const Array w = random_float({3, 3}, -0.5, 0.5, rng);
  const ArrayFunction loss = one([](const std::vector<Array>& a) {
    auto [last, all] = rnn(a[0], a[1], a[2]);
    return sum_all(last) + sum_all(all);
  });
  // Per-example gradients of the weights: vmap over (h0, xs) with w shared.
  const ArrayFunction per_example_grad = [&](const std::vector<Array>& a) {
    return grad(loss, {.argnums = {0}})({w, a[0], a[1]});
  };
  expect_vmap_matches_loop(per_example_grad,
                           {random_float({3, 3}, -1, 1, rng), random_float({3, 4, 3}, -1, 1, rng)},
                           "vmap of grad through scan");
}

}  // namespace
}  // namespace weft
