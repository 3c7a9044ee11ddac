// Random op chains, fused and run on the device, against the reference interpreter. Each
// seed builds a different program mixing elementwise ops, broadcasts, layout ops, reductions
// and dots, so fusion boundaries land in many different places.
#include <gtest/gtest.h>

#include "support/device_check.h"
#include "weft/weft.h"

namespace weft {
namespace {

using testing::check_against_interpreter;
using testing::random_array;
using V = std::vector<Array>;

// Builds the program for `seed` from inputs x0, x1: f32[a,b], row: f32[b], w: f32[b,b].
// Deterministic in the seed, because the checker traces it twice.
V random_program(unsigned seed, const V& in) {
  std::mt19937 rng(seed);
  auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<unsigned>(n)); };
  const Array &x0 = in[0], &x1 = in[1], &row = in[2], &w = in[3];
  const std::int64_t a = x0.shape()[0], b = x0.shape()[1];
  V pool{x0, x1};  // every value in the pool is f32[a,b]
  auto any = [&] { return pool[pick(static_cast<int>(pool.size()))]; };
  const int steps = 6 + pick(10);
  for (int s = 0; s < steps; ++s) {
    Array v = any();
    Array r;
    switch (pick(14)) {
      case 0:
        r = np::tanh(v);
        break;
      case 1:
        r = np::sin(v) * 0.5;
        break;
      case 2:
        r = np::sigmoid(v) - np::cos(any());
        break;
      case 3:
        r = np::add(v, any());
        break;
      case 4:
        r = np::multiply(v, np::tanh(any()));
        break;
      case 5:
        r = np::maximum(v, any()) - np::minimum(v, row);
        break;
      case 6:
        r = np::where(x0 > x1, v, any());
        break;  // predicate on raw inputs only
      case 7:
        r = v - np::max(v, {1}, true);
        break;  // reduce, broadcast back
      case 8:
        r = v / (np::sum(np::abs(v), {0}, true) + 1.0);
        break;
      case 9:
        r = np::matmul(v, w) * (1.0 / static_cast<double>(b));
        break;
      case 10:
        r = np::transpose(np::transpose(v) + np::expand_dims(np::mean(v, {1}), 0));
        break;
      case 11:  // shift by one along axis 1: slice, then pad back
        r = b > 1 ? lax::pad(lax::slice(v, {0, 1}, {a, b}), Array::scalar(0.25f), {0, 0}, {0, 1})
                  : v;
        break;
      case 12:  // concatenate halves swapped
        r = b > 1 ? np::concatenate(
                        {lax::slice(v, {0, b / 2}, {a, b}), lax::slice(v, {0, 0}, {a, b / 2})}, 1)
                  : -v;
        break;
      default:
        r = np::exp(np::tanh(v)) + np::sqrt(np::abs(v));
        break;
    }
    pool.push_back(r);
  }
  // The last value, plus two others, so some intermediates are outputs and multi-use.
  return V{pool.back(), any(), np::sum(any(), {0})};
}

TEST(RandomChains, FusedResultsMatchTheInterpreter) {
  std::mt19937 shapes(99);
  int kernels_seen = 0;
  for (unsigned seed = 1; seed <= 40; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    const std::int64_t a = 1 + static_cast<std::int64_t>(shapes() % 70);
    const std::int64_t b = 1 + static_cast<std::int64_t>(shapes() % 70);
    std::vector<HostArray> inputs{random_array(DType::F32, {a, b}, -2, 2, shapes),
                                  random_array(DType::F32, {a, b}, -2, 2, shapes),
                                  random_array(DType::F32, {b}, -2, 2, shapes),
                                  random_array(DType::F32, {b, b}, -1, 1, shapes)};
    auto fn = [seed](const V& xs) { return random_program(seed, xs); };
    EXPECT_EQ(check_against_interpreter(fn, inputs, 2e-4, 2e-4), "");
    // Fusion must actually happen: far fewer kernels than ops.
    auto f = jit([&fn](const V& xs) { return fn(xs); });
    V args;
    for (const auto& h : inputs) args.push_back(Array::from_host(h));
    Lowered lowered = f.lower(args);
    int ops = 0;
    for (const auto& n : lowered.graph().nodes) ops += n.op != OpKind::Parameter;
    const auto& info = lowered.compile()->info();
    kernels_seen += static_cast<int>(info.kernels.size());
    EXPECT_LT(info.kernels.size(), static_cast<std::size_t>(ops)) << lowered.as_text();
  }
  EXPECT_GT(kernels_seen, 40);
}

}  // namespace
}  // namespace weft
