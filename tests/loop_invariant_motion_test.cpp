// Loop-invariant code motion: what leaves while and scan bodies, what stays, and that the
// results stay those of the reference interpreter on the device.
#include <gtest/gtest.h>

#include "support/device_check.h"
#include "weft/compile/fusion.h"
#include "weft/control_flow.h"
#include "weft/interp/interpreter.h"
#include "weft/ir/text.h"
#include "weft/weft.h"

namespace weft {
namespace {

using Arrays = std::vector<Array>;

int count_ops(const Graph& g, OpKind op) {
  int n = 0;
  for (const Node& node : g.nodes) n += node.op == op ? 1 : 0;
  return n;
}

const Node& only_loop(const Graph& g) {
  for (const Node& n : g.nodes)
    if (n.op == OpKind::While || n.op == OpKind::Scan) return n;
  throw std::runtime_error("no loop");
}

// A scan over rows of %xs closing over %w: the transposed weight and the reduction of %w are
// the same in every iteration, the broadcast constant fuses for free, the dot reads the row.
constexpr const char* kScan = R"(
func @f(%c0: f32[4], %xs: f32[5,4], %w: f32[3,4]) -> (f32[4], f32[5,3]) {
  %c, %ys = scan[carries=1, length=5, reverse=0, xs=1] %c0, %xs, %w : f32[4], f32[5,3] {
    body(%i: i32[], %c1: f32[4], %x: f32[4], %w1: f32[3,4]) -> (f32[4], f32[3]) {
      %t = transpose[permutation=[1,0]] %w1 : f32[4,3]
      %x2 = reshape %x : f32[1,4]
      %d = dot_general[lhs_batch=[], lhs_contracting=[1], rhs_batch=[], rhs_contracting=[0]] %x2, %t : f32[1,3]
      %y = reshape %d : f32[3]
      %s = reduce_sum[axes=[0]] %w1 : f32[4]
      %one = constant[value=1.0] : f32[]
      %ones = broadcast_in_dim[dims=[]] %one : f32[4]
      %a = add %c1, %s : f32[4]
      %b = mul %a, %ones : f32[4]
      return %b, %y
    }
  }
  return %c, %ys
})";

TEST(LoopInvariantMotion, ScanBodyLosesWorkOnClosedOverValues) {
  const Graph before = parse_graph(kScan);
  const Graph after = hoist_loop_invariants(before);
  verify(after);
  const Node& loop = only_loop(after);
  const Graph& body = loop.regions[0];
  EXPECT_EQ(count_ops(body, OpKind::Transpose), 0) << print_graph(after);
  EXPECT_EQ(count_ops(body, OpKind::ReduceSum), 0) << print_graph(after);
  EXPECT_EQ(count_ops(body, OpKind::DotGeneral), 1);      // reads the row: stays
  EXPECT_EQ(count_ops(body, OpKind::BroadcastInDim), 1);  // free: stays
  EXPECT_EQ(count_ops(after, OpKind::Transpose), 1);
  EXPECT_EQ(count_ops(after, OpKind::ReduceSum), 1);
  // Two values moved: two more operands and body parameters.
  EXPECT_EQ(loop.inputs.size(), 5u);
  EXPECT_EQ(body.params.size(), 6u);

  // The same results.
  std::mt19937 rng(7);
  const std::vector<HostArray> in = {testing::random_array(DType::F32, {4}, -1, 1, rng),
                                     testing::random_array(DType::F32, {5, 4}, -1, 1, rng),
                                     testing::random_array(DType::F32, {3, 4}, -1, 1, rng)};
  const auto expected = interpret(before, in), got = interpret(after, in);
  ASSERT_EQ(expected.size(), got.size());
  for (std::size_t k = 0; k < got.size(); ++k)
    EXPECT_EQ(got[k].to_vector<float>(), expected[k].to_vector<float>()) << k;
}

// A while loop whose carry %w comes back unchanged: exp of it moves, and the condition region
// gains the parameter too.
constexpr const char* kWhile = R"(
func @f(%n: i32[], %v: f32[8], %w: f32[8]) -> (i32[], f32[8], f32[8]) {
  %r0, %r1, %r2 = while[carries=3] %n, %v, %w : i32[], f32[8], f32[8] {
    cond(%a: i32[], %b: f32[8], %c: f32[8]) -> (bool[]) {
      %zero = constant[value=0] : i32[]
      %p = gt %a, %zero : bool[]
      return %p
    }
    body(%a: i32[], %b: f32[8], %c: f32[8]) -> (i32[], f32[8], f32[8]) {
      %one = constant[value=1] : i32[]
      %a2 = sub %a, %one : i32[]
      %e = exp %c : f32[8]
      %b2 = add %b, %e : f32[8]
      return %a2, %b2, %c
    }
  }
  return %r0, %r1, %r2
})";

TEST(LoopInvariantMotion, WhileBodyLosesWorkOnUnchangedCarries) {
  const Graph before = parse_graph(kWhile);
  const Graph after = hoist_loop_invariants(before);
  verify(after);
  const Node& loop = only_loop(after);
  EXPECT_EQ(count_ops(loop.regions[1], OpKind::Exp), 0) << print_graph(after);
  EXPECT_EQ(count_ops(after, OpKind::Exp), 1);
  EXPECT_EQ(loop.regions[0].params.size(), 4u);
  EXPECT_EQ(loop.regions[1].params.size(), 4u);
  for (const std::int32_t trips : {0, 3}) {
    std::mt19937 rng(11);
    const std::vector<HostArray> in = {HostArray::from<std::int32_t>({}, {trips}),
                                       testing::random_array(DType::F32, {8}, -1, 1, rng),
                                       testing::random_array(DType::F32, {8}, -1, 1, rng)};
    const auto expected = interpret(before, in), got = interpret(after, in);
    for (std::size_t k = 1; k < got.size(); ++k)
      EXPECT_EQ(got[k].to_vector<float>(), expected[k].to_vector<float>()) << trips << " " << k;
  }
}

TEST(LoopInvariantMotion, ConstantsAndVaryingWorkStay) {
  // Only constants and the carry: nothing to move.
  const Graph g = parse_graph(R"(
    func @f(%c0: f32[4]) -> (f32[4]) {
      %c = scan[carries=1, length=3, reverse=0, xs=0] %c0 : f32[4] {
        body(%i: i32[], %c1: f32[4]) -> (f32[4]) {
          %k = constant[value=2.0] : f32[]
          %two = broadcast_in_dim[dims=[]] %k : f32[4]
          %e = exp %two : f32[4]
          %m = mul %c1, %e : f32[4]
          return %m
        }
      }
      return %c
    })");
  const Graph after = hoist_loop_invariants(g);
  EXPECT_EQ(after, g) << print_graph(after);
}

// On the device, through jit: a scan, a fori_loop and a while loop whose bodies read a closed-over
// matrix through a transpose, a reduction and a dot, checked against the interpreter.
TEST(LoopInvariantMotion, DeviceResultsMatchTheInterpreter) {
  auto fn = [](const Arrays& in) {
    const Array& w = in[1];
    auto [c, ys] = lax::scan(
        [&](const Array& carry, const Array& x) {
          const Array y = np::matmul(x, np::transpose(w, {1, 0})) + np::sum(w, {1});
          return std::make_pair(carry * 0.5 + np::tanh(y), y);
        },
        np::zeros({6}), in[0]);
    const Array f = lax::fori_loop(
        0, 4,
        [&](const Array&, const Array& v) {
          return np::tanh(np::matmul(w, v) + np::sum(np::exp(w), {0}));
        },
        in[2]);
    // A while loop with a trip count read on the device.
    const auto [n, v] =
        lax::while_loop([](const std::pair<Array, Array>& s) { return s.first < 3; },
                        [&](const std::pair<Array, Array>& s) {
                          return std::make_pair(s.first + 1, s.second + np::sum(np::tanh(w), {1}));
                        },
                        std::make_pair(Array::scalar_int(0), in[2]));
    return Arrays{c, ys, f, n, v};
  };
  std::mt19937 rng(3);
  EXPECT_EQ(
      testing::check_against_interpreter(fn,
                                         {testing::random_array(DType::F32, {9, 6}, -1, 1, rng),
                                          testing::random_array(DType::F32, {6, 6}, -1, 1, rng),
                                          testing::random_array(DType::F32, {6}, -1, 1, rng)},
                                         1e-4, 1e-5),
      "");
}

}  // namespace
}  // namespace weft
