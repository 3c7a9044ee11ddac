// The narrow and half-precision dtypes (u8, i8, u16, i16, u64, f16, bf16): names and sizes, the
// 16-bit float conversions, JAX's promotion table, the IR text, and lax ops on the interpreter
// and on the device against JAX results (tools/oracles/dtypes.py -> tests/data/dtypes_oracle).
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <bit>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "weft/control_flow.h"
#include "weft/half.h"
#include "weft/host_array.h"
#include "weft/interp/interpreter.h"
#include "weft/ir/text.h"
#include "weft/np.h"
#include "weft/ops.h"
#include "weft/print_format.h"
#include "weft/trace/jit.h"
#include "weft/weft.h"

namespace weft {
namespace {

using nlohmann::json;

json load(const std::string& file) {
  std::ifstream in(std::string(WEFT_DTYPES_ORACLE_DIR) + "/" + file);
  if (!in) throw std::runtime_error("cannot open oracle file " + file);
  return json::parse(in);
}

DType dtype_named(const std::string& name) {
  const std::optional<DType> t = dtype_from_name(name);
  if (!t) throw std::runtime_error("unknown dtype " + name);
  return *t;
}

double float_of(const json& v) {
  if (v.is_string()) {
    const std::string s = v.get<std::string>();
    if (s == "nan") return std::numeric_limits<double>::quiet_NaN();
    return s == "inf" ? std::numeric_limits<double>::infinity()
                      : -std::numeric_limits<double>::infinity();
  }
  return v.get<double>();
}

// u64 values above 2^63 are JSON unsigned integers; they go in as their bit pattern.
std::int64_t int_of(const json& v) {
  if (v.is_number_unsigned()) return static_cast<std::int64_t>(v.get<std::uint64_t>());
  return v.get<std::int64_t>();
}

HostArray host_array(const json& spec) {
  HostArray h(dtype_named(spec.at("dtype")), spec.at("shape").get<Shape>());
  const json& values = spec.at("values");
  for (std::int64_t i = 0; i < h.size(); ++i) {
    const json& v = values.at(static_cast<std::size_t>(i));
    if (is_float(h.dtype()))
      h.set_f64(i, float_of(v));
    else
      h.set_i64(i, int_of(v));
  }
  return h;
}

std::string describe(const HostArray& h) {
  std::ostringstream out;
  out.precision(9);
  out << dtype_name(h.dtype()) << shape_to_string(h.shape()) << " [";
  for (std::int64_t i = 0; i < h.size(); ++i) {
    out << (i ? ", " : "");
    if (is_float(h.dtype()))
      out << h.get_f64(i);
    else if (h.dtype() == DType::U64)
      out << static_cast<std::uint64_t>(h.get_i64(i));
    else
      out << h.get_i64(i);
  }
  return out.str() + "]";
}

// Empty when equal: integers bit for bit, floats exactly (NaN matching NaN, the sign of zero
// included) or, with `rtol`, within rtol * max(|want|, the largest |want|).
std::string compare(const HostArray& got, const HostArray& want, double rtol) {
  if (got.dtype() != want.dtype() || got.shape() != want.shape())
    return "got " + describe(got) + ", want " + describe(want);
  double scale = 0;
  if (is_float(want.dtype()))
    for (std::int64_t i = 0; i < want.size(); ++i)
      if (std::isfinite(want.get_f64(i))) scale = std::max(scale, std::abs(want.get_f64(i)));
  for (std::int64_t i = 0; i < want.size(); ++i) {
    bool same = false;
    if (is_float(want.dtype())) {
      const double g = got.get_f64(i), w = want.get_f64(i);
      same = (std::isnan(g) && std::isnan(w)) ||
             (g == w && (rtol > 0 || std::signbit(g) == std::signbit(w))) ||
             (std::isfinite(w) && std::abs(g - w) <= rtol * scale);
    } else {
      same = got.get_i64(i) == want.get_i64(i);
    }
    if (!same)
      return "element " + std::to_string(i) + ": got " + describe(got) + ", want " + describe(want);
  }
  return {};
}

// ---- Names, sizes, predicates ----------------------------------------------------------------

TEST(DTypes, NamesRoundTripAndSizesMatchTheCTypes) {
  for (DType t : kAllDTypes) EXPECT_EQ(dtype_from_name(dtype_name(t)), t);
  EXPECT_EQ(dtype_name(DType::U8), "u8");
  EXPECT_EQ(dtype_name(DType::I8), "i8");
  EXPECT_EQ(dtype_name(DType::U16), "u16");
  EXPECT_EQ(dtype_name(DType::I16), "i16");
  EXPECT_EQ(dtype_name(DType::U64), "u64");
  EXPECT_EQ(dtype_name(DType::F16), "f16");
  EXPECT_EQ(dtype_name(DType::BF16), "bf16");
  EXPECT_EQ(dtype_size(DType::U8), sizeof(std::uint8_t));
  EXPECT_EQ(dtype_size(DType::I8), sizeof(std::int8_t));
  EXPECT_EQ(dtype_size(DType::U16), sizeof(std::uint16_t));
  EXPECT_EQ(dtype_size(DType::I16), sizeof(std::int16_t));
  EXPECT_EQ(dtype_size(DType::U64), sizeof(std::uint64_t));
  EXPECT_EQ(dtype_size(DType::F16), sizeof(float16));
  EXPECT_EQ(dtype_size(DType::BF16), sizeof(bfloat16));
  for (DType t : {DType::U8, DType::U16, DType::U32, DType::U64}) {
    EXPECT_TRUE(is_integer(t) && is_unsigned_integer(t) && !is_signed_integer(t));
  }
  for (DType t : {DType::I8, DType::I16, DType::I32, DType::I64}) {
    EXPECT_TRUE(is_integer(t) && is_signed_integer(t) && !is_unsigned_integer(t));
  }
  for (DType t : {DType::F16, DType::BF16}) {
    EXPECT_TRUE(is_float(t) && is_half_float(t) && !is_integer(t));
  }
}

// ---- 16-bit floats ---------------------------------------------------------------------------

// Every finite value reads back to itself, and the float halfway between two neighbours rounds
// to the one with the even mantissa: round to nearest even, checked on every pair.
template <typename Half>
void check_round_to_nearest_even(std::uint16_t largest_finite) {
  for (std::uint32_t bits = 0; bits <= largest_finite; ++bits) {
    for (std::uint16_t sign : {std::uint16_t{0}, std::uint16_t{0x8000}}) {
      const auto b = static_cast<std::uint16_t>(bits | sign);
      const float x = Half::to_float(b);
      ASSERT_EQ(Half::from_float(x), b) << "bits " << b;
      if (bits == largest_finite) continue;
      const auto next = static_cast<std::uint16_t>(b + 1);
      const float y = Half::to_float(next);
      const float mid = x + (y - x) / 2;  // exact: one more mantissa bit than the half type
      const std::uint16_t even = (b & 1) ? next : b;
      ASSERT_EQ(Half::from_float(mid), even) << "between bits " << b << " and " << next;
      ASSERT_EQ(Half::from_float(std::nextafter(mid, x)), b);
      ASSERT_EQ(Half::from_float(std::nextafter(mid, y)), next);
    }
  }
}

TEST(HalfFloats, Float16RoundsToNearestEven) {
  check_round_to_nearest_even<float16>(0x7BFF);
  EXPECT_EQ(float16::from_float(65519.0f), 0x7BFF);  // rounds down to 65504
  EXPECT_EQ(float16::from_float(65520.0f), 0x7C00);  // the tie goes to inf
  EXPECT_EQ(float16::from_float(std::numeric_limits<float>::infinity()), 0x7C00);
  EXPECT_TRUE(std::isnan(float16::to_float(float16::from_float(std::nanf("")))));
  EXPECT_EQ(float16::to_float(0x0001), std::ldexp(1.0f, -24));    // smallest subnormal
  EXPECT_EQ(float16::from_float(std::ldexp(1.0f, -25)), 0x0000);  // half of it: a tie to 0
}

TEST(HalfFloats, BFloat16RoundsToNearestEven) {
  check_round_to_nearest_even<bfloat16>(0x7F7F);
  EXPECT_EQ(bfloat16::from_float(std::numeric_limits<float>::max()), 0x7F80);  // to inf
  EXPECT_TRUE(std::isnan(bfloat16::to_float(bfloat16::from_float(std::nanf("")))));
  // A NaN whose payload is only in the dropped bits stays a NaN.
  EXPECT_TRUE(
      std::isnan(bfloat16::to_float(bfloat16::from_float(std::bit_cast<float>(0x7F800001u)))));
}

TEST(HalfFloats, HostArraysRoundAndViewTheirStorage) {
  HostArray a(DType::BF16, {2});
  a.set_f64(0, 1.0 / 3);
  a.set_f64(1, 257.0);  // a tie between 256 and 258: to the even mantissa, 256
  EXPECT_EQ(a.get_f64(0), 0.333984375);
  EXPECT_EQ(a.get_f64(1), 256.0);
  EXPECT_EQ(a.view<bfloat16>()[0].bits, 0x3EAB);
  HostArray h = HostArray::from<float16>({1}, {float16(0.1f)});
  EXPECT_EQ(h.dtype(), DType::F16);
  EXPECT_EQ(h.get_f64(0), 0.0999755859375);
  HostArray u = HostArray::from<std::uint64_t>({1}, {~std::uint64_t{0}});
  EXPECT_EQ(u.get_f64(0), 18446744073709551616.0);
  EXPECT_EQ(u.get_i64(0), -1);  // the bit pattern
}

// numpy's array2string of float16 and of ml_dtypes' bfloat16 (which prints each element's
// str(): six significant digits, unpadded).
TEST(HalfFloats, PrintLikeNumpy) {
  auto f16 = [](std::vector<double> v) {
    HostArray h(DType::F16, {static_cast<std::int64_t>(v.size())});
    for (std::size_t i = 0; i < v.size(); ++i) h.set_f64(static_cast<std::int64_t>(i), v[i]);
    return format_for_print(h);
  };
  auto bf16 = [](std::vector<double> v) {
    HostArray h(DType::BF16, {static_cast<std::int64_t>(v.size())});
    for (std::size_t i = 0; i < v.size(); ++i) h.set_f64(static_cast<std::int64_t>(i), v[i]);
    return format_for_print(h);
  };
  EXPECT_EQ(f16({1, 2.5, 1.0 / 3}), "[1.     2.5    0.3333]");
  EXPECT_EQ(f16({60000, 1}), "[6.e+04 1.e+00]");
  EXPECT_EQ(f16({1e-5, 1}), "[1.e-05 1.e+00]");
  EXPECT_EQ(bf16({1, 2.5, 1.0 / 3}), "[1 2.5 0.333984]");
  EXPECT_EQ(bf16({1e10, 1}), "[9.99922e+09 1]");
  EXPECT_EQ(bf16({-0.0, std::nan(""), INFINITY}), "[-0 nan inf]");
  HostArray u8 = HostArray::from<std::uint8_t>({3}, {0, 7, 255});
  EXPECT_EQ(format_for_print(u8), "[  0   7 255]");
  HostArray u64 = HostArray::from<std::uint64_t>({2}, {1, ~std::uint64_t{0}});
  EXPECT_EQ(format_for_print(u64), "[                   1 18446744073709551615]");
}

// ---- Promotion -------------------------------------------------------------------------------

TEST(DTypePromotion, MatchesJaxPromoteTypesForEveryPair) {
  const json table = load("promotion.json");
  std::size_t checked = 0;
  for (const json& row : table.at("promote_types")) {
    const DType a = dtype_named(row[0]), b = dtype_named(row[1]), want = dtype_named(row[2]);
    EXPECT_EQ(np::promote_types(a, b), want)
        << dtype_name(a) << " with " << dtype_name(b) << " gave "
        << dtype_name(np::promote_types(a, b)) << ", JAX gives " << dtype_name(want);
    ++checked;
  }
  EXPECT_EQ(checked, std::size(kAllDTypes) * std::size(kAllDTypes));
}

TEST(DTypePromotion, WeakScalarsMatchJax) {
  const json table = load("promotion.json");
  for (const json& row : table.at("weak")) {
    const DType array = dtype_named(row[0]), want = dtype_named(row[2]);
    const std::string kind = row[1];
    const DType got = kind == "bool"  ? np::weak_result_type(true, array)
                      : kind == "int" ? np::weak_result_type(1, array)
                                      : np::weak_result_type(1.0, array);
    EXPECT_EQ(got, want) << dtype_name(array) << " with a weak " << kind;
  }
}

TEST(DTypePromotion, IntegerScalarsMustFitTheNarrowDtype) {
  const Array x = Array::from_host(HostArray(DType::U8, {2}));
  EXPECT_NO_THROW(np::scalar_like(255, x));
  EXPECT_THROW(np::scalar_like(256, x), InvalidArgumentError);
  EXPECT_THROW(np::scalar_like(-1, x), InvalidArgumentError);
  const Array y = Array::from_host(HostArray(DType::U64, {2}));
  EXPECT_NO_THROW(np::scalar_like(~std::uint64_t{0}, y));
}

// ---- IR text ---------------------------------------------------------------------------------

TEST(DTypesIrText, EveryNewDtypeRoundTrips) {
  for (const char* name : {"u8", "i8", "u16", "i16", "u64", "f16", "bf16"}) {
    const std::string t = name;
    const bool is_f = t == "f16" || t == "bf16";
    const std::string text = "func @f(%0: " + t + "[2], %1: " + t + "[2]) -> (" + t +
                             "[2], f32[2], bool[2], " + t + "[]) {\n  %2 = add %0, %1 : " + t +
                             "[2]\n  %3 = convert %2 : f32[2]\n  %4 = lt %0, %1 : bool[2]\n"
                             "  %5 = constant[value=" +
                             std::string(is_f ? "0.5" : "-1") + "] : " + t +
                             "[]\n  return %2, %3, %4, %5\n}\n";
    Graph g;
    ASSERT_NO_THROW(g = parse_graph(text)) << text;
    EXPECT_EQ(g.node(g.params[0]).dtype, dtype_named(t));
    const std::string printed = print_graph(g);
    Graph again = parse_graph(printed);
    EXPECT_TRUE(again == g) << printed;
    EXPECT_EQ(print_graph(again), printed);
  }
}

// ---- Callbacks -------------------------------------------------------------------------------

// A host callback sees the device's u8 and bf16 elements and its bf16 result goes back to the
// device bit for bit (the callback computes with weft::bfloat16 directly).
TEST(DTypesCallbacks, HostArraysCarryNarrowAndHalfDtypes) {
  const Array bytes = Array::from_vector<std::uint8_t>({3}, {1, 200, 255});
  HostArray halves_host(DType::BF16, {3});
  for (std::int64_t i = 0; i < 3; ++i) halves_host.set_f64(i, 0.5 * static_cast<double>(i + 1));
  const Array halves = Array::from_host(halves_host);
  auto step = jit([](const std::vector<Array>& xs) {
    return std::vector<Array>{pure_callback(
        [](const HostArray& b, const HostArray& h) {
          HostArray out(DType::BF16, {3});
          const auto in_bytes = b.view<std::uint8_t>();
          const auto in_halves = h.view<bfloat16>();
          auto out_halves = out.view<bfloat16>();
          for (std::size_t i = 0; i < 3; ++i)
            out_halves[i] =
                bfloat16(static_cast<float>(in_bytes[i]) * static_cast<float>(in_halves[i]));
          return out;
        },
        ShapeDtype{DType::BF16, {3}}, lax::add(xs[0], xs[0]), xs[1])};
  });
  const HostArray got = step(std::vector<Array>{bytes, halves})[0].to_host();
  ASSERT_EQ(got.dtype(), DType::BF16);
  // u8 doubling wraps (200 + 200 = 144, 255 + 255 = 254); bf16(144 * 1.0) and bf16(254 * 1.5)
  // = bf16(381), which rounds to 380.
  EXPECT_EQ(got.get_f64(0), 2 * 0.5);
  EXPECT_EQ(got.get_f64(1), 144.0);
  EXPECT_EQ(got.get_f64(2), 380.0);
}

// ---- Control flow --------------------------------------------------------------------------

// switch_ clamps an integer index of any width to the branches, as lax.switch: a u64 index of
// 2^63 or more is past the last branch, not negative. Interpreter and device alike.
TEST(DTypesControlFlow, SwitchTakesEveryIntegerIndexDtype) {
  const auto branches = std::make_tuple([](const Array& x) { return lax::neg(x); },
                                        [](const Array& x) { return lax::add(x, x); },
                                        [](const Array& x) { return lax::mul(x, x); });
  auto f = jit([&](const std::vector<Array>& in) {
    return std::vector<Array>{lax::switch_(in[0], branches, in[1])};
  });
  const HostArray x = HostArray::from<float>({2}, {3.0f, -0.5f});
  struct Case {
    DType dtype;
    std::int64_t bits;  // set_i64: u64 takes the bit pattern
    int branch;
  };
  for (const Case& c : {Case{DType::U8, 1, 1}, Case{DType::U8, 255, 2}, Case{DType::I8, -1, 0},
                        Case{DType::I16, 2, 2}, Case{DType::U16, 0, 0}, Case{DType::U64, 1, 1},
                        Case{DType::U64, -1, 2}}) {
    SCOPED_TRACE(std::string(dtype_name(c.dtype)) + " " + std::to_string(c.bits));
    HostArray index(c.dtype, {});
    index.set_i64(0, c.bits);
    const std::vector<float> want = c.branch == 0   ? std::vector<float>{-3.0f, 0.5f}
                                    : c.branch == 1 ? std::vector<float>{6.0f, -1.0f}
                                                    : std::vector<float>{9.0f, 0.25f};
    const std::vector<Array> args{Array::from_host(index), Array::from_host(x)};
    EXPECT_EQ(f(args)[0].to_host().to_vector<float>(), want) << "device";
    const std::vector<HostArray> inputs{index, x};
    EXPECT_EQ(interpret(f.lower(args).graph(), inputs)[0].to_vector<float>(), want)
        << "interpreter";
  }
}

// ---- lax ops against JAX ---------------------------------------------------------------------

std::vector<Array> apply(const json& c, const std::vector<Array>& xs) {
  const std::string op = c.at("op");
  if (op == "add") return {lax::add(xs[0], xs[1])};
  if (op == "mul") return {lax::mul(xs[0], xs[1])};
  if (op == "max") return {lax::max(xs[0], xs[1])};
  if (op == "lt") return {lax::lt(xs[0], xs[1])};
  if (op == "select") return {lax::select(xs[0], xs[1], xs[2])};
  if (op == "convert")
    return {lax::convert_element_type(xs[0], dtype_named(c.at("params").at("dtype")))};
  if (op == "reduce_sum")
    return {lax::reduce_sum(xs[0], c.at("params").at("axes").get<lax::Axes>())};
  if (op == "reduce_max")
    return {lax::reduce_max(xs[0], c.at("params").at("axes").get<lax::Axes>())};
  if (op == "dot") return {lax::dot_general(xs[0], xs[1], {{1}, {0}, {}, {}})};
  if (op == "np_sum") return {np::sum(xs[0])};
  if (op == "np_mean") return {np::mean(xs[0])};
  throw std::runtime_error("unknown op " + op);
}

// Sums and dots of 16-bit floats may differ from XLA's in the order and width of their
// accumulation: one unit in the last place of the result's largest element.
double tolerance(const json& c, DType result) {
  const std::string op = c.at("op");
  if (op != "reduce_sum" && op != "dot" && op != "np_sum" && op != "np_mean") return 0;
  if (result == DType::BF16) return 1.0 / 128;
  if (result == DType::F16) return 1.0 / 1024;
  return is_float(result) ? 1e-6 : 0;
}

class DTypeOracle : public ::testing::TestWithParam<std::string> {};

const json& cases() {
  static const json all = load("ops.json").at("cases");
  return all;
}

std::vector<std::string> case_names() {
  std::vector<std::string> names;
  for (const json& c : cases()) names.push_back(c.at("name"));
  return names;
}

const json& case_named(const std::string& name) {
  for (const json& c : cases())
    if (c.at("name") == name) return c;
  throw std::runtime_error("no case " + name);
}

TEST_P(DTypeOracle, InterpreterAndDeviceMatchJax) {
  const json& c = case_named(GetParam());
  std::vector<HostArray> inputs;
  for (const json& a : c.at("args")) inputs.push_back(host_array(a));
  const HostArray want = host_array(c.at("expected"));
  const double rtol = tolerance(c, want.dtype());
  auto f = jit([&c](const std::vector<Array>& xs) { return apply(c, xs); }, {.name = "oracle"});
  std::vector<Array> args;
  for (const HostArray& h : inputs) args.push_back(Array::from_host(h));
  const Lowered lowered = f.lower(args);
  const std::vector<HostArray> interpreted = interpret(lowered.graph(), inputs);
  ASSERT_EQ(interpreted.size(), 1u);
  EXPECT_EQ(compare(interpreted[0], want, rtol), "") << "interpreter\n" << lowered.as_text();
  const std::vector<Array> got = f(args);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(compare(got[0].to_host(), want, rtol), "") << "device\n" << lowered.as_text();
}

INSTANTIATE_TEST_SUITE_P(Jax, DTypeOracle, ::testing::ValuesIn(case_names()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           return info.param;
                         });

// 16-bit float dots on the CPU kernel: full 4 x 32 blocks, the edges past them, a vector times
// a matrix (M = 1) and one read through its transpose (x @ W.T, operands swapped), all in one
// program, against the interpreter (the same sums in float, rounded once).
TEST(HalfDots, DeviceMatchesInterpreter) {
  auto values = [](Shape shape, int seed) {
    HostArray h(DType::F32, shape);
    for (std::int64_t i = 0; i < h.size(); ++i) h.set_f64(i, ((i * 37 + seed) % 17 - 8) / 8.0);
    return h;
  };
  const std::vector<HostArray> inputs{values({6, 43}, 1), values({43, 70}, 2), values({1, 43}, 3),
                                      values({70, 43}, 4)};
  auto f = jit(
      [](const std::vector<Array>& xs) {
        std::vector<Array> out;
        for (const DType t : {DType::BF16, DType::F16}) {
          std::vector<Array> h;
          for (const Array& x : xs) h.push_back(lax::convert_element_type(x, t));
          for (const Array& r : {np::matmul(h[0], h[1]), np::matmul(h[2], h[1]),
                                 np::matmul(h[2], np::transpose(h[3])),
                                 np::matmul(np::reshape(h[2], {43}), np::transpose(h[3]))})
            out.push_back(r);
        }
        return out;
      },
      {.name = "half_dots"});
  std::vector<Array> args;
  for (const HostArray& h : inputs) args.push_back(Array::from_host(h));
  const Lowered lowered = f.lower(args);
  const std::vector<HostArray> want = interpret(lowered.graph(), inputs);
  const std::vector<Array> got = f(args);
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t i = 0; i < got.size(); ++i)
    EXPECT_EQ(compare(got[i].to_host(), want[i], 0), "") << "result " << i;
}

}  // namespace
}  // namespace weft
