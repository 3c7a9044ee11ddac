// The reference interpreter: the driver, leaves, elementwise ops and converts. Expected values
// are computed by hand or with independent loops, never with the interpreter's own helpers.
#include <gtest/gtest.h>

#include <cmath>
#include <numbers>
#include <string>
#include <utility>
#include <vector>

#include "support/interp_test_util.h"
#include "weft/error.h"

namespace weft {
namespace {

using namespace weft::testing;

// ---------------------------------------------------------------------------------------------
// Driver: inputs, outputs, leaves

TEST(Interpreter, ChecksInputCountDTypeAndShape) {
  Graph g;
  ValueId a = add_param(g, DType::F32, {2});
  ValueId b = add_param(g, DType::F32, {2});
  g.outputs = {add_node(g, OpKind::Add, DType::F32, {2}, {a, b}, {})};
  const HostArray x = arr<float>({1, 2});
  EXPECT_THROW(interpret(g, std::vector<HostArray>{x}), InvalidArgumentError);
  try {
    interpret(g, std::vector<HostArray>{x, arr<std::int32_t>({1, 2})});
    FAIL() << "expected InvalidArgumentError";
  } catch (const InvalidArgumentError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("parameter 1"), std::string::npos) << msg;
    EXPECT_NE(msg.find("f32[2]"), std::string::npos) << msg;
    EXPECT_NE(msg.find("i32[2]"), std::string::npos) << msg;
  }
  EXPECT_THROW(interpret(g, std::vector<HostArray>{x, arr<float>({1, 2, 3})}),
               InvalidArgumentError);
}

TEST(Interpreter, OutputsMayRepeatAndNameParameters) {
  Graph g;
  ValueId p0 = add_param(g, DType::I32, {2});
  ValueId p1 = add_param(g, DType::I32, {2});  // unused by any node
  ValueId neg = add_node(g, OpKind::Neg, DType::I32, {2}, {p0}, {});
  ValueId sum = add_node(g, OpKind::Add, DType::I32, {2}, {neg, neg}, {});
  auto out =
      run(g, {sum, p1, sum, p0, neg}, {arr<std::int32_t>({1, 2}), arr<std::int32_t>({5, 6})});
  ASSERT_EQ(out.size(), 5u);
  EXPECT_ARRAY_EQ(out[0], arr<std::int32_t>({-2, -4}));
  EXPECT_ARRAY_EQ(out[1], arr<std::int32_t>({5, 6}));
  EXPECT_ARRAY_EQ(out[2], arr<std::int32_t>({-2, -4}));
  EXPECT_ARRAY_EQ(out[3], arr<std::int32_t>({1, 2}));
  EXPECT_ARRAY_EQ(out[4], arr<std::int32_t>({-1, -2}));
}

TEST(Interpreter, RejectsInvalidGraphs) {
  Graph g;
  ValueId p = add_param(g, DType::F32, {2});
  g.outputs = {add_node(g, OpKind::Neg, DType::F32, {3}, {p}, {})};
  EXPECT_THROW(interpret(g, std::vector<HostArray>{arr<float>({1, 2})}), InvalidGraphError);
}

TEST(Interpreter, Constants) {
  Graph g;
  ValueId f = add_node(g, OpKind::Constant, DType::F32, {}, {}, Attrs{{"value", 0.1}});
  ValueId d = add_node(g, OpKind::Constant, DType::F64, {}, {}, Attrs{{"value", 0.1}});
  ValueId fi = add_node(g, OpKind::Constant, DType::F32, {}, {}, Attrs{{"value", std::int64_t{3}}});
  ValueId i = add_node(g, OpKind::Constant, DType::I64, {}, {}, Attrs{{"value", kI64Min}});
  ValueId u =
      add_node(g, OpKind::Constant, DType::U32, {}, {}, Attrs{{"value", std::int64_t{4294967295}}});
  ValueId b = add_node(g, OpKind::Constant, DType::Bool, {}, {}, Attrs{{"value", std::int64_t{1}}});
  auto out = run(g, {f, d, fi, i, u, b}, {});
  EXPECT_ARRAY_EQ(out[0], scalar(0.1f));
  EXPECT_ARRAY_EQ(out[1], scalar(0.1));
  EXPECT_ARRAY_EQ(out[2], scalar(3.0f));
  EXPECT_ARRAY_EQ(out[3], scalar(kI64Min));
  EXPECT_ARRAY_EQ(out[4], scalar(kU32Max));
  EXPECT_ARRAY_EQ(out[5], scalar(true));
}

TEST(Interpreter, Iota) {
  EXPECT_ARRAY_EQ(
      run_op(OpKind::Iota, DType::I32, {2, 3}, {}, Attrs{{"dimension", std::int64_t{1}}}),
      arr<std::int32_t>({0, 1, 2, 0, 1, 2}, {2, 3}));
  EXPECT_ARRAY_EQ(
      run_op(OpKind::Iota, DType::F32, {2, 3}, {}, Attrs{{"dimension", std::int64_t{0}}}),
      arr<float>({0, 0, 0, 1, 1, 1}, {2, 3}));
  EXPECT_ARRAY_EQ(
      run_op(OpKind::Iota, DType::U32, {3, 0}, {}, Attrs{{"dimension", std::int64_t{0}}}),
      HostArray(DType::U32, {3, 0}));
}

// ---------------------------------------------------------------------------------------------
// Unary

TEST(Interpreter, UnaryFloatExactValues) {
  const HostArray x = arr<float>({-2.5f, -0.5f, 0.5f, 2.5f, 3.7f});
  EXPECT_ARRAY_EQ(run_same(OpKind::Neg, {x}), arr<float>({2.5f, 0.5f, -0.5f, -2.5f, -3.7f}));
  EXPECT_ARRAY_EQ(run_same(OpKind::Abs, {x}), arr<float>({2.5f, 0.5f, 0.5f, 2.5f, 3.7f}));
  EXPECT_ARRAY_EQ(run_same(OpKind::Floor, {x}), arr<float>({-3, -1, 0, 2, 3}));
  EXPECT_ARRAY_EQ(run_same(OpKind::Ceil, {x}), arr<float>({-2, -0.0f, 1, 3, 4}));
  // Half away from zero, not to even.
  EXPECT_ARRAY_EQ(run_same(OpKind::Round, {x}), arr<float>({-3, -1, 1, 3, 4}));
  EXPECT_ARRAY_EQ(run_same(OpKind::Sqrt, {arr<float>({4, 0, -1})}), arr<float>({2, 0, NAN}));
  EXPECT_ARRAY_EQ(run_same(OpKind::Rsqrt, {arr<float>({4, 0.25f, 0})}),
                  arr<float>({0.5f, 2, INFINITY}));
  EXPECT_ARRAY_EQ(run_same(OpKind::Exp2, {arr<double>({3, -1})}), arr<double>({8, 0.5}));
  EXPECT_ARRAY_EQ(run_same(OpKind::Logistic, {arr<float>({0, -INFINITY, INFINITY})}),
                  arr<float>({0.5f, 0, 1}));
  EXPECT_ARRAY_EQ(run_same(OpKind::Log, {arr<float>({1, 0, -1})}), arr<float>({0, -INFINITY, NAN}));
}

TEST(Interpreter, SignKeepsZeroAndNaN) {
  HostArray s = run_same(OpKind::Sign, {arr<double>({-3.5, -0.0, 0.0, 2.0, kNaN, -kInf})});
  EXPECT_ARRAY_EQ(s, arr<double>({-1, 0, 0, 1, kNaN, -1}));
  EXPECT_TRUE(std::signbit(s.get_f64(1)));
  EXPECT_FALSE(std::signbit(s.get_f64(2)));
  EXPECT_ARRAY_EQ(run_same(OpKind::Sign, {arr<std::int32_t>({-7, 0, 9, kI32Min})}),
                  arr<std::int32_t>({-1, 0, 1, -1}));
  EXPECT_ARRAY_EQ(run_same(OpKind::Sign, {arr<std::uint32_t>({0, 5, kU32Max})}),
                  arr<std::uint32_t>({0, 1, 1}));
}

// Transcendentals: each op in double on the f32 input, rounded to f32.
TEST(Interpreter, UnaryFloatTranscendentalsRoundToF32) {
  const std::vector<float> xs = {-2.0f, -0.7f, -0.0f, 0.3f, 1.0f, 1.9f, 10.0f};
  const std::pair<OpKind, double (*)(double)> cases[] = {
      {OpKind::Exp, [](double v) { return std::exp(v); }},
      {OpKind::Log1p, [](double v) { return std::log1p(v); }},
      {OpKind::Expm1, [](double v) { return std::expm1(v); }},
      {OpKind::Sin, [](double v) { return std::sin(v); }},
      {OpKind::Cos, [](double v) { return std::cos(v); }},
      {OpKind::Tan, [](double v) { return std::tan(v); }},
      {OpKind::Tanh, [](double v) { return std::tanh(v); }},
      {OpKind::Erf, [](double v) { return std::erf(v); }},
      {OpKind::Logistic, [](double v) { return 1.0 / (1.0 + std::exp(-v)); }},
  };
  for (const auto& [op, ref] : cases) {
    std::vector<float> expected;
    for (float v : xs) expected.push_back(static_cast<float>(ref(v)));
    EXPECT_ARRAY_EQ(run_same(op, {arr(xs)}), arr(expected)) << op_name(op);
    std::vector<double> xd(xs.begin(), xs.end()), expected_d;
    for (double v : xd) expected_d.push_back(ref(v));
    EXPECT_ARRAY_EQ(run_same(op, {arr(xd)}), arr(expected_d)) << op_name(op);
  }
  EXPECT_NEAR(run_same(OpKind::Erf, {scalar(1.0)}).get_f64(0), 0.8427007929497149, 1e-15);
}

TEST(Interpreter, UnaryIntegersWrap) {
  EXPECT_ARRAY_EQ(run_same(OpKind::Neg, {arr<std::int32_t>({5, -3, kI32Min, kI32Max})}),
                  arr<std::int32_t>({-5, 3, kI32Min, -kI32Max}));
  EXPECT_ARRAY_EQ(run_same(OpKind::Neg, {arr<std::int64_t>({kI64Min, 1})}),
                  arr<std::int64_t>({kI64Min, -1}));
  EXPECT_ARRAY_EQ(run_same(OpKind::Neg, {arr<std::uint32_t>({0, 1})}),
                  arr<std::uint32_t>({0, kU32Max}));
  EXPECT_ARRAY_EQ(run_same(OpKind::Abs, {arr<std::int32_t>({-5, 5, 0, kI32Min})}),
                  arr<std::int32_t>({5, 5, 0, kI32Min}));
  EXPECT_ARRAY_EQ(run_same(OpKind::Abs, {arr<std::int64_t>({kI64Min, -2})}),
                  arr<std::int64_t>({kI64Min, 2}));
  EXPECT_ARRAY_EQ(run_same(OpKind::Abs, {arr<std::uint32_t>({kU32Max, 3})}),
                  arr<std::uint32_t>({kU32Max, 3}));
  EXPECT_ARRAY_EQ(run_same(OpKind::Not, {arr<bool>({true, false})}), arr<bool>({false, true}));
  EXPECT_ARRAY_EQ(run_same(OpKind::Not, {arr<std::int32_t>({5, 0, -1})}),
                  arr<std::int32_t>({-6, -1, 0}));
  EXPECT_ARRAY_EQ(run_same(OpKind::Not, {arr<std::uint32_t>({0, 0xF0F0F0F0u})}),
                  arr<std::uint32_t>({kU32Max, 0x0F0F0F0Fu}));
}

// ---------------------------------------------------------------------------------------------
// Binary and comparisons

TEST(Interpreter, BinaryFloat) {
  const HostArray a = arr<float>({7, -7, 1, 0, 2});
  const HostArray b = arr<float>({2, 3, 0, 0, 0.5f});
  EXPECT_ARRAY_EQ(run_same(OpKind::Add, {a, b}), arr<float>({9, -4, 1, 0, 2.5f}));
  EXPECT_ARRAY_EQ(run_same(OpKind::Sub, {a, b}), arr<float>({5, -10, 1, 0, 1.5f}));
  EXPECT_ARRAY_EQ(run_same(OpKind::Mul, {a, b}), arr<float>({14, -21, 0, 0, 1}));
  EXPECT_ARRAY_EQ(run_same(OpKind::Div, {a, b}), arr<float>({3.5f, -7.0f / 3, INFINITY, NAN, 4}));
  EXPECT_ARRAY_EQ(run_same(OpKind::Rem, {a, b}), arr<float>({1, -1, NAN, NAN, 0}));
  EXPECT_ARRAY_EQ(run_same(OpKind::Pow, {a, b}), arr<float>({49, -343, 1, 1, std::sqrt(2.0f)}));
  // Every op rounds to f32: 0.1f + 0.2f in float arithmetic.
  EXPECT_ARRAY_EQ(run_same(OpKind::Add, {scalar(0.1f), scalar(0.2f)}), scalar(0.1f + 0.2f));
  EXPECT_ARRAY_EQ(run_same(OpKind::Add, {scalar(0.1), scalar(0.2)}), scalar(0.1 + 0.2));
  EXPECT_EQ(compare_arrays(
                run_same(OpKind::Atan2, {arr<double>({1, 1, 0, -1}), arr<double>({-1, 0, -1, 1})}),
                arr<double>({3 * std::numbers::pi / 4, std::numbers::pi / 2, std::numbers::pi,
                             -std::numbers::pi / 4}),
                1e-15, 0),
            "");
}

TEST(Interpreter, FloatMaxMinPropagateNaN) {
  const HostArray a = arr<double>({1, kNaN, 3, -kInf, -0.0, 0.0});
  const HostArray b = arr<double>({2, 5, kNaN, 4, 0.0, -0.0});
  EXPECT_ARRAY_EQ(run_same(OpKind::Max, {a, b}), arr<double>({2, kNaN, kNaN, 4, 0, 0}));
  EXPECT_ARRAY_EQ(run_same(OpKind::Min, {a, b}), arr<double>({1, kNaN, kNaN, -kInf, 0, 0}));
  // Signed zeros order -0 < +0, as IEEE 754-2019 maximum/minimum.
  HostArray mx = run_same(OpKind::Max, {a, b});
  HostArray mn = run_same(OpKind::Min, {a, b});
  EXPECT_FALSE(std::signbit(mx.get_f64(4)));
  EXPECT_FALSE(std::signbit(mx.get_f64(5)));
  EXPECT_TRUE(std::signbit(mn.get_f64(4)));
  EXPECT_TRUE(std::signbit(mn.get_f64(5)));
}

TEST(Interpreter, IntegerArithmeticWraps) {
  EXPECT_ARRAY_EQ(
      run_same(OpKind::Add, {arr<std::int32_t>({kI32Max, 1}), arr<std::int32_t>({1, 2})}),
      arr<std::int32_t>({kI32Min, 3}));
  EXPECT_ARRAY_EQ(run_same(OpKind::Sub, {arr<std::uint32_t>({0, 5}), arr<std::uint32_t>({1, 3})}),
                  arr<std::uint32_t>({kU32Max, 2}));
  EXPECT_ARRAY_EQ(
      run_same(OpKind::Mul, {arr<std::int32_t>({65536, -3}), arr<std::int32_t>({65536, 7})}),
      arr<std::int32_t>({0, -21}));
  EXPECT_ARRAY_EQ(run_same(OpKind::Mul, {arr<std::int64_t>({kI64Max}), arr<std::int64_t>({2})}),
                  arr<std::int64_t>({-2}));
  EXPECT_ARRAY_EQ(
      run_same(OpKind::Mul, {arr<std::uint32_t>({0x80000001u}), arr<std::uint32_t>({2})}),
      arr<std::uint32_t>({2}));
}

TEST(Interpreter, IntegerDivisionEdgeCases) {
  const HostArray a = arr<std::int32_t>({7, -7, 7, -7, 7, kI32Min, kI32Min, 0});
  const HostArray b = arr<std::int32_t>({2, 2, -2, -2, 0, -1, 0, 0});
  EXPECT_ARRAY_EQ(run_same(OpKind::Div, {a, b}),
                  arr<std::int32_t>({3, -3, -3, 3, -1, kI32Min, -1, -1}));
  EXPECT_ARRAY_EQ(run_same(OpKind::Rem, {a, b}),
                  arr<std::int32_t>({1, -1, 1, -1, 7, 0, kI32Min, 0}));
  const HostArray la = arr<std::int64_t>({kI64Min, kI64Min, -9});
  const HostArray lb = arr<std::int64_t>({-1, 0, 4});
  EXPECT_ARRAY_EQ(run_same(OpKind::Div, {la, lb}), arr<std::int64_t>({kI64Min, -1, -2}));
  EXPECT_ARRAY_EQ(run_same(OpKind::Rem, {la, lb}), arr<std::int64_t>({0, kI64Min, -1}));
  const HostArray ua = arr<std::uint32_t>({7, kU32Max, 9});
  const HostArray ub = arr<std::uint32_t>({0, 2, 4});
  EXPECT_ARRAY_EQ(run_same(OpKind::Div, {ua, ub}), arr<std::uint32_t>({kU32Max, 0x7FFFFFFFu, 2}));
  EXPECT_ARRAY_EQ(run_same(OpKind::Rem, {ua, ub}), arr<std::uint32_t>({7, 1, 1}));
}

TEST(Interpreter, IntegerPow) {
  const HostArray base = arr<std::int32_t>({2, 3, 1, -1, -1, 0, 0, 2, 5, -2});
  const HostArray expo = arr<std::int32_t>({10, -1, -5, -3, -2, 0, -1, 31, 0, 3});
  EXPECT_ARRAY_EQ(run_same(OpKind::Pow, {base, expo}),
                  arr<std::int32_t>({1024, 0, 1, -1, 1, 1, 0, kI32Min, 1, -8}));
  // 3^40 wraps modulo 2^32: repeated multiplication in uint32 gives the same bits.
  std::uint32_t wrapped = 1;
  for (int k = 0; k < 40; ++k) wrapped *= 3u;
  EXPECT_ARRAY_EQ(run_same(OpKind::Pow, {scalar<std::int32_t>(3), scalar<std::int32_t>(40)}),
                  scalar(static_cast<std::int32_t>(wrapped)));
  // 3^(2^32 - 1) mod 2^32 = 3^(2^32) / 3 mod 2^32; 3^(2^32) = 1 (mod 2^32) as the group of
  // units mod 2^32 has exponent 2^30, so the result is the inverse of 3 mod 2^32.
  const std::uint32_t inverse_of_3 = 0xAAAAAAABu;
  ASSERT_EQ(static_cast<std::uint32_t>(inverse_of_3 * 3u), 1u);
  EXPECT_ARRAY_EQ(
      run_same(OpKind::Pow, {arr<std::uint32_t>({2, 3, 0}), arr<std::uint32_t>({32, kU32Max, 0})}),
      arr<std::uint32_t>({0, inverse_of_3, 1}));
  EXPECT_ARRAY_EQ(run_same(OpKind::Pow, {scalar<std::int64_t>(2), scalar<std::int64_t>(63)}),
                  scalar(kI64Min));
}

TEST(Interpreter, IntegerMaxMinAndBitwise) {
  EXPECT_ARRAY_EQ(
      run_same(OpKind::Max, {arr<std::uint32_t>({kU32Max, 1}), arr<std::uint32_t>({1, 2})}),
      arr<std::uint32_t>({kU32Max, 2}));
  EXPECT_ARRAY_EQ(
      run_same(OpKind::Min, {arr<std::int32_t>({-5, 4}), arr<std::int32_t>({3, kI32Min})}),
      arr<std::int32_t>({-5, kI32Min}));
  const HostArray a = arr<std::int32_t>({0b1100, -1});
  const HostArray b = arr<std::int32_t>({0b1010, 0x0F});
  EXPECT_ARRAY_EQ(run_same(OpKind::And, {a, b}), arr<std::int32_t>({0b1000, 0x0F}));
  EXPECT_ARRAY_EQ(run_same(OpKind::Or, {a, b}), arr<std::int32_t>({0b1110, -1}));
  EXPECT_ARRAY_EQ(run_same(OpKind::Xor, {a, b}), arr<std::int32_t>({0b0110, -16}));
  EXPECT_ARRAY_EQ(run_same(OpKind::Xor, {arr<std::uint32_t>({kU32Max}), arr<std::uint32_t>({1})}),
                  arr<std::uint32_t>({0xFFFFFFFEu}));
  const HostArray p = arr<bool>({false, false, true, true});
  const HostArray q = arr<bool>({false, true, false, true});
  EXPECT_ARRAY_EQ(run_same(OpKind::And, {p, q}), arr<bool>({false, false, false, true}));
  EXPECT_ARRAY_EQ(run_same(OpKind::Or, {p, q}), arr<bool>({false, true, true, true}));
  EXPECT_ARRAY_EQ(run_same(OpKind::Xor, {p, q}), arr<bool>({false, true, true, false}));
}

TEST(Interpreter, Comparisons) {
  const HostArray a = arr<float>({1, 2, 3, NAN, -0.0f});
  const HostArray b = arr<float>({2, 2, 1, NAN, 0.0f});
  EXPECT_ARRAY_EQ(run_compare(OpKind::Eq, a, b), arr<bool>({false, true, false, false, true}));
  EXPECT_ARRAY_EQ(run_compare(OpKind::Ne, a, b), arr<bool>({true, false, true, true, false}));
  EXPECT_ARRAY_EQ(run_compare(OpKind::Lt, a, b), arr<bool>({true, false, false, false, false}));
  EXPECT_ARRAY_EQ(run_compare(OpKind::Le, a, b), arr<bool>({true, true, false, false, true}));
  EXPECT_ARRAY_EQ(run_compare(OpKind::Gt, a, b), arr<bool>({false, false, true, false, false}));
  EXPECT_ARRAY_EQ(run_compare(OpKind::Ge, a, b), arr<bool>({false, true, true, false, true}));
  EXPECT_ARRAY_EQ(
      run_compare(OpKind::Gt, arr<std::uint32_t>({kU32Max, 0}), arr<std::uint32_t>({1, 1})),
      arr<bool>({true, false}));
  EXPECT_ARRAY_EQ(
      run_compare(OpKind::Lt, arr<std::int32_t>({-1, kI32Min}), arr<std::int32_t>({1, kI32Max})),
      arr<bool>({true, true}));
  EXPECT_ARRAY_EQ(
      run_compare(OpKind::Le, arr<std::int64_t>({kI64Max}), arr<std::int64_t>({kI64Min})),
      arr<bool>({false}));
  EXPECT_ARRAY_EQ(run_compare(OpKind::Eq, arr<bool>({true, false}), arr<bool>({true, true})),
                  arr<bool>({true, false}));
}

TEST(Interpreter, Select) {
  const HostArray pred = arr<bool>({true, false, true});
  EXPECT_ARRAY_EQ(run_op(OpKind::Select, DType::F32, {3},
                         {pred, arr<float>({1, 2, 3}), arr<float>({-1, -2, -3})}),
                  arr<float>({1, -2, 3}));
  EXPECT_ARRAY_EQ(run_op(OpKind::Select, DType::U32, {3},
                         {pred, arr<std::uint32_t>({1, 2, 3}), arr<std::uint32_t>({7, 8, 9})}),
                  arr<std::uint32_t>({1, 8, 3}));
}

// ---------------------------------------------------------------------------------------------
// Convert

TEST(Interpreter, ConvertFloatToIntSaturates) {
  const HostArray x = arr<float>({NAN, 3e9f, -3e9f, 2.7f, -2.7f, INFINITY, -INFINITY, -0.5f});
  EXPECT_ARRAY_EQ(run_convert(DType::I32, x),
                  arr<std::int32_t>({0, kI32Max, kI32Min, 2, -2, kI32Max, kI32Min, 0}));
  EXPECT_ARRAY_EQ(run_convert(DType::U32, x),
                  arr<std::uint32_t>({0, 3000000000u, 0, 2, 0, kU32Max, 0, 0}));
  EXPECT_ARRAY_EQ(run_convert(DType::U32, arr<double>({5e9, 4294967295.9})),
                  arr<std::uint32_t>({kU32Max, kU32Max}));
  EXPECT_ARRAY_EQ(
      run_convert(DType::I64, arr<double>({1e19, -1e19, kNaN, -9.9, 9007199254740993.0})),
      arr<std::int64_t>({kI64Max, kI64Min, 0, -9, 9007199254740992}));
}

TEST(Interpreter, ConvertToAndFromBool) {
  EXPECT_ARRAY_EQ(run_convert(DType::Bool, arr<float>({NAN, 0.0f, -0.0f, 0.1f, -INFINITY})),
                  arr<bool>({true, false, false, true, true}));
  EXPECT_ARRAY_EQ(run_convert(DType::Bool, arr<std::int32_t>({0, -1, 256})),
                  arr<bool>({false, true, true}));
  EXPECT_ARRAY_EQ(run_convert(DType::F32, arr<bool>({true, false})), arr<float>({1, 0}));
  EXPECT_ARRAY_EQ(run_convert(DType::I64, arr<bool>({true, false})), arr<std::int64_t>({1, 0}));
  EXPECT_ARRAY_EQ(run_convert(DType::U32, arr<bool>({true})), arr<std::uint32_t>({1}));
}

TEST(Interpreter, ConvertIntToIntWraps) {
  const HostArray big = arr<std::int64_t>({-1, (std::int64_t{1} << 32) + 5, std::int64_t{1} << 31});
  EXPECT_ARRAY_EQ(run_convert(DType::U32, big), arr<std::uint32_t>({kU32Max, 5, 0x80000000u}));
  EXPECT_ARRAY_EQ(run_convert(DType::I32, big), arr<std::int32_t>({-1, 5, kI32Min}));
  EXPECT_ARRAY_EQ(run_convert(DType::I32, arr<std::uint32_t>({kU32Max, 7})),
                  arr<std::int32_t>({-1, 7}));
  EXPECT_ARRAY_EQ(run_convert(DType::U32, arr<std::int32_t>({-1, -2})),
                  arr<std::uint32_t>({kU32Max, 0xFFFFFFFEu}));
  EXPECT_ARRAY_EQ(run_convert(DType::I64, arr<std::uint32_t>({kU32Max})),
                  arr<std::int64_t>({4294967295}));
  EXPECT_ARRAY_EQ(run_convert(DType::I64, arr<std::int32_t>({kI32Min})),
                  arr<std::int64_t>({kI32Min}));
}

TEST(Interpreter, ConvertToFloatRoundsToNearestOnce) {
  // 2^60 + 2^36 + 1 lies just above the midpoint of two f32 neighbours; rounding through
  // f64 first would land exactly on the midpoint and round to even (2^60).
  const std::int64_t x = (std::int64_t{1} << 60) + (std::int64_t{1} << 36) + 1;
  EXPECT_ARRAY_EQ(run_convert(DType::F32, scalar(x)),
                  scalar(static_cast<float>(std::ldexp(1.0, 60) + std::ldexp(1.0, 37))));
  EXPECT_ARRAY_EQ(run_convert(DType::F32, scalar<std::int32_t>(16777217)), scalar(16777216.0f));
  EXPECT_ARRAY_EQ(run_convert(DType::F64, scalar<std::uint32_t>(kU32Max)), scalar(4294967295.0));
  EXPECT_ARRAY_EQ(run_convert(DType::F32, scalar(0.1)), scalar(0.1f));
  EXPECT_ARRAY_EQ(run_convert(DType::F64, scalar(0.1f)), scalar(static_cast<double>(0.1f)));
  EXPECT_ARRAY_EQ(run_convert(DType::F32, scalar(1e300)), scalar(INFINITY));
}

// ---------------------------------------------------------------------------------------------
// Whole graphs and sizes

TEST(Interpreter, SelectTrilGraph) {
  // tril(x) = select(row >= col, x, 0), built from iota, compare and broadcast.
  Graph g;
  ValueId x = add_param(g, DType::F32, {3, 3});
  ValueId row =
      add_node(g, OpKind::Iota, DType::I32, {3, 3}, {}, Attrs{{"dimension", std::int64_t{0}}});
  ValueId col =
      add_node(g, OpKind::Iota, DType::I32, {3, 3}, {}, Attrs{{"dimension", std::int64_t{1}}});
  ValueId keep = add_node(g, OpKind::Ge, DType::Bool, {3, 3}, {row, col}, {});
  ValueId zero = add_node(g, OpKind::Constant, DType::F32, {}, {}, Attrs{{"value", 0.0}});
  ValueId zeros =
      add_node(g, OpKind::BroadcastInDim, DType::F32, {3, 3}, {zero}, Attrs{{"dims", I64s{}}});
  ValueId out = add_node(g, OpKind::Select, DType::F32, {3, 3}, {keep, x, zeros}, {});
  auto res = run(g, {out}, {arr<float>({1, 2, 3, 4, 5, 6, 7, 8, 9}, {3, 3})});
  EXPECT_ARRAY_EQ(res[0], arr<float>({1, 0, 0, 4, 5, 0, 7, 8, 9}, {3, 3}));
}

TEST(Interpreter, F32RoundsAfterEveryOp) {
  // (x + 1) - x: in f32, 1e8 + 1 rounds back to 1e8 before the subtraction; f64 keeps the 1.
  for (DType t : {DType::F32, DType::F64}) {
    Graph g;
    ValueId x = add_param(g, t, {2});
    ValueId one = add_node(g, OpKind::Constant, t, {}, {}, Attrs{{"value", 1.0}});
    ValueId ones = add_node(g, OpKind::BroadcastInDim, t, {2}, {one}, Attrs{{"dims", I64s{}}});
    ValueId sum = add_node(g, OpKind::Add, t, {2}, {x, ones}, {});
    ValueId diff = add_node(g, OpKind::Sub, t, {2}, {sum, x}, {});
    ValueId wide = add_node(g, OpKind::Convert, DType::F64, {2}, {sum}, {});
    const HostArray in = t == DType::F32 ? arr<float>({1e8f, 2}) : arr<double>({1e8, 2});
    auto out = run(g, {diff, wide}, {in});
    if (t == DType::F32) {
      EXPECT_ARRAY_EQ(out[0], arr<float>({0, 1}));
      EXPECT_ARRAY_EQ(out[1], arr<double>({1e8, 3}));
    } else {
      EXPECT_ARRAY_EQ(out[0], arr<double>({1, 1}));
      EXPECT_ARRAY_EQ(out[1], arr<double>({1e8 + 1, 3}));
    }
  }
  // A transcendental's f32 result is rounded before it feeds the next op.
  Graph g;
  ValueId x = add_param(g, DType::F32, {});
  ValueId e = add_node(g, OpKind::Exp, DType::F32, {}, {x}, {});
  ValueId wide = add_node(g, OpKind::Convert, DType::F64, {}, {e}, {});
  EXPECT_ARRAY_EQ(run(g, {wide}, {scalar(0.1f)})[0],
                  scalar(static_cast<double>(static_cast<float>(std::exp(double{0.1f})))));
}

TEST(Interpreter, EmptyArraysFlowThroughElementwiseOps) {
  const HostArray e = HostArray(DType::F32, {0, 4});
  EXPECT_ARRAY_EQ(run_same(OpKind::Add, {e, e}), e);
  EXPECT_ARRAY_EQ(run_same(OpKind::Exp, {e}), e);
  EXPECT_ARRAY_EQ(run_compare(OpKind::Lt, e, e), HostArray(DType::Bool, {0, 4}));
  EXPECT_ARRAY_EQ(run_convert(DType::I32, e), HostArray(DType::I32, {0, 4}));
}

// Large intermediates released during a run are reused by later values of a similar size
// (interp/value.h): a chain over 2^17 elements (large enough to be kept) whose values are
// released and remade many times, with sizes that differ (a slice, then a broadcast back)
// and integer values beside the floats, still gives each element its own result.
TEST(Interpreter, RecycledStorageKeepsEveryValueItsOwn) {
  constexpr std::int64_t n = std::int64_t{1} << 17;
  Graph g;
  ValueId x = add_param(g, DType::F32, {n});
  ValueId k = add_param(g, DType::I32, {n});
  ValueId half =
      add_node(g, OpKind::Slice, DType::F32, {n / 2}, {x},
               Attrs{{"start", I64s{n / 4}}, {"limit", I64s{3 * n / 4}}, {"stride", I64s{1}}});
  for (int step = 0; step < 6; ++step) {
    x = add_node(g, OpKind::Mul, DType::F32, {n}, {x, x}, {});
    x = add_node(g, OpKind::Sub, DType::F32, {n},
                 {x, add_node(g, OpKind::Convert, DType::F32, {n}, {k}, {})}, {});
    k = add_node(g, OpKind::Add, DType::I32, {n}, {k, k}, {});
  }
  ValueId total = add_node(g, OpKind::ReduceSum, DType::F32, {}, {half}, Attrs{{"axes", I64s{0}}});
  std::vector<float> xs(static_cast<std::size_t>(n));
  std::vector<std::int32_t> ks(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) {
    xs[static_cast<std::size_t>(i)] = 1.0f + static_cast<float>(i % 7) / 8.0f;
    ks[static_cast<std::size_t>(i)] = static_cast<std::int32_t>(i % 3);
  }
  std::vector<float> want_x = xs;
  std::vector<std::int32_t> want_k = ks;
  for (int step = 0; step < 6; ++step)
    for (std::size_t i = 0; i < want_x.size(); ++i) {
      want_x[i] = want_x[i] * want_x[i];
      want_x[i] = want_x[i] - static_cast<float>(want_k[i]);
      want_k[i] = static_cast<std::int32_t>(static_cast<std::uint32_t>(want_k[i]) * 2u);
    }
  double sum = 0;
  for (std::int64_t i = n / 4; i < 3 * n / 4; ++i) sum += xs[static_cast<std::size_t>(i)];
  auto out = run(g, {x, k, total}, {arr(xs, {n}), arr(ks, {n})});
  EXPECT_ARRAY_EQ(out[0], arr(want_x, {n}));
  EXPECT_ARRAY_EQ(out[1], arr(want_k, {n}));
  EXPECT_NEAR(out[2].get_f64(0), sum, 1e-3 * sum);
}

}  // namespace
}  // namespace weft
