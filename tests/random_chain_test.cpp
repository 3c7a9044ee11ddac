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

// The inputs of a program: x0, x1: f32[a,b], row: f32[b], w: f32[b,b].
struct Inputs {
  const Array &x0, &x1, &row, &w;
};

// One link of the chain: a new f32[a,b] value made from values of `pool` (all f32[a,b]).
Array random_step(std::mt19937& rng, const V& pool, const Inputs& in) {
  auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<unsigned>(n)); };
  auto any = [&] { return pool[static_cast<std::size_t>(pick(static_cast<int>(pool.size())))]; };
  const Array &x0 = in.x0, &x1 = in.x1, &row = in.row, &w = in.w;
  const std::int64_t a = x0.shape()[0], b = x0.shape()[1];
  Array v = any();
  switch (pick(14)) {
    case 0:
      return np::tanh(v);
    case 1:
      return np::sin(v) * 0.5;
    case 2:
      return np::sigmoid(v) - np::cos(any());
    case 3:
      return np::add(v, any());
    case 4:
      return np::multiply(v, np::tanh(any()));
    case 5:
      return np::maximum(v, any()) - np::minimum(v, row);
    case 6:
      return np::where(x0 > x1, v, any());  // predicate on raw inputs only
    case 7:
      return v - np::max(v, {1}, true);  // reduce, broadcast back
    case 8:
      return v / (np::sum(np::abs(v), {0}, true) + 1.0);
    case 9:
      return np::matmul(v, w) * (1.0 / static_cast<double>(b));
    case 10:
      return np::transpose(np::transpose(v) + np::expand_dims(np::mean(v, {1}), 0));
    case 11:  // shift by one along axis 1: slice, then pad back
      return b > 1 ? lax::pad(lax::slice(v, {0, 1}, {a, b}), Array::scalar(0.25f), {0, 0}, {0, 1})
                   : v;
    case 12:  // concatenate halves swapped
      return b > 1 ? np::concatenate(
                         {lax::slice(v, {0, b / 2}, {a, b}), lax::slice(v, {0, 0}, {a, b / 2})}, 1)
                   : -v;
    default:
      return np::exp(np::tanh(v)) + np::sqrt(np::abs(v));
  }
}

// How a part of the chain is wrapped in control flow.
enum class Wrap {
  None,
  StaticLoops,   // fori_loop with C++ bounds or scan: run on the device today
  DeviceDecided  // cond, switch_, while_loop: the device decides
};

// A few links of the chain inside one control-flow op whose body also reads values of the
// enclosing program (closures over outer tracers). The links come from their own generator
// seeded by `seed`, so they are the same however often a body is traced; tanh keeps carries
// bounded across iterations.
Array wrapped_segment(unsigned seed, Wrap wrap, const V& pool, const Inputs& in) {
  const std::int64_t b = in.x0.shape()[1];
  auto segment = [seed, &pool, &in](const V& extra) {
    std::mt19937 rng(seed);
    V local = pool;
    local.insert(local.end(), extra.begin(), extra.end());
    const int links = 2 + static_cast<int>(rng() % 3);
    for (int k = 0; k < links; ++k) local.push_back(random_step(rng, local, in));
    return local.back();
  };
  const Array& v = pool[seed % pool.size()];
  if (wrap == Wrap::StaticLoops) {
    switch (seed / 7 % 3) {
      case 0:  // fori_loop, reading the iteration index
        return lax::fori_loop(
            0, 1 + static_cast<int>(seed % 3),
            [&](const Array& i, const Array& c) {
              return np::tanh(segment({c})) + c * 0.5 + i.astype(DType::F32) * 0.125;
            },
            v);
      case 1: {  // scan over rows of w, broadcast into the carry; the rows' sums are stacked
        const std::int64_t t = std::min<std::int64_t>(b, 3);
        auto [c, ys] = lax::scan(
            [&](const Array& c, const Array& x) {
              Array r = np::tanh(segment({c + x}));
              return std::make_pair(r, np::sum(r, {0}));
            },
            v, lax::slice(in.w, {0, 0}, {t, b}), {.reverse = seed % 2 == 0});
        return c + np::mean(ys, {0}) * 0.5;
      }
      default: {  // scan over nothing with a pair of carries
        auto [c, ys] = lax::scan(
            [&](const std::pair<Array, Array>& c, const std::tuple<>&) {
              Array r = np::tanh(segment({c.first, c.second}));
              return std::make_pair(std::make_pair(r, c.first), np::max(r));
            },
            std::make_pair(v, pool.back()), lax::no_xs, {.length = 2});
        return c.first - c.second * 0.25 + np::sum(ys) * 0.1;
      }
    }
  }
  switch (seed % 3) {
    case 0:  // cond on a predicate computed from the data
      return lax::cond(
          np::sum(in.x0) > np::sum(in.x1), [&](const Array& c) { return segment({c}); },
          [](const Array& c) { return np::tanh(c) * 0.5; }, v);
    case 1: {  // switch_ on an index from the data, out of range on either side
      const Array index = np::floor(np::sum(in.row) * 2.0).astype(DType::I32);
      return lax::switch_(index,
                          std::make_tuple([&](const Array& c) { return segment({c}); },
                                          [](const Array& c) { return c * -1.0; },
                                          [&](const Array& c) { return c + in.x1; }),
                          v);
    }
    default: {  // a while loop of 1 to 3 iterations, decided by the data
      using State = std::pair<Array, Array>;
      const Array limit = 1 + (np::sum(in.x0) > 0.0).astype(DType::I32) +
                          (np::sum(in.row) > 0.0).astype(DType::I32);
      return lax::while_loop([&](const State& s) { return s.first < limit; },
                             [&](const State& s) {
                               return State{s.first + 1, np::tanh(segment({s.second}))};
                             },
                             State{Array::scalar_int(0), v})
          .second;
    }
  }
}

// Builds the program for `seed` from inputs x0, x1: f32[a,b], row: f32[b], w: f32[b,b].
// Deterministic in the seed, because the checker traces it twice. With a wrap, one link of the
// chain is a control-flow op running a few links of its own.
V random_program(unsigned seed, const V& in, Wrap wrap = Wrap::None) {
  std::mt19937 rng(seed);
  auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<unsigned>(n)); };
  const Inputs inputs{in[0], in[1], in[2], in[3]};
  V pool{in[0], in[1]};  // every value in the pool is f32[a,b]
  auto any = [&] { return pool[static_cast<std::size_t>(pick(static_cast<int>(pool.size())))]; };
  const int steps = 6 + pick(10);
  const int wrap_at = wrap == Wrap::None ? -1 : steps / 2;
  for (int s = 0; s < steps; ++s) {
    if (s == wrap_at) {
      pool.push_back(wrapped_segment(seed, wrap, pool, inputs));
      continue;
    }
    pool.push_back(random_step(rng, pool, inputs));
  }
  // The last value, plus two others, so some intermediates are outputs and multi-use.
  return V{pool.back(), any(), np::sum(any(), {0})};
}

// Ops of a graph and of the regions inside it, parameters left out.
int count_ops(const Graph& g) {
  int ops = 0;
  for (const auto& n : g.nodes) {
    ops += n.op != OpKind::Parameter;
    for (const Graph& region : n.regions) ops += count_ops(region);
  }
  return ops;
}

// Every third seed wraps a part of its chain in a static loop (fori_loop or scan), so
// fusion boundaries also land at loop bodies and at values the bodies close over.
Wrap static_wrap(unsigned seed) {
  return seed % 3 == 0 ? Wrap::StaticLoops : Wrap::None;
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
    const Wrap wrap = static_wrap(seed);
    auto fn = [seed, wrap](const V& xs) { return random_program(seed, xs, wrap); };
    EXPECT_EQ(check_against_interpreter(fn, inputs, 2e-4, 2e-4), "");
    // Fusion must actually happen: far fewer kernels than ops (a loop body's ops and kernels
    // both count).
    auto f = jit([&fn](const V& xs) { return fn(xs); });
    V args;
    for (const auto& h : inputs) args.push_back(Array::from_host(h));
    Lowered lowered = f.lower(args);
    const int ops = count_ops(lowered.graph());
    const auto& info = lowered.compile()->info();
    kernels_seen += static_cast<int>(info.kernels.size());
    EXPECT_LT(info.kernels.size(), static_cast<std::size_t>(ops)) << lowered.as_text();
  }
  EXPECT_GT(kernels_seen, 40);
}

// Chains with a part wrapped in cond, switch_ or a while loop: the branch taken and the trip
// count are decided on the device from the data. Smaller and fewer than above, to keep the
// file's run time.
TEST(RandomChains, ChainsWithDeviceDecidedControlFlowMatchTheInterpreter) {
  std::mt19937 shapes(7);
  for (unsigned seed = 101; seed <= 106; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    const std::int64_t a = 1 + static_cast<std::int64_t>(shapes() % 40);
    const std::int64_t b = 1 + static_cast<std::int64_t>(shapes() % 40);
    std::vector<HostArray> inputs{random_array(DType::F32, {a, b}, -2, 2, shapes),
                                  random_array(DType::F32, {a, b}, -2, 2, shapes),
                                  random_array(DType::F32, {b}, -2, 2, shapes),
                                  random_array(DType::F32, {b, b}, -1, 1, shapes)};
    auto fn = [seed](const V& xs) { return random_program(seed, xs, Wrap::DeviceDecided); };
    EXPECT_EQ(check_against_interpreter(fn, inputs, 2e-4, 2e-4), "");
  }
}

}  // namespace
}  // namespace weft
