// What the fusion planner groups together, and what buffers it leaves.
#include <gtest/gtest.h>
#include <set>

#include "weft/compile/fusion.h"
#include "weft/ir/text.h"
#include "weft/weft.h"

namespace weft {
namespace {

FusionPlan plan(const char* text) {
  return plan_fusion(parse_graph(text));
}

TEST(Fusion, SelectTrilIsOneLoopKernel) {
  FusionPlan p = plan(R"(
    func @select_tril(%0: i32[3,4]) -> (i32[3,4]) {
      %1 = iota[dimension=0] : i32[3,4]
      %2 = iota[dimension=1] : i32[3,4]
      %3 = gt %1, %2 : bool[3,4]
      %4 = constant[value=0] : i32[]
      %5 = broadcast_in_dim[dims=[]] %4 : i32[3,4]
      %6 = select %3, %0, %5 : i32[3,4]
      return %6
    })");
  ASSERT_EQ(p.groups.size(), 1u);
  EXPECT_EQ(p.groups[0].kind, FusionGroup::Kind::Loop);
  EXPECT_EQ(p.groups[0].members.size(), 6u);
  EXPECT_EQ(p.groups[0].inputs, std::vector<ValueId>{0});
}

TEST(Fusion, DeadCodeIsRemoved) {
  FusionPlan p = plan(R"(
    func @f(%0: f32[8]) -> (f32[8]) {
      %1 = exp %0 : f32[8]
      %2 = log %0 : f32[8]
      return %1
    })");
  for (const Node& n : p.graph.nodes) EXPECT_NE(n.op, OpKind::Log);
}

TEST(Fusion, ReductionsFuseTheirProducersAndConsumersReadTheirBuffer) {
  auto softmax = jit([](const Array& x) { return np::softmax(x, 1); });
  Array x = np::ones({4, 10});
  auto exe = softmax.lower(x).compile();
  const auto& kernels = exe->info().kernels;
  // max-reduce, sum-reduce (with exp fused in), then the normalising loop.
  ASSERT_EQ(kernels.size(), 3u);
  EXPECT_EQ(kernels[0].kind, "reduce");
  EXPECT_EQ(kernels[1].kind, "reduce");
  const auto& sum_ops = kernels[1].fused_ops;
  EXPECT_NE(std::find(sum_ops.begin(), sum_ops.end(), "exp"), sum_ops.end());
  EXPECT_EQ(kernels[2].kind, "loop");
  // Multi-output fusion: the sum kernel also writes exp(x - max), which the normalising loop
  // reads instead of computing exp again.
  const auto& loop_ops = kernels[2].fused_ops;
  EXPECT_EQ(std::find(loop_ops.begin(), loop_ops.end(), "exp"), loop_ops.end());
  EXPECT_EQ(exe->info().intermediate_buffers, 3);  // the two reduction results and the exp
}

TEST(Fusion, CostlyProducerOfAReductionIsItsSideOutput) {
  FusionPlan p = plan(R"(
    func @f(%0: f32[8,100]) -> (f32[8,100]) {
      %1 = exp %0 : f32[8,100]
      %2 = reduce_sum[axes=[1]] %1 : f32[8]
      %3 = broadcast_in_dim[dims=[0]] %2 : f32[8,100]
      %4 = div %1, %3 : f32[8,100]
      return %4
    })");
  ASSERT_EQ(p.groups.size(), 2u);
  EXPECT_EQ(p.groups[0].kind, FusionGroup::Kind::Reduce);
  EXPECT_EQ(p.groups[0].side_outputs, std::vector<ValueId>{1});
  EXPECT_TRUE(p.has_buffer[1]);
  // The loop reads the exp's buffer; only the reduction's kernel computes it.
  EXPECT_NE(std::find(p.groups[1].inputs.begin(), p.groups[1].inputs.end(), 1),
            p.groups[1].inputs.end());
  EXPECT_EQ(std::find(p.groups[1].members.begin(), p.groups[1].members.end(), 1),
            p.groups[1].members.end());
}

TEST(Fusion, CheapOrEarlierUsedProducersAreNotSideOutputs) {
  // A cheap producer is recomputed: writing and reading it back would cost more.
  FusionPlan cheap = plan(R"(
    func @f(%0: f32[8,100]) -> (f32[8,100]) {
      %1 = add %0, %0 : f32[8,100]
      %2 = reduce_sum[axes=[1]] %1 : f32[8]
      %3 = broadcast_in_dim[dims=[0]] %2 : f32[8,100]
      %4 = div %1, %3 : f32[8,100]
      return %4
    })");
  for (const FusionGroup& g : cheap.groups) EXPECT_TRUE(g.side_outputs.empty());
  // A kernel that runs before the reduction cannot read what the reduction writes.
  FusionPlan earlier = plan(R"(
    func @f(%0: f32[8,100]) -> (f32[8,100], f32[8]) {
      %1 = exp %0 : f32[8,100]
      %2 = mul %1, %1 : f32[8,100]
      %3 = reduce_sum[axes=[1]] %1 : f32[8]
      return %2, %3
    })");
  for (const FusionGroup& g : earlier.groups) EXPECT_TRUE(g.side_outputs.empty());
}

TEST(Fusion, LongElementwiseChainIsOneKernel) {
  auto chain = jit([](const Array& x, const Array& y) {
    Array t = x * 2.0 + y;
    t = np::tanh(t) - x;
    t = t * t + 1.0;
    return np::sqrt(t) / (y + 3.0);
  });
  Array x = np::ones({1000}), y = np::ones({1000});
  auto exe = chain.lower(x, y).compile();
  EXPECT_EQ(exe->info().kernels.size(), 1u);
  EXPECT_EQ(exe->info().intermediate_buffers, 0);
}

TEST(Fusion, ExpensiveSharedProducerIsMaterialisedOnce) {
  // `e` feeds two different reductions; recomputing it in both would double its cost.
  auto f = jit([](const Array& x) {
    Array e = np::exp(np::sin(np::exp(np::tanh(x)))) * np::cos(x) + np::sqrt(np::abs(x));
    return std::make_tuple(np::sum(e, {0}), np::max(e, {1}));
  });
  auto exe = f.lower(np::ones({16, 16})).compile();
  EXPECT_EQ(exe->info().kernels.size(), 3u);  // e, then the two reductions reading it
  EXPECT_EQ(exe->info().intermediate_buffers, 1);
}

TEST(Fusion, CheapSharedProducerIsDuplicated) {
  auto f = jit([](const Array& x) {
    Array t = x + 1.0;
    return std::make_tuple(np::sum(t, {0}), np::max(t, {0}));
  });
  auto exe = f.lower(np::ones({16, 16})).compile();
  EXPECT_EQ(exe->info().kernels.size(), 2u);
  EXPECT_EQ(exe->info().intermediate_buffers, 0);
}

// An associative scan's rounds read each round's results at two different indices (the next
// round's slices and the interleaving pads): fused whole, the code would double per round. The
// planner cuts such producers into buffers, so a long scan compiles in a few small kernels.
TEST(Fusion, ProducersReadAtManyIndicesAreCut) {
  auto scan = jit([](const Array& x) {
    const lax::AssociativeCombine add = [](const std::vector<Array>& a,
                                           const std::vector<Array>& b) {
      return std::vector<Array>{lax::add(a[0], b[0])};
    };
    return lax::associative_scan(add, {x})[0];
  });
  const FusionPlan p = plan_fusion(scan.lower(np::ones({4096})).graph());
  int cuts = 0;
  for (const FusionGroup& g : p.groups)
    cuts += g.why_buffer.find("read at many different indices") != std::string::npos;
  EXPECT_GT(cuts, 0);
  EXPECT_LT(p.groups.size(), 60u);
}

TEST(Fusion, DotOperandsAreBuffersAndDotsAreCanonical) {
  FusionPlan p = plan(R"(
    func @f(%0: f32[5,3], %1: f32[4,5]) -> (f32[3,4]) {
      %2 = dot_general[lhs_batch=[], lhs_contracting=[0], rhs_batch=[], rhs_contracting=[1]] %0, %1 : f32[3,4]
      return %2
    })");
  int dots = 0;
  for (const auto& g : p.groups) {
    if (g.kind != FusionGroup::Kind::Dot) continue;
    ++dots;
    const Node& d = p.graph.node(g.root);
    EXPECT_TRUE(is_canonical_dot(d));
    for (ValueId in : d.inputs) EXPECT_TRUE(p.has_buffer[in]);
  }
  EXPECT_EQ(dots, 1);
}

// A layer's input feeds its forward dot and its weight gradient's dot in the same arrangement
// ([1, rows, features]): it is arranged once, so its producer runs once.
TEST(Fusion, AnOperandTwoDotsReadAlikeIsArrangedOnce) {
  FusionPlan p = plan(R"(
    func @f(%0: f32[6,4], %1: f32[6,4], %2: f32[4,3], %3: f32[6,5]) -> (f32[6,3], f32[5,4]) {
      %4 = add %0, %1 : f32[6,4]
      %5 = dot_general[lhs_batch=[], lhs_contracting=[1], rhs_batch=[], rhs_contracting=[0]] %4, %2 : f32[6,3]
      %6 = dot_general[lhs_batch=[], lhs_contracting=[0], rhs_batch=[], rhs_contracting=[0]] %3, %4 : f32[5,4]
      return %5, %6
    })");
  std::set<ValueId> operands;
  int dots = 0;
  for (const auto& g : p.groups) {
    if (g.kind != FusionGroup::Kind::Dot) continue;
    ++dots;
    operands.insert(p.graph.node(g.root).inputs.begin(), p.graph.node(g.root).inputs.end());
  }
  EXPECT_EQ(dots, 2);
  EXPECT_EQ(operands.size(), 3u);  // %2, %3's transpose, and the one arrangement of %4
  int adds = 0;
  for (const auto& g : p.groups)
    for (ValueId m : g.members) adds += p.graph.node(m).op == OpKind::Add;
  EXPECT_EQ(adds, 1);
}

TEST(Fusion, ExpensiveProducerIsNotRecomputedPerBroadcastCopy) {
  auto f = jit([](const Array& v) {
    Array heavy = np::exp(np::sin(v)) * np::tanh(v);
    return np::broadcast_to(heavy, {512, 64});
  });
  auto exe = f.lower(np::ones({64})).compile();
  EXPECT_EQ(exe->info().kernels.size(), 2u);
}

}  // namespace
}  // namespace weft

namespace weft {
namespace {

TEST(Fusion, ReshapedParameterFeedsADotWithoutACopy) {
  auto f = jit([](const Array& x, const Array& w) { return np::matmul(x, w); });
  auto exe = f.lower(np::ones({8, 16}), np::ones({16, 4})).compile();
  ASSERT_EQ(exe->info().kernels.size(), 1u);
  EXPECT_EQ(exe->info().kernels[0].kind, "dot");
  EXPECT_EQ(exe->info().intermediate_buffers, 0);
}

}  // namespace
}  // namespace weft

namespace weft {
namespace {

// A weight's gradient as reverse mode writes it, (dY^T X)^T, runs as the dot X^T dY: no
// transposed copy of the result (the operand's transpose for the kernel's layout may stay).
TEST(Fusion, TransposedDotResultSwapsTheOperands) {
  FusionPlan p = plan(R"(
    func @f(%0: f32[5,3], %1: f32[5,4]) -> (f32[3,4]) {
      %2 = dot_general[lhs_batch=[], lhs_contracting=[0], rhs_batch=[], rhs_contracting=[0]] %1, %0 : f32[4,3]
      %3 = transpose[permutation=[1,0]] %2 : f32[3,4]
      return %3
    })");
  EXPECT_NE(p.graph.node(p.graph.outputs[0]).op, OpKind::Transpose);
  const Node* dot = nullptr;
  for (const Node& n : p.graph.nodes)
    if (n.op == OpKind::DotGeneral) dot = &n;
  ASSERT_NE(dot, nullptr);
  EXPECT_EQ(dot->shape, (Shape{1, 3, 4}));

  // Batched, on the device: out[b] = (g[b]^T x[b])^T = x[b]^T g[b], exact in small integers.
  const std::int64_t B = 2, K = 5, M = 3, N = 4;
  std::vector<float> xs(B * K * M), gs(B * K * N);
  for (std::size_t i = 0; i < xs.size(); ++i) xs[i] = float(int(i * 7 % 11) - 5);
  for (std::size_t i = 0; i < gs.size(); ++i) gs[i] = float(int(i * 5 % 9) - 4);
  auto f = jit([](const Array& x, const Array& g) {
    const Array d = lax::dot_general(
        g, x, {.lhs_contracting = {1}, .rhs_contracting = {1}, .lhs_batch = {0}, .rhs_batch = {0}});
    return np::transpose(d, {0, 2, 1});
  });
  const std::vector<float> got =
      f(Array::from_vector<float>({B, K, M}, xs), Array::from_vector<float>({B, K, N}, gs))
          .to_vector<float>();
  ASSERT_EQ(got.size(), std::size_t(B * M * N));
  for (std::int64_t b = 0; b < B; ++b)
    for (std::int64_t m = 0; m < M; ++m)
      for (std::int64_t n = 0; n < N; ++n) {
        float want = 0;
        for (std::int64_t k = 0; k < K; ++k)
          want += xs[(b * K + k) * M + m] * gs[(b * K + k) * N + n];
        EXPECT_EQ(got[(b * M + m) * N + n], want) << b << "," << m << "," << n;
      }
}

}  // namespace
}  // namespace weft
