// The bit operations and the remaining elementwise primitives against JAX results committed as
// JSON (tools/oracles/elementwise_bits.py writes tests/data/elementwise_bits_oracle/): each case
// runs eagerly on the device, under jit on the device, and in the reference interpreter on the
// graph jit traced, and must give JAX's bits (or, where the case says, come within its ulps);
// where JAX refused the call, weft must throw a weft::Error. The transformation cases run grad
// and vmap of the same functions.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <bit>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "weft/interp/interpreter.h"
#include "weft/transforms/grad.h"
#include "weft/transforms/vmap.h"
#include "weft/weft.h"

namespace weft {
namespace {

using nlohmann::json;

// An array from its oracle form: integers as they are, floats as IEEE bit patterns.
HostArray from_oracle(const json& spec) {
  const std::optional<DType> dtype = dtype_from_name(spec.at("dtype").get<std::string>());
  if (!dtype) throw std::runtime_error("unknown dtype in " + spec.dump());
  HostArray h(*dtype, spec.at("shape").get<Shape>());
  const json& bits = spec.at("bits");
  if (bits.size() != static_cast<std::size_t>(h.size()))
    throw std::runtime_error("wrong number of values in " + spec.dump());
  for (std::int64_t i = 0; i < h.size(); ++i) {
    const json& b = bits.at(static_cast<std::size_t>(i));
    if (*dtype == DType::F32) {
      h.view<float>()[static_cast<std::size_t>(i)] = std::bit_cast<float>(b.get<std::uint32_t>());
    } else if (*dtype == DType::F64) {
      h.view<double>()[static_cast<std::size_t>(i)] = std::bit_cast<double>(b.get<std::uint64_t>());
    } else if (*dtype == DType::U32) {
      h.set_i64(i, static_cast<std::int64_t>(b.get<std::uint32_t>()));
    } else {
      h.set_i64(i, b.get<std::int64_t>());
    }
  }
  return h;
}

// An element's bits: floats as their IEEE pattern (f32 through float, so a NaN's payload
// stays), integers as they are.
std::uint64_t bits_at(const HostArray& h, std::int64_t i) {
  if (h.dtype() == DType::F32)
    return std::bit_cast<std::uint32_t>(h.view<float>()[static_cast<std::size_t>(i)]);
  if (h.dtype() == DType::F64)
    return std::bit_cast<std::uint64_t>(h.view<double>()[static_cast<std::size_t>(i)]);
  return static_cast<std::uint64_t>(h.get_i64(i));
}

// Distance in representable floats (ordered bit patterns; -0 and +0 are one apart).
double ulp_distance(const HostArray& got, const HostArray& want, std::int64_t i) {
  const double g = got.get_f64(i), w = want.get_f64(i);
  if (std::isnan(g) || std::isnan(w)) return std::isnan(g) && std::isnan(w) ? 0 : INFINITY;
  auto ordered = [](double v, DType t) -> std::int64_t {
    if (t == DType::F32) {
      const auto b = std::bit_cast<std::int32_t>(static_cast<float>(v));
      return b < 0 ? -static_cast<std::int64_t>(b & 0x7fffffff) - 1 : b;
    }
    const auto b = std::bit_cast<std::int64_t>(v);
    return b < 0 ? -(b & 0x7fffffffffffffff) - 1 : b;
  };
  return std::abs(static_cast<double>(ordered(g, got.dtype()) - ordered(w, want.dtype())));
}

std::string describe(const HostArray& h) {
  std::ostringstream out;
  out << dtype_name(h.dtype()) << shape_to_string(h.shape()) << " [";
  for (std::int64_t i = 0; i < std::min<std::int64_t>(h.size(), 24); ++i)
    out << (i ? ", " : "") << h.get_f64(i);
  out << (h.size() > 24 ? ", ...]" : "]");
  return out.str();
}

// Empty when got has want's dtype, shape and bits (NaNs compare by bits too), or, with ulps
// set, is within that many representable floats of want (NaN matching NaN).
std::string difference(const HostArray& got, const HostArray& want, std::optional<double> ulps) {
  if (got.dtype() != want.dtype() || got.shape() != want.shape())
    return "got " + describe(got) + ", want " + describe(want);
  for (std::int64_t i = 0; i < want.size(); ++i) {
    const bool same = ulps && is_float(want.dtype()) ? ulp_distance(got, want, i) <= *ulps
                                                     : bits_at(got, i) == bits_at(want, i);
    if (!same) {
      std::ostringstream out;
      out.precision(17);
      out << "element " << i << ": got " << got.get_f64(i) << " (bits 0x" << std::hex
          << bits_at(got, i) << "), want " << std::dec << want.get_f64(i) << " (bits 0x" << std::hex
          << bits_at(want, i) << ")" << std::dec << (ulps ? " within ulps" : "") << "\n  got  "
          << describe(got) << "\n  want " << describe(want);
      return out.str();
    }
  }
  return {};
}

struct Case {
  std::string file, name, op;
  json params;
  std::vector<HostArray> args;
  std::optional<HostArray> expected;  // absent: JAX raised
  std::optional<double> ulps;
};

std::vector<Case> load(const std::string& file) {
  std::ifstream in(std::string(WEFT_ELEMENTWISE_BITS_ORACLE_DIR) + "/" + file);
  if (!in) throw std::runtime_error("cannot read " + file);
  const json doc = json::parse(in);
  std::vector<Case> cases;
  for (const json& c : doc.at("cases")) {
    Case k{file, c.at("name"), c.at("op"), c.at("params"), {}, std::nullopt, std::nullopt};
    for (const json& a : c.at("args")) k.args.push_back(from_oracle(a));
    if (c.contains("expected")) k.expected = from_oracle(c.at("expected"));
    if (c.contains("ulps")) k.ulps = c.at("ulps").get<double>();
    cases.push_back(std::move(k));
  }
  return cases;
}

DType param_dtype(const Case& c) {
  return *dtype_from_name(c.params.at("dtype").get<std::string>());
}

using Op = std::function<Array(const Case&, const std::vector<Array>&)>;

// Each oracle op, in weft.
const std::map<std::string, Op>& ops() {
  static const std::map<std::string, Op> table = {
      {"shift_left",
       [](const Case&, const std::vector<Array>& a) { return lax::shift_left(a[0], a[1]); }},
      {"shift_right_logical",
       [](const Case&, const std::vector<Array>& a) {
         return lax::shift_right_logical(a[0], a[1]);
       }},
      {"shift_right_arithmetic",
       [](const Case&, const std::vector<Array>& a) {
         return lax::shift_right_arithmetic(a[0], a[1]);
       }},
      {"bitcast_convert",
       [](const Case& c, const std::vector<Array>& a) {
         return lax::bitcast_convert_type(a[0], param_dtype(c));
       }},
      {"uniform_from_bits",
       [](const Case&, const std::vector<Array>& a) {
         const Array nine =
             lax::broadcast_in_dim(Array::scalar_int(9, DType::U32), a[0].shape(), {});
         const Array one_bits =
             lax::broadcast_in_dim(Array::scalar_int(0x3f800000, DType::U32), a[0].shape(), {});
         const Array mantissa = lax::shift_right_logical(a[0], nine);
         const Array one_to_two =
             lax::bitcast_convert_type(lax::logical_or(mantissa, one_bits), DType::F32);
         return lax::sub(one_to_two,
                         lax::broadcast_in_dim(lax::constant(1, DType::F32), a[0].shape(), {}));
       }},
      {"f64_halves_summed",
       [](const Case&, const std::vector<Array>& a) {
         const Array twice =
             lax::mul(a[0], lax::broadcast_in_dim(lax::constant(2, DType::F64), a[0].shape(), {}));
         const Array halves = lax::bitcast_convert_type(twice, DType::U32);
         return lax::reduce_sum(halves, {2});
       }},
      // Transformations.
      {"grad_bitcast_roundtrip",
       [](const Case&, const std::vector<Array>& a) {
         auto f = [](const Array& x) {
           const Array y =
               lax::bitcast_convert_type(lax::bitcast_convert_type(x, DType::U32), DType::F32);
           return lax::reduce_sum(lax::mul(x, y), {0});
         };
         return grad(std::function<Array(const Array&)>(f))(a[0]);
       }},
      {"vmap_bitcast_f64_to_u32",
       [](const Case&, const std::vector<Array>& a) {
         auto f = [](const Array& x) { return lax::bitcast_convert_type(x, DType::U32); };
         return vmap(std::function<Array(const Array&)>(f))(a[0]);
       }},
      {"vmap_bitcast_u32_to_f64",
       [](const Case&, const std::vector<Array>& a) {
         auto f = [](const Array& x) { return lax::bitcast_convert_type(x, DType::F64); };
         return vmap(std::function<Array(const Array&)>(f))(a[0]);
       }},
      {"vmap_shift_left_unbatched_amount",
       [](const Case&, const std::vector<Array>& a) {
         ArrayFunction f = [](const std::vector<Array>& xs) {
           return std::vector<Array>{lax::shift_left(xs[0], xs[1])};
         };
         return vmap(f, {.in_axes = {0, std::nullopt}, .out_axes = {}})(a).at(0);
       }},
  };
  return table;
}

bool uses_f64(const Case& c) {
  auto f64 = [](const HostArray& h) { return h.dtype() == DType::F64; };
  return std::any_of(c.args.begin(), c.args.end(), f64) || (c.expected && f64(*c.expected));
}

void run_case(const Case& c) {
  SCOPED_TRACE(c.file + ": case " + c.name);
  if (uses_f64(c) && !default_device().supports(DType::F64)) {
    std::cout << "[ SKIPPED  ] " << c.name << ": the default device has no f64\n";
    return;
  }
  const auto op = ops().find(c.op);
  ASSERT_NE(op, ops().end()) << "no weft function for oracle op " << c.op;
  std::vector<Array> args;
  for (const HostArray& h : c.args) args.push_back(Array::from_host(h));
  auto traced =
      jit([&](const std::vector<Array>& xs) { return std::vector<Array>{op->second(c, xs)}; },
          {.name = "elementwise_bits_case"});
  if (!c.expected) {
    EXPECT_THROW(op->second(c, args), Error) << "eager: JAX refused this call";
    EXPECT_THROW(traced(args), Error) << "jit: JAX refused this call";
    return;
  }
  EXPECT_EQ(difference(op->second(c, args).to_host(), *c.expected, c.ulps), "") << "eager";
  EXPECT_EQ(difference(traced(args).at(0).to_host(), *c.expected, c.ulps), "") << "jit";
  const Lowered lowered = traced.lower(args);
  const std::vector<HostArray> interpreted = interpret(lowered.graph(), c.args);
  ASSERT_EQ(interpreted.size(), 1u);
  EXPECT_EQ(difference(interpreted[0], *c.expected, c.ulps), "") << "interpreter on\n"
                                                                 << lowered.as_text();
}

void run_file(const std::string& file) {
  const std::vector<Case> cases = load(file);
  ASSERT_FALSE(cases.empty()) << file;
  for (const Case& c : cases) run_case(c);
}

TEST(ElementwiseBits, ShiftsMatchJax) {
  run_file("shifts.json");
}

TEST(ElementwiseBits, BitcastConvertMatchesJax) {
  run_file("bitcast.json");
}

TEST(ElementwiseBits, GradAndVmapMatchJax) {
  run_file("transforms.json");
}

// The refusals say what went wrong and what to do.
TEST(ElementwiseBits, RefusalsExplainThemselves) {
  const Array odd = Array::from_host(HostArray::from<std::uint32_t>({3}, {1, 2, 3}));
  try {
    lax::bitcast_convert_type(odd, DType::F64);
    ADD_FAILURE() << "bitcast of u32[3] to f64 was accepted";
  } catch (const ShapeError& e) {
    EXPECT_NE(std::string(e.what()).find("must have size 2"), std::string::npos) << e.what();
  }
  const Array flags = Array::from_host(HostArray::from<bool>({2}, {true, false}));
  EXPECT_THROW(lax::bitcast_convert_type(flags, DType::I32), DTypeError);
  const Array f = Array::from_host(HostArray::from<float>({1}, {1.0f}));
  try {
    lax::shift_left(f, f);
    ADD_FAILURE() << "shift_left of f32 was accepted";
  } catch (const DTypeError& e) {
    EXPECT_NE(std::string(e.what()).find("needs integer operands"), std::string::npos) << e.what();
  }
}

// Reverse mode through a bitcast meets its missing transpose only where JAX's would: never,
// since its tangent is zero; the transpose itself refuses clearly.
TEST(ElementwiseBits, BitcastHasNoTransposeAsInJax) {
  const Array x = Array::from_host(HostArray::from<float>({2}, {1.5f, -2.0f}));
  auto f = [](const Array& v) {
    return lax::reduce_sum(lax::bitcast_convert_type(v, DType::F32), {0});
  };
  const HostArray g = grad(std::function<Array(const Array&)>(f))(x).to_host();
  EXPECT_EQ(g.get_f64(0), 0.0);
  EXPECT_EQ(g.get_f64(1), 0.0);
}

}  // namespace
}  // namespace weft
