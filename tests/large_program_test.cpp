// Programs far larger than anything hand-written: a 50,000-op chain and a 50,000-term fan-in
// must trace, plan, print, parse, interpret, generate code, build and run without deep
// recursion anywhere (the code generator once recursed per fused op and overflowed the stack
// at about 7,000), be split into kernels PoCL compiles in linear time, and match both the
// reference interpreter and a closed form computed here.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "support/test_support.h"
#include "weft/cache/process_cache.h"
#include "weft/compile/fusion.h"
#include "weft/interp/interpreter.h"
#include "weft/ir/text.h"
#include "weft/weft.h"

namespace weft {
namespace {

constexpr int kOps = 50'000;
// A multiple of the loop kernels' work-group size: one launch per kernel, no tail variant
// (which PoCL would compile separately, doubling the build time of every kernel).
constexpr std::int64_t kElements = 1024;

// These programs' persistent-cache entries would cost about half a minute at exit (PoCL
// compiles every kernel's generic work-group function while serialising the binary, which
// bench_large_program measures); nothing here is about the cache.
class LargeProgram : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    cache::CacheSettings settings = cache::ProcessCache::instance().settings();
    settings.enabled = false;
    cache::ProcessCache::instance().configure(settings);
  }
};

HostArray random_i32(std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<std::int32_t> values(-1'000'000, 1'000'000);
  HostArray a(DType::I32, {kElements});
  for (auto& v : a.view<std::int32_t>()) v = values(rng);
  return a;
}

// Wrap-around i32 arithmetic on the host, the closed forms' reference.
std::int32_t wrap(std::uint32_t v) {
  return static_cast<std::int32_t>(v);
}

// x*3, +12345, neg, ^0x5A5A5A5A, repeated: cheap ops no compiler can fold into fewer.
Array alternating_chain(const Array& x, int ops = kOps) {
  Array t = x;
  for (int i = 0; i < ops; ++i) {
    switch (i % 4) {
      case 0:
        t = t * 3;
        break;
      case 1:
        t = t + 12345;
        break;
      case 2:
        t = -t;
        break;
      default:
        t = t ^ 0x5A5A5A5A;
        break;
    }
  }
  return t;
}

std::int32_t alternating_chain_host(std::int32_t x, int ops) {
  auto t = static_cast<std::uint32_t>(x);
  for (int i = 0; i < ops; ++i) {
    switch (i % 4) {
      case 0:
        t *= 3u;
        break;
      case 1:
        t += 12345u;
        break;
      case 2:
        t = 0u - t;
        break;
      default:
        t ^= 0x5A5A5A5Au;
        break;
    }
  }
  return wrap(t);
}

// x + 0 + (x + 1) + ... + (x + kOps-1): kOps distinct adds of one input, folded into one sum.
Array fan_in(const Array& x) {
  Array sum = x;
  for (int i = 1; i < kOps; ++i) sum = sum + (x + i);
  return sum;
}

std::int32_t fan_in_host(std::int32_t x) {
  const auto n = static_cast<std::uint32_t>(kOps);
  return wrap(n * static_cast<std::uint32_t>(x) + n * (n - 1) / 2);
}

// Runs `fn` on the device and checks it against the interpreter and against `host`, element
// by element; returns the traced graph.
template <typename Fn, typename Host>
Graph run_and_check(const Fn& fn, Host host, std::uint32_t seed) {
  const HostArray in = random_i32(seed);
  auto jitted = jit([&](const Array& x) { return fn(x); }, {.name = "large"});
  const Array x = Array::from_host(in);
  const HostArray got = jitted(x).to_host();
  const Graph graph = jitted.lower(x).graph();
  const HostArray expected = interpret(graph, std::vector<HostArray>{in}).at(0);
  EXPECT_EQ(testing::compare_arrays(got, expected, 0, 0), "");
  HostArray closed_form(DType::I32, {kElements});
  for (std::int64_t i = 0; i < kElements; ++i)
    closed_form.view<std::int32_t>()[i] = host(in.view<std::int32_t>()[i]);
  EXPECT_EQ(testing::compare_arrays(got, closed_form, 0, 0), "");
  return graph;
}

// Every kernel within the size limit, and the cuts explained.
void expect_split_within_limit(const Graph& graph) {
  const FusionPlan plan = plan_fusion(graph);
  EXPECT_GT(plan.groups.size(), 10u);
  int cut = 0;
  for (const FusionGroup& group : plan.groups) {
    EXPECT_LE(group.size, kMaxKernelOps);
    EXPECT_FALSE(group.why_buffer.empty());
    cut += group.why_buffer.find("kernel size limit") != std::string::npos;
  }
  EXPECT_EQ(cut, static_cast<int>(plan.groups.size()) - 1);  // all but the output
}

TEST_F(LargeProgram, NegChainRunsOnTheDevice) {
  auto neg_chain = [](const Array& x) {
    Array t = x;
    for (int i = 0; i < kOps; ++i) t = -t;
    return t;
  };
  const Graph graph = run_and_check(
      neg_chain, [](std::int32_t x) { return x; }, 1);
  expect_split_within_limit(graph);
}

// The device runs of the chains cost about 0.1 s per kernel (PoCL's work-group compilation),
// so the non-foldable chain runs at a tenth of the length: ten kernels, each cut point a
// buffer the next kernel reads.
TEST_F(LargeProgram, AlternatingChainRunsOnTheDevice) {
  constexpr int kShortOps = kOps / 10;
  auto chain = [](const Array& x) { return alternating_chain(x, kShortOps); };
  const Graph graph = run_and_check(
      chain, [](std::int32_t x) { return alternating_chain_host(x, kShortOps); }, 2);
  EXPECT_GE(plan_fusion(graph).groups.size(), 5u);
}

TEST_F(LargeProgram, FanInRunsOnTheDevice) {
  const Graph graph = run_and_check(fan_in, fan_in_host, 3);
  expect_split_within_limit(graph);
}

// A reduction kernel holds several copies of the ops fused into it (codegen unrolls its
// loop), so the limit counts each copy and cuts its producers sooner.
TEST_F(LargeProgram, ReductionOfALongChainRunsOnTheDevice) {
  constexpr int kShortOps = 2'000;
  auto fn = [](const Array& x) {
    return np::sum(alternating_chain(x.reshape({32, 32}), kShortOps), {1});
  };
  const HostArray in = random_i32(6);
  auto jitted = jit(fn, {.name = "large_sum"});
  const Array x = Array::from_host(in);
  const HostArray got = jitted(x).to_host();
  const Graph graph = jitted.lower(x).graph();
  EXPECT_EQ(testing::compare_arrays(got, interpret(graph, std::vector<HostArray>{in}).at(0), 0, 0),
            "");
  for (std::int64_t row = 0; row < 32; ++row) {
    std::uint32_t sum = 0;
    for (std::int64_t col = 0; col < 32; ++col)
      sum += static_cast<std::uint32_t>(
          alternating_chain_host(in.view<std::int32_t>()[row * 32 + col], kShortOps));
    EXPECT_EQ(got.view<std::int32_t>()[row], wrap(sum)) << "row " << row;
  }
  const FusionPlan plan = plan_fusion(graph, {.reduction_body_copies = 9});
  ASSERT_EQ(plan.groups.back().kind, FusionGroup::Kind::Reduce);
  EXPECT_LE(plan.groups.back().size, kMaxKernelOps);
  for (const FusionGroup& group : plan.groups) EXPECT_LE(group.size, kMaxKernelOps);
}

TEST_F(LargeProgram, TextFormRoundTripsAndVerifies) {
  auto jitted = jit([](const Array& x) { return alternating_chain(x); }, {.name = "large"});
  const Graph graph = jitted.lower(Array::from_host(random_i32(4))).graph();
  EXPECT_NO_THROW(verify(graph));
  const std::string text = print_graph(graph);
  const Graph parsed = parse_graph(text);
  EXPECT_TRUE(parsed == graph);
  EXPECT_EQ(print_graph(parsed), text);
  // Dead-code elimination keeps every op of the chain and drops an unused one.
  Graph with_dead = graph;
  Node dead;
  dead.op = OpKind::Neg;
  dead.dtype = DType::I32;
  dead.shape = {kElements};
  dead.inputs = {with_dead.outputs[0]};
  with_dead.add(std::move(dead));
  verify(with_dead);
  EXPECT_EQ(eliminate_dead_code(with_dead).nodes.size(), graph.nodes.size());
}

// Without the limit the whole chain is one group: the planner's own walk is iterative too.
TEST_F(LargeProgram, PlannerHandlesOneHugeGroup) {
  auto jitted = jit([](const Array& x) { return alternating_chain(x); }, {.name = "large"});
  const Graph graph = jitted.lower(Array::from_host(random_i32(5))).graph();
  const FusionPlan plan = plan_fusion(graph, {.max_kernel_ops = 0});
  ASSERT_EQ(plan.groups.size(), 1u);
  EXPECT_EQ(plan.groups[0].why_buffer, "it is a graph output");
}

}  // namespace
}  // namespace weft
