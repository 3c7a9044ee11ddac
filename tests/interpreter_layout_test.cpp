// The reference interpreter: layout ops, reductions and dot_general. Expected values are
// computed by hand or with independent loops, never with the interpreter's own helpers.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <tuple>

#include "support/interp_test_util.h"
#include "weft/error.h"

namespace weft {
namespace {

using namespace weft::testing;

// ---------------------------------------------------------------------------------------------
// Layout

TEST(Interpreter, BroadcastInDim) {
  EXPECT_ARRAY_EQ(run_op(OpKind::BroadcastInDim, DType::I32, {2, 3}, {arr<std::int32_t>({1, 2, 3})},
                         Attrs{{"dims", I64s{1}}}),
                  arr<std::int32_t>({1, 2, 3, 1, 2, 3}, {2, 3}));
  EXPECT_ARRAY_EQ(run_op(OpKind::BroadcastInDim, DType::I32, {2, 3}, {arr<std::int32_t>({1, 2})},
                         Attrs{{"dims", I64s{0}}}),
                  arr<std::int32_t>({1, 1, 1, 2, 2, 2}, {2, 3}));
  // An extent-1 operand axis repeats along its result axis.
  EXPECT_ARRAY_EQ(run_op(OpKind::BroadcastInDim, DType::F32, {3, 2, 2},
                         {arr<float>({1, 2, 3}, {3, 1})}, Attrs{{"dims", I64s{0, 2}}}),
                  arr<float>({1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3}, {3, 2, 2}));
  EXPECT_ARRAY_EQ(
      run_op(OpKind::BroadcastInDim, DType::Bool, {2, 2}, {scalar(true)}, Attrs{{"dims", I64s{}}}),
      arr<bool>({true, true, true, true}, {2, 2}));
  EXPECT_ARRAY_EQ(run_op(OpKind::BroadcastInDim, DType::F32, {0, 3}, {arr<float>({1, 2, 3})},
                         Attrs{{"dims", I64s{1}}}),
                  HostArray(DType::F32, {0, 3}));
}

TEST(Interpreter, ReshapeAndTranspose) {
  EXPECT_ARRAY_EQ(
      run_op(OpKind::Reshape, DType::I64, {3, 2}, {arr<std::int64_t>({1, 2, 3, 4, 5, 6}, {2, 3})}),
      arr<std::int64_t>({1, 2, 3, 4, 5, 6}, {3, 2}));
  std::vector<float> in(24);
  for (int k = 0; k < 24; ++k) in[k] = static_cast<float>(k);
  // Result axis k is operand axis permutation[k]: out[c][a][b] = in[a][b][c].
  std::vector<float> expected(24);
  for (int a = 0; a < 2; ++a)
    for (int b = 0; b < 3; ++b)
      for (int c = 0; c < 4; ++c) expected[c * 6 + a * 3 + b] = in[a * 12 + b * 4 + c];
  EXPECT_ARRAY_EQ(run_op(OpKind::Transpose, DType::F32, {4, 2, 3}, {arr(in, {2, 3, 4})},
                         Attrs{{"permutation", I64s{2, 0, 1}}}),
                  arr(expected, {4, 2, 3}));
  EXPECT_ARRAY_EQ(run_op(OpKind::Transpose, DType::F32, {3, 0}, {HostArray(DType::F32, {0, 3})},
                         Attrs{{"permutation", I64s{1, 0}}}),
                  HostArray(DType::F32, {3, 0}));
}

TEST(Interpreter, Slice) {
  std::vector<std::int32_t> in(20);
  for (int k = 0; k < 20; ++k) in[k] = k;
  const Attrs attrs{{"start", I64s{1, 0}}, {"limit", I64s{4, 5}}, {"stride", I64s{2, 2}}};
  EXPECT_ARRAY_EQ(run_op(OpKind::Slice, DType::I32, {2, 3}, {arr(in, {4, 5})}, attrs),
                  arr<std::int32_t>({5, 7, 9, 15, 17, 19}, {2, 3}));
  const Attrs empty{{"start", I64s{2}}, {"limit", I64s{2}}, {"stride", I64s{1}}};
  EXPECT_ARRAY_EQ(run_op(OpKind::Slice, DType::I32, {0}, {arr<std::int32_t>({1, 2, 3})}, empty),
                  HostArray(DType::I32, {0}));
}

TEST(Interpreter, DynamicSliceClampsStarts) {
  const HostArray x = arr<float>({0, 1, 2, 3, 4});
  const Attrs size2{{"sizes", I64s{2}}};
  auto ds = [&](HostArray start) {
    return run_op(OpKind::DynamicSlice, DType::F32, {2}, {x, start}, size2);
  };
  EXPECT_ARRAY_EQ(ds(scalar<std::int32_t>(1)), arr<float>({1, 2}));
  EXPECT_ARRAY_EQ(ds(scalar<std::int32_t>(4)), arr<float>({3, 4}));
  EXPECT_ARRAY_EQ(ds(scalar<std::int32_t>(-2)), arr<float>({0, 1}));
  EXPECT_ARRAY_EQ(ds(scalar<std::int64_t>(kI64Max)), arr<float>({3, 4}));
  EXPECT_ARRAY_EQ(ds(scalar<std::int64_t>(kI64Min)), arr<float>({0, 1}));
  // u32 starts are unsigned: 0xFFFFFFFF is large, not -1.
  EXPECT_ARRAY_EQ(ds(scalar<std::uint32_t>(kU32Max)), arr<float>({3, 4}));
  std::vector<std::int32_t> m(12);
  for (int k = 0; k < 12; ++k) m[k] = k;
  EXPECT_ARRAY_EQ(run_op(OpKind::DynamicSlice, DType::I32, {2, 2},
                         {arr(m, {3, 4}), scalar<std::int32_t>(2), scalar<std::uint32_t>(1)},
                         Attrs{{"sizes", I64s{2, 2}}}),
                  arr<std::int32_t>({5, 6, 9, 10}, {2, 2}));
}

TEST(Interpreter, DynamicUpdateSliceClampsStarts) {
  const HostArray x = arr<std::int32_t>({0, 0, 0, 0, 0, 0, 0, 0, 0}, {3, 3});
  const HostArray u = arr<std::int32_t>({1, 2, 3, 4}, {2, 2});
  auto dus = [&](std::int32_t r, std::int64_t c) {
    return run_op(OpKind::DynamicUpdateSlice, DType::I32, {3, 3}, {x, u, scalar(r), scalar(c)});
  };
  EXPECT_ARRAY_EQ(dus(0, 1), arr<std::int32_t>({0, 1, 2, 0, 3, 4, 0, 0, 0}, {3, 3}));
  EXPECT_ARRAY_EQ(dus(5, -3), arr<std::int32_t>({0, 0, 0, 1, 2, 0, 3, 4, 0}, {3, 3}));
  EXPECT_ARRAY_EQ(
      run_op(OpKind::DynamicUpdateSlice, DType::F32, {3},
             {arr<float>({1, 2, 3}), HostArray(DType::F32, {0}), scalar<std::int32_t>(2)}),
      arr<float>({1, 2, 3}));
}

TEST(Interpreter, Concatenate) {
  EXPECT_ARRAY_EQ(run_op(OpKind::Concatenate, DType::I32, {2, 3},
                         {arr<std::int32_t>({1, 2}, {2, 1}), HostArray(DType::I32, {2, 0}),
                          arr<std::int32_t>({3, 4, 5, 6}, {2, 2})},
                         Attrs{{"dimension", std::int64_t{1}}}),
                  arr<std::int32_t>({1, 3, 4, 2, 5, 6}, {2, 3}));
  EXPECT_ARRAY_EQ(
      run_op(OpKind::Concatenate, DType::Bool, {3}, {arr<bool>({true}), arr<bool>({false, true})},
             Attrs{{"dimension", std::int64_t{0}}}),
      arr<bool>({true, false, true}));
  EXPECT_ARRAY_EQ(run_op(OpKind::Concatenate, DType::F32, {3, 2},
                         {arr<float>({1, 2}, {1, 2}), arr<float>({3, 4, 5, 6}, {2, 2})},
                         Attrs{{"dimension", std::int64_t{0}}}),
                  arr<float>({1, 2, 3, 4, 5, 6}, {3, 2}));
}

TEST(Interpreter, PadWithInteriorAndNegativeEdges) {
  const HostArray x = arr<float>({1, 2, 3});
  auto pad1 = [&](std::int64_t lo, std::int64_t hi, std::int64_t in, std::int64_t n) {
    return run_op(OpKind::Pad, DType::F32, {n}, {x, scalar(9.0f)},
                  Attrs{{"low", I64s{lo}}, {"high", I64s{hi}}, {"interior", I64s{in}}});
  };
  EXPECT_ARRAY_EQ(pad1(1, 2, 1, 8), arr<float>({9, 1, 9, 2, 9, 3, 9, 9}));
  // Negative low/high crop: [1 9 2 9 3] loses one element at each end.
  EXPECT_ARRAY_EQ(pad1(-1, -1, 1, 3), arr<float>({9, 2, 9}));
  EXPECT_ARRAY_EQ(pad1(-2, 1, 0, 2), arr<float>({3, 9}));
  EXPECT_ARRAY_EQ(pad1(-3, 0, 0, 0), HostArray(DType::F32, {0}));
  // 2-D: rows padded low 1; columns interior 1, then high 1 or cropped by high -1.
  const HostArray m = arr<std::int32_t>({1, 2, 3, 4}, {2, 2});
  EXPECT_ARRAY_EQ(
      run_op(OpKind::Pad, DType::I32, {3, 4}, {m, scalar<std::int32_t>(0)},
             Attrs{{"low", I64s{1, 0}}, {"high", I64s{0, 1}}, {"interior", I64s{0, 1}}}),
      arr<std::int32_t>({0, 0, 0, 0, 1, 0, 2, 0, 3, 0, 4, 0}, {3, 4}));
  EXPECT_ARRAY_EQ(
      run_op(OpKind::Pad, DType::I32, {3, 2}, {m, scalar<std::int32_t>(-1)},
             Attrs{{"low", I64s{1, 0}}, {"high", I64s{0, -1}}, {"interior", I64s{0, 1}}}),
      arr<std::int32_t>({-1, -1, 1, -1, 3, -1}, {3, 2}));
  EXPECT_ARRAY_EQ(
      run_op(OpKind::Pad, DType::I32, {2}, {HostArray(DType::I32, {0}), scalar<std::int32_t>(5)},
             Attrs{{"low", I64s{1}}, {"high", I64s{1}}, {"interior", I64s{3}}}),
      arr<std::int32_t>({5, 5}));
}

// ---------------------------------------------------------------------------------------------
// Reductions

HostArray reduce(OpKind op, DType dtype, Shape shape, const HostArray& x, I64s axes) {
  return run_op(op, dtype, shape, {x}, Attrs{{"axes", axes}});
}

TEST(Interpreter, ReduceOverOneAxis) {
  const HostArray x = arr<float>({1, 2, 3, 4, 5, 6}, {2, 3});
  EXPECT_ARRAY_EQ(reduce(OpKind::ReduceSum, DType::F32, {2}, x, {1}), arr<float>({6, 15}));
  EXPECT_ARRAY_EQ(reduce(OpKind::ReduceSum, DType::F32, {3}, x, {0}), arr<float>({5, 7, 9}));
  EXPECT_ARRAY_EQ(reduce(OpKind::ReduceProd, DType::F32, {2}, x, {1}), arr<float>({6, 120}));
  EXPECT_ARRAY_EQ(reduce(OpKind::ReduceMax, DType::F32, {3}, x, {0}), arr<float>({4, 5, 6}));
  EXPECT_ARRAY_EQ(reduce(OpKind::ReduceMin, DType::F32, {2}, x, {1}), arr<float>({1, 4}));
  EXPECT_ARRAY_EQ(reduce(OpKind::ReduceSum, DType::F32, {}, x, {0, 1}), scalar(21.0f));
  EXPECT_ARRAY_EQ(reduce(OpKind::ReduceSum, DType::F32, {2, 3}, x, {}), x);
}

TEST(Interpreter, ReduceOverSeveralAxes) {
  std::vector<std::int32_t> in(24);
  for (int k = 0; k < 24; ++k) in[k] = (k * 7) % 11 - 5;
  std::vector<std::int32_t> sum(3, 0), mx(3, kI32Min), mn(3, kI32Max);
  for (int a = 0; a < 2; ++a)
    for (int b = 0; b < 3; ++b)
      for (int c = 0; c < 4; ++c) {
        const std::int32_t v = in[a * 12 + b * 4 + c];
        sum[b] += v;
        mx[b] = std::max(mx[b], v);
        mn[b] = std::min(mn[b], v);
      }
  const HostArray x = arr(in, {2, 3, 4});
  EXPECT_ARRAY_EQ(reduce(OpKind::ReduceSum, DType::I32, {3}, x, {0, 2}), arr(sum));
  EXPECT_ARRAY_EQ(reduce(OpKind::ReduceMax, DType::I32, {3}, x, {0, 2}), arr(mx));
  EXPECT_ARRAY_EQ(reduce(OpKind::ReduceMin, DType::I32, {3}, x, {0, 2}), arr(mn));
}

TEST(Interpreter, ReduceEmptyGivesIdentities) {
  const HostArray f = HostArray(DType::F32, {0, 2});
  EXPECT_ARRAY_EQ(reduce(OpKind::ReduceSum, DType::F32, {2}, f, {0}), arr<float>({0, 0}));
  EXPECT_ARRAY_EQ(reduce(OpKind::ReduceProd, DType::F32, {2}, f, {0}), arr<float>({1, 1}));
  EXPECT_ARRAY_EQ(reduce(OpKind::ReduceMax, DType::F32, {2}, f, {0}),
                  arr<float>({-INFINITY, -INFINITY}));
  EXPECT_ARRAY_EQ(reduce(OpKind::ReduceMin, DType::F32, {2}, f, {0}),
                  arr<float>({INFINITY, INFINITY}));
  EXPECT_ARRAY_EQ(reduce(OpKind::ReduceMax, DType::I32, {}, HostArray(DType::I32, {0}), {0}),
                  scalar(kI32Min));
  EXPECT_ARRAY_EQ(reduce(OpKind::ReduceMin, DType::I64, {}, HostArray(DType::I64, {0}), {0}),
                  scalar(kI64Max));
  EXPECT_ARRAY_EQ(reduce(OpKind::ReduceMax, DType::U32, {}, HostArray(DType::U32, {0}), {0}),
                  scalar(0u));
  EXPECT_ARRAY_EQ(reduce(OpKind::ReduceMin, DType::U32, {}, HostArray(DType::U32, {0}), {0}),
                  scalar(kU32Max));
  EXPECT_ARRAY_EQ(reduce(OpKind::ReduceProd, DType::I32, {}, HostArray(DType::I32, {0}), {0}),
                  scalar(1));
  EXPECT_ARRAY_EQ(reduce(OpKind::ReduceSum, DType::F32, {0}, f, {1}), HostArray(DType::F32, {0}));
}

TEST(Interpreter, ReduceFloatSemantics) {
  // Accumulated in double and rounded once: an f32 running sum would lose the 1.
  EXPECT_ARRAY_EQ(reduce(OpKind::ReduceSum, DType::F32, {}, arr<float>({1e8f, 1, -1e8f}), {0}),
                  scalar(1.0f));
  // The f32 intermediate 1e30f * 1e30f would overflow to inf.
  const float big = 1e30f, tiny = 1e-30f;
  EXPECT_ARRAY_EQ(reduce(OpKind::ReduceProd, DType::F32, {}, arr<float>({big, big, tiny}), {0}),
                  scalar(static_cast<float>(static_cast<double>(big) * big * tiny)));
  const HostArray x = arr<double>({1, kNaN, 3, 4, 5, 6}, {2, 3});
  EXPECT_ARRAY_EQ(reduce(OpKind::ReduceMax, DType::F64, {2}, x, {1}), arr<double>({kNaN, 6}));
  EXPECT_ARRAY_EQ(reduce(OpKind::ReduceMin, DType::F64, {2}, x, {1}), arr<double>({kNaN, 4}));
  EXPECT_ARRAY_EQ(reduce(OpKind::ReduceSum, DType::F64, {3}, x, {0}), arr<double>({5, kNaN, 9}));
}

TEST(Interpreter, ReduceIntegersWrap) {
  EXPECT_ARRAY_EQ(
      reduce(OpKind::ReduceSum, DType::I32, {}, arr<std::int32_t>({kI32Max, 1, 1}), {0}),
      scalar(kI32Min + 1));
  EXPECT_ARRAY_EQ(reduce(OpKind::ReduceSum, DType::U32, {}, arr<std::uint32_t>({kU32Max, 2}), {0}),
                  scalar(1u));
  EXPECT_ARRAY_EQ(
      reduce(OpKind::ReduceProd, DType::I32, {}, arr<std::int32_t>({65536, 65536, 3}), {0}),
      scalar(0));
  EXPECT_ARRAY_EQ(
      reduce(OpKind::ReduceMax, DType::U32, {}, arr<std::uint32_t>({1, kU32Max, 7}), {0}),
      scalar(kU32Max));
}

TEST(Interpreter, ArgMaxArgMin) {
  // Ties: the first occurrence wins.
  const HostArray x = arr<float>({3, 7, 7, 1, 1, 5}, {2, 3});
  EXPECT_ARRAY_EQ(reduce(OpKind::ArgMax, DType::I32, {2}, x, {1}), arr<std::int32_t>({1, 2}));
  EXPECT_ARRAY_EQ(reduce(OpKind::ArgMin, DType::I64, {2}, x, {1}), arr<std::int64_t>({0, 0}));
  EXPECT_ARRAY_EQ(reduce(OpKind::ArgMax, DType::I32, {3}, x, {0}), arr<std::int32_t>({0, 0, 0}));
  EXPECT_ARRAY_EQ(reduce(OpKind::ArgMin, DType::I32, {3}, x, {0}), arr<std::int32_t>({1, 1, 1}));
  // Several axes: the row-major index within the reduced [2,3] block.
  EXPECT_ARRAY_EQ(reduce(OpKind::ArgMax, DType::I32, {}, x, {0, 1}), scalar(1));
  EXPECT_ARRAY_EQ(reduce(OpKind::ArgMin, DType::I32, {}, x, {0, 1}), scalar(3));
  // NaN: the first NaN's index, for both.
  const HostArray n = arr<double>({1, kNaN, 9, kNaN});
  EXPECT_ARRAY_EQ(reduce(OpKind::ArgMax, DType::I32, {}, n, {0}), scalar(1));
  EXPECT_ARRAY_EQ(reduce(OpKind::ArgMin, DType::I32, {}, n, {0}), scalar(1));
  // Reduced axes 0 and 2 of [2,3,2]: index = a * 2 + c for each b.
  std::vector<std::int32_t> in(12);
  for (int k = 0; k < 12; ++k) in[k] = (k * 5) % 7;
  std::vector<std::int64_t> expected(3);
  for (int b = 0; b < 3; ++b) {
    int best = -1, at = 0;
    for (int a = 0; a < 2; ++a)
      for (int c = 0; c < 2; ++c)
        if (in[a * 6 + b * 2 + c] > best) best = in[a * 6 + b * 2 + c], at = a * 2 + c;
    expected[b] = at;
  }
  EXPECT_ARRAY_EQ(reduce(OpKind::ArgMax, DType::I64, {3}, arr(in, {2, 3, 2}), {0, 2}),
                  arr(expected));
  EXPECT_ARRAY_EQ(
      reduce(OpKind::ArgMin, DType::I32, {}, arr<std::uint32_t>({5, kU32Max, 0, 0}), {0}),
      scalar(2));
}

// ---------------------------------------------------------------------------------------------
// dot_general

Attrs dot_attrs(I64s lc, I64s rc, I64s lb, I64s rb) {
  return Attrs{
      {"lhs_contracting", lc}, {"rhs_contracting", rc}, {"lhs_batch", lb}, {"rhs_batch", rb}};
}

TEST(Interpreter, DotMatmul) {
  const HostArray a = arr<float>({1, 2, 3, 4, 5, 6}, {2, 3});
  const HostArray b = arr<float>({7, 8, 9, 10, 11, 12}, {3, 2});
  EXPECT_ARRAY_EQ(
      run_op(OpKind::DotGeneral, DType::F32, {2, 2}, {a, b}, dot_attrs({1}, {0}, {}, {})),
      arr<float>({58, 64, 139, 154}, {2, 2}));
  // Contracting lhs axis 0 gives a^T-like products: result [3, 3].
  EXPECT_ARRAY_EQ(
      run_op(OpKind::DotGeneral, DType::F32, {3, 3}, {a, a}, dot_attrs({0}, {0}, {}, {})),
      arr<float>({17, 22, 27, 22, 29, 36, 27, 36, 45}, {3, 3}));
  // No contraction: the outer product.
  EXPECT_ARRAY_EQ(
      run_op(OpKind::DotGeneral, DType::I32, {2, 3},
             {arr<std::int32_t>({1, 2}), arr<std::int32_t>({3, 4, 5})}, dot_attrs({}, {}, {}, {})),
      arr<std::int32_t>({3, 4, 5, 6, 8, 10}, {2, 3}));
  // Accumulated in double, rounded once.
  EXPECT_ARRAY_EQ(
      run_op(OpKind::DotGeneral, DType::F32, {},
             {arr<float>({1e8f, 1, -1e8f}), arr<float>({1, 1, 1})}, dot_attrs({0}, {0}, {}, {})),
      scalar(1.0f));
  // Integers wrap.
  EXPECT_ARRAY_EQ(run_op(OpKind::DotGeneral, DType::I32, {},
                         {arr<std::int32_t>({65536, kI32Max}), arr<std::int32_t>({65536, 2})},
                         dot_attrs({0}, {0}, {}, {})),
                  scalar(-2));
  // An empty contraction gives zeros.
  EXPECT_ARRAY_EQ(run_op(OpKind::DotGeneral, DType::F32, {2, 2},
                         {HostArray(DType::F32, {2, 0}), HostArray(DType::F32, {0, 2})},
                         dot_attrs({1}, {0}, {}, {})),
                  arr<float>({0, 0, 0, 0}, {2, 2}));
}

// Every output's sum runs over k in order, in double, rounded once to f32: at sizes that fill
// the interpreter's 4x4 register blocks, leave edges of 1-3 rows and columns, or are all edge,
// each element equals an independent loop's bit for bit (values that round differently when
// summed in another order).
TEST(Interpreter, DotSumsInOrderInDoubleAtEverySize) {
  for (const auto& [m, depth, n] :
       {std::tuple{4, 7, 4}, std::tuple{9, 5, 11}, std::tuple{3, 33, 2}, std::tuple{8, 1, 13},
        std::tuple{1, 64, 1}, std::tuple{2, 3, 8}, std::tuple{4, 6, 8}, std::tuple{7, 9, 19},
        std::tuple{12, 2, 16},
        // Large enough that its rows are split over threads (where the machine has cores).
        std::tuple{203, 97, 113}}) {
    SCOPED_TRACE("m " + std::to_string(m) + " depth " + std::to_string(depth) + " n " +
                 std::to_string(n));
    std::vector<float> l(static_cast<std::size_t>(2 * m * depth)),
        r(static_cast<std::size_t>(2 * depth * n));
    for (std::size_t k = 0; k < l.size(); ++k)
      l[k] = std::ldexp(static_cast<float>((k * 2654435761u) % 2001) - 1000.0f, (k % 5) * 7 - 12);
    for (std::size_t k = 0; k < r.size(); ++k)
      r[k] = static_cast<float>((k * 40503u) % 997) / 97.0f - 5.0f;
    std::vector<float> expected(static_cast<std::size_t>(2 * m * n));
    for (int b = 0; b < 2; ++b)
      for (int i = 0; i < m; ++i)
        for (int j = 0; j < n; ++j) {
          double sum = 0;
          for (int k = 0; k < depth; ++k)
            sum += static_cast<double>(l[(b * m + i) * depth + k]) * r[(b * depth + k) * n + j];
          expected[(b * m + i) * n + j] = static_cast<float>(sum);
        }
    EXPECT_ARRAY_EQ(
        run_op(OpKind::DotGeneral, DType::F32, {2, m, n},
               {arr(l, {2, m, depth}), arr(r, {2, depth, n})}, dot_attrs({2}, {1}, {0}, {0})),
        arr(expected, {2, m, n}));
  }
}

TEST(Interpreter, DotBatchedWithNonTrailingContraction) {
  // lhs [K=3, B=2, M=4] contracts axis 0, batches axis 1; rhs [B=2, N=5, K=3] contracts axis
  // 2, batches axis 0. Result [B, M, N].
  std::vector<std::int64_t> l(24), r(30);
  for (int k = 0; k < 24; ++k) l[k] = (k * 3) % 7 - 3;
  for (int k = 0; k < 30; ++k) r[k] = (k * 5) % 11 - 5;
  std::vector<std::int64_t> expected(40, 0);
  for (int b = 0; b < 2; ++b)
    for (int m = 0; m < 4; ++m)
      for (int n = 0; n < 5; ++n)
        for (int k = 0; k < 3; ++k)
          expected[(b * 4 + m) * 5 + n] += l[k * 8 + b * 4 + m] * r[b * 15 + n * 3 + k];
  EXPECT_ARRAY_EQ(run_op(OpKind::DotGeneral, DType::I64, {2, 4, 5},
                         {arr(l, {3, 2, 4}), arr(r, {2, 5, 3})}, dot_attrs({0}, {2}, {1}, {0})),
                  arr(expected, {2, 4, 5}));
}

TEST(Interpreter, DotPairsContractingAxesInListOrder) {
  // lhs [P=2, Q=3, M=2] contracts (2, 0) with rhs [M=2, P=2, N=2] axes (0, 1); free: Q, N.
  std::vector<double> l(12), r(8);
  for (int k = 0; k < 12; ++k) l[k] = k + 1;
  for (int k = 0; k < 8; ++k) r[k] = 0.5 * k - 1;
  std::vector<double> expected(6, 0.0);
  for (int q = 0; q < 3; ++q)
    for (int n = 0; n < 2; ++n)
      for (int p = 0; p < 2; ++p)
        for (int m = 0; m < 2; ++m)
          expected[q * 2 + n] += l[p * 6 + q * 2 + m] * r[m * 4 + p * 2 + n];
  EXPECT_ARRAY_EQ(run_op(OpKind::DotGeneral, DType::F64, {3, 2},
                         {arr(l, {2, 3, 2}), arr(r, {2, 2, 2})}, dot_attrs({2, 0}, {0, 1}, {}, {})),
                  arr(expected, {3, 2}));
}

TEST(Interpreter, HandlesLargeArraysAndDots) {
  constexpr std::int64_t n = 1 << 20;
  std::vector<float> v(n);
  for (std::int64_t k = 0; k < n; ++k) v[k] = static_cast<float>(k % 1000);
  Graph g;
  ValueId x = add_param(g, DType::F32, {n});
  ValueId sq = add_node(g, OpKind::Mul, DType::F32, {n}, {x, x}, {});
  ValueId sum = add_node(g, OpKind::ReduceSum, DType::F32, {}, {sq}, Attrs{{"axes", I64s{0}}});
  double expected = 0;
  for (float f : v) expected += static_cast<double>(f) * f;
  EXPECT_ARRAY_EQ(run(g, {sum}, {arr(v)})[0], scalar(static_cast<float>(expected)));

  constexpr std::int64_t d = 256;
  std::vector<float> a(d * d), b(d * d);
  for (std::int64_t k = 0; k < d * d; ++k)
    a[k] = static_cast<float>(k % 7), b[k] = static_cast<float>(k % 5);
  HostArray c = run_op(OpKind::DotGeneral, DType::F32, {d, d}, {arr(a, {d, d}), arr(b, {d, d})},
                       dot_attrs({1}, {0}, {}, {}));
  for (std::int64_t i : {std::int64_t{0}, std::int64_t{77}, d - 1})
    for (std::int64_t j : {std::int64_t{0}, std::int64_t{131}, d - 1}) {
      double e = 0;
      for (std::int64_t k = 0; k < d; ++k) e += a[i * d + k] * b[k * d + j];
      EXPECT_EQ(c.get_f64(i * d + j), e) << i << "," << j;
    }
}
}  // namespace
}  // namespace weft
