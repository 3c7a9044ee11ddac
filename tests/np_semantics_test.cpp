// weft::np and the dynamic slices against JAX. Every case in tests/data/np_oracle/*.json
// (written by tools/oracles/np_semantics.py, which ran jax.numpy / jax.lax on CPU) runs three
// ways: eagerly on the device, under jit on the device, and in the reference interpreter on
// the graph jit traced. Each must give JAX's dtype, shape and values: NaN where JAX has NaN,
// the same sign of zero, exact results except where a case gives a tolerance. Cases where
// JAX raised must raise the matching weft error.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>

#include "weft/interp/interpreter.h"
#include "weft/weft.h"

namespace weft {
namespace {

using nlohmann::json;

// One argument of a case: a device array, a literal array (a C++ Array::scalar_int), or a
// C++ scalar, which weft types weakly as JAX types a Python scalar.
struct Arg {
  std::optional<HostArray> array;
  bool literal = false;
  json scalar;  // {"kind": int|float|bool, "value": ...} when not an array
};

struct Case {
  std::string name, op;
  std::vector<Arg> args;
  json attrs = json::object();
  std::optional<HostArray> expected;
  std::string jax_error;  // the Python exception JAX raised, if it did
  double rtol = 0;
};

double number(const json& v) {
  if (v.is_string()) {
    const std::string s = v.get<std::string>();
    if (s == "nan") return std::numeric_limits<double>::quiet_NaN();
    if (s == "inf") return std::numeric_limits<double>::infinity();
    if (s == "-inf") return -std::numeric_limits<double>::infinity();
    throw std::runtime_error("unknown number " + s);
  }
  return v.get<double>();
}

HostArray host_array(const json& spec) {
  const std::optional<DType> dtype = dtype_from_name(spec.at("dtype").get<std::string>());
  if (!dtype) throw std::runtime_error("unknown dtype in " + spec.dump());
  HostArray h(*dtype, spec.at("shape").get<Shape>());
  const json& values = spec.at("values");
  for (std::int64_t i = 0; i < h.size(); ++i) {
    const json& v = values.at(static_cast<std::size_t>(i));
    if (is_float(*dtype)) {
      h.set_f64(i, number(v));
    } else if (v.is_number_unsigned()) {
      h.set_i64(i, static_cast<std::int64_t>(v.get<std::uint64_t>()));
    } else {
      h.set_i64(i, v.get<std::int64_t>());
    }
  }
  return h;
}

std::vector<Case> load_cases(const std::string& file) {
  const std::string path = std::string(WEFT_NP_ORACLE_DIR) + "/" + file;
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot open " + path);
  const json doc = json::parse(in);
  std::vector<Case> cases;
  for (const json& c : doc.at("cases")) {
    Case k;
    k.name = c.at("name");
    k.op = c.at("op");
    for (const json& a : c.at("args")) {
      Arg arg;
      if (a.contains("array")) {
        arg.array = host_array(a.at("array"));
        arg.literal = a.value("literal", false);
      } else {
        arg.scalar = a.at("scalar");
      }
      k.args.push_back(std::move(arg));
    }
    if (c.contains("attrs")) k.attrs = c.at("attrs");
    if (c.contains("expected")) k.expected = host_array(c.at("expected"));
    k.jax_error = c.value("error", "");
    k.rtol = c.value("rtol", 0.0);
    cases.push_back(std::move(k));
  }
  return cases;
}

// Calls f with the scalar as the C++ type that stands for its kind.
template <typename F>
auto with_scalar(const json& s, F&& f) {
  const std::string kind = s.at("kind");
  if (kind == "bool") return f(s.at("value").get<bool>());
  if (kind == "int") return f(s.at("value").get<std::int64_t>());
  return f(number(s.at("value")));
}

WeakScalar weak(const json& s) {
  return with_scalar(s, [](auto v) { return WeakScalar(v); });
}

// An operand as the case's op sees it: an Array, or a C++ scalar.
struct Operand {
  std::optional<Array> array;
  json scalar;
  const Array& a() const { return array.value(); }
};

#define WEFT_BINARY_OPERATOR(OP)                                                            \
  if (c.op == #OP) {                                                                        \
    if (x.array && y.array) return x.a() OP y.a();                                          \
    if (x.array) return with_scalar(y.scalar, [&](auto v) -> Array { return x.a() OP v; }); \
    return with_scalar(x.scalar, [&](auto v) -> Array { return v OP y.a(); });              \
  }

Array run_op(const Case& c, const std::vector<Operand>& in) {
  const json& attrs = c.attrs;
  if (in.size() == 2) {
    const Operand& x = in[0];
    const Operand& y = in[1];
    WEFT_BINARY_OPERATOR(+)
    WEFT_BINARY_OPERATOR(-)
    WEFT_BINARY_OPERATOR(*)
    WEFT_BINARY_OPERATOR(/)
    WEFT_BINARY_OPERATOR(%)
    WEFT_BINARY_OPERATOR(>)
    WEFT_BINARY_OPERATOR(==)
    WEFT_BINARY_OPERATOR(&)
    WEFT_BINARY_OPERATOR(|)
    WEFT_BINARY_OPERATOR(^)
  }
  using Binary = Array (*)(const Array&, const Array&, std::source_location);
  const std::map<std::string, Binary> binaries = {{"remainder", np::remainder},
                                                  {"floor_divide", np::floor_divide},
                                                  {"fmod", np::fmod},
                                                  {"divide", np::divide},
                                                  {"add", np::add},
                                                  {"subtract", np::subtract},
                                                  {"multiply", np::multiply},
                                                  {"maximum", np::maximum},
                                                  {"minimum", np::minimum},
                                                  {"less", np::less},
                                                  {"power", np::power},
                                                  {"arctan2", np::arctan2},
                                                  {"logical_and", np::logical_and},
                                                  {"matmul", np::matmul}};
  if (auto it = binaries.find(c.op); it != binaries.end())
    return it->second(in.at(0).a(), in.at(1).a(), std::source_location::current());
  using Unary = Array (*)(const Array&, std::source_location);
  const std::map<std::string, Unary> unaries = {
      {"round", np::round}, {"floor", np::floor},       {"ceil", np::ceil},
      {"abs", np::abs},     {"sign", np::sign},         {"exp", np::exp},
      {"sqrt", np::sqrt},   {"isnan", np::isnan},       {"isinf", np::isinf},
      {"relu", np::relu},   {"isfinite", np::isfinite}, {"negative", np::negative}};
  if (auto it = unaries.find(c.op); it != unaries.end())
    return it->second(in.at(0).a(), std::source_location::current());
  if (c.op == "~") return ~in.at(0).a();
  if (c.op == "!") return !in.at(0).a();
  using Reduction = Array (*)(const Array&, np::Axes, bool, std::source_location);
  const std::map<std::string, Reduction> reductions = {
      {"max", np::max}, {"min", np::min}, {"sum", np::sum}, {"prod", np::prod}, {"mean", np::mean}};
  if (auto it = reductions.find(c.op); it != reductions.end())
    return it->second(in.at(0).a(), attrs.value("axes", np::Axes{}), attrs.value("keepdims", false),
                      std::source_location::current());
  if (c.op == "argmax" || c.op == "argmin") {
    std::optional<std::int64_t> axis;
    if (attrs.contains("axis")) axis = attrs.at("axis").get<std::int64_t>();
    const bool keepdims = attrs.value("keepdims", false);
    return c.op == "argmax" ? np::argmax(in.at(0).a(), axis, keepdims)
                            : np::argmin(in.at(0).a(), axis, keepdims);
  }
  if (c.op == "logsumexp") return np::logsumexp(in.at(0).a(), attrs.at("axis"));
  if (c.op == "softmax") return np::softmax(in.at(0).a(), attrs.at("axis"));
  if (c.op == "clip") return np::clip(in.at(0).a(), weak(in.at(1).scalar), weak(in.at(2).scalar));
  if (c.op == "where") {
    if (in.at(1).array && in.at(2).array) return np::where(in[0].a(), in[1].a(), in[2].a());
    if (in.at(1).array) return np::where(in[0].a(), in[1].a(), weak(in[2].scalar));
    return np::where(in[0].a(), weak(in[1].scalar), in[2].a());
  }
  if (c.op == "full") return np::full(attrs.at("shape").get<Shape>(), weak(in.at(0).scalar));
  if (c.op == "full_like") return np::full_like(in.at(0).a(), weak(in.at(1).scalar));
  if (c.op == "arange") {
    if (in.size() == 1) return np::arange(weak(in[0].scalar));
    return np::arange(weak(in.at(0).scalar), weak(in.at(1).scalar), weak(in.at(2).scalar));
  }
  if (c.op == "dynamic_slice" || c.op == "dynamic_update_slice") {
    const bool update = c.op == "dynamic_update_slice";
    std::vector<Array> starts;
    for (std::size_t i = update ? 2 : 1; i < in.size(); ++i) starts.push_back(in[i].a());
    if (update) return lax::dynamic_update_slice(in.at(0).a(), in.at(1).a(), starts);
    return lax::dynamic_slice(in.at(0).a(), starts, attrs.at("sizes").get<Shape>());
  }
  throw std::runtime_error("np_semantics_test: no implementation for op '" + c.op + "'");
}
#undef WEFT_BINARY_OPERATOR

// The operands of a case: `traced` supplies, in order, the non-literal arrays (device arrays
// or tracers); literal arrays and scalars are built from the case.
std::vector<Operand> operands(const Case& c, const std::vector<Array>& traced) {
  std::vector<Operand> out;
  std::size_t next = 0;
  for (const Arg& a : c.args) {
    Operand o;
    if (!a.array) {
      o.scalar = a.scalar;
    } else if (a.literal) {
      o.array = Array::scalar_int(a.array->get_i64(0), a.array->dtype());
    } else {
      o.array = traced.at(next++);
    }
    out.push_back(std::move(o));
  }
  return out;
}

std::vector<HostArray> device_inputs(const Case& c) {
  std::vector<HostArray> hosts;
  for (const Arg& a : c.args)
    if (a.array && !a.literal) hosts.push_back(*a.array);
  return hosts;
}

// Empty when `got` is `expected`; otherwise the first difference.
std::string difference(const HostArray& got, const HostArray& expected, double rtol) {
  std::ostringstream out;
  out.precision(9);
  if (got.dtype() != expected.dtype() || got.shape() != expected.shape()) {
    out << "got " << dtype_name(got.dtype()) << shape_to_string(got.shape()) << ", expected "
        << dtype_name(expected.dtype()) << shape_to_string(expected.shape());
    return out.str();
  }
  for (std::int64_t i = 0; i < got.size(); ++i) {
    if (!is_float(got.dtype())) {
      if (got.get_i64(i) != expected.get_i64(i)) {
        out << "element " << i << ": got " << got.get_i64(i) << ", expected "
            << expected.get_i64(i);
        return out.str();
      }
      continue;
    }
    const double g = got.get_f64(i), e = expected.get_f64(i);
    bool same;
    if (std::isnan(e) || std::isnan(g)) {
      same = std::isnan(e) && std::isnan(g);
    } else if (rtol == 0 || std::isinf(e)) {
      same = g == e && std::signbit(g) == std::signbit(e);
    } else {
      same = std::fabs(g - e) <= rtol * std::fabs(e) + 1e-30;
    }
    if (!same) {
      out << "element " << i << ": got " << g << ", expected " << e;
      return out.str();
    }
  }
  return {};
}

// Runs `run` and checks it throws the weft error that stands for JAX's exception.
template <typename Run>
void expect_error(const std::string& jax_error, const std::string& mode, Run&& run) {
  try {
    run();
  } catch (const Error& e) {
    const bool matches =
        jax_error == "TypeError"       ? dynamic_cast<const DTypeError*>(&e) != nullptr
        : jax_error == "OverflowError" ? dynamic_cast<const InvalidArgumentError*>(&e) != nullptr
        : jax_error == "ValueError"    ? dynamic_cast<const ShapeError*>(&e) != nullptr
                                       : false;
    EXPECT_TRUE(matches) << mode << ": JAX raised " << jax_error << ", weft threw: " << e.what();
    return;
  }
  ADD_FAILURE() << mode << ": JAX raised " << jax_error << ", weft threw nothing";
}

bool uses_f64(const Case& c) {
  for (const Arg& a : c.args)
    if (a.array && a.array->dtype() == DType::F64) return true;
  return c.expected && c.expected->dtype() == DType::F64;
}

void run_case(const Case& c) {
  SCOPED_TRACE("case " + c.name);
  if (uses_f64(c) && !default_device().supports(DType::F64)) {
    std::cout << "[ SKIPPED  ] " << c.name << ": the default device has no f64\n";
    return;
  }
  const std::vector<HostArray> hosts = device_inputs(c);
  std::vector<Array> device_args;
  for (const HostArray& h : hosts) device_args.push_back(Array::from_host(h));
  auto traced = jit([&c](const std::vector<Array>& xs) { return run_op(c, operands(c, xs)); },
                    {.name = "np_semantics_case"});
  if (!c.jax_error.empty()) {
    expect_error(c.jax_error, "eager", [&] { run_op(c, operands(c, device_args)); });
    expect_error(c.jax_error, "jit", [&] { traced(device_args); });
    return;
  }
  const HostArray& expected = c.expected.value();
  EXPECT_EQ(difference(run_op(c, operands(c, device_args)).to_host(), expected, c.rtol), "")
      << "eager";
  EXPECT_EQ(difference(traced(device_args).to_host(), expected, c.rtol), "") << "jit";
  const Lowered lowered = traced.lower(device_args);
  const std::vector<HostArray> interpreted = interpret(lowered.graph(), hosts);
  ASSERT_EQ(interpreted.size(), 1u);
  EXPECT_EQ(difference(interpreted[0], expected, c.rtol), "") << "interpreter on\n"
                                                              << lowered.as_text();
}

void run_file(const std::string& file) {
  const std::vector<Case> cases = load_cases(file);
  ASSERT_FALSE(cases.empty()) << file;
  for (const Case& c : cases) run_case(c);
}

TEST(NpSemantics, DivisionFollowsJax) {
  run_file("division.json");
}

TEST(NpSemantics, RoundingFollowsJax) {
  run_file("rounding.json");
}

TEST(NpSemantics, ScalarPromotionFollowsJax) {
  run_file("promotion.json");
}

TEST(NpSemantics, DynamicSliceStartsFollowJax) {
  run_file("dynamic_slice.json");
}

TEST(NpSemantics, RestOfNumpyLayerFollowsJax) {
  run_file("review.json");
}

// Not covered by an oracle: the dynamic-slice wrap is staged as a select only for traced
// signed starts, and a negative literal start wraps at trace time.
TEST(NpSemantics, DynamicSliceWrapIsStagedOnlyForTracedSignedStarts) {
  Array x = Array::from_vector<int>({6}, {0, 1, 2, 3, 4, 5});
  auto with_start = [&](const Array& start) {
    return jit([](const Array& v, const Array& s) { return lax::dynamic_slice(v, {s}, {2}); })
        .lower(x, start)
        .as_text();
  };
  EXPECT_NE(with_start(Array::from_vector<int>({}, {-1})).find("select"), std::string::npos);
  EXPECT_EQ(with_start(Array::from_vector<std::uint32_t>({}, {1})).find("select"),
            std::string::npos);
  const std::string literal =
      jit([](const Array& v) { return lax::dynamic_slice(v, {Array::scalar_int(-2)}, {2}); })
          .lower(x)
          .as_text();
  EXPECT_EQ(literal.find("select"), std::string::npos) << literal;
  EXPECT_NE(literal.find("constant[value=4]"), std::string::npos) << literal;
}

TEST(NpSemantics, IntegerScalarThatDoesNotFitIsAnError) {
  Array u = Array::from_vector<std::uint32_t>({2}, {1, 2});
  EXPECT_EQ((u + std::uint32_t{4294967295u}).to_vector<std::uint32_t>(),
            (std::vector<std::uint32_t>{0, 1}));
  EXPECT_THROW(u + (std::int64_t{1} << 32), InvalidArgumentError);
  EXPECT_THROW(u + (std::uint64_t{1} << 63), InvalidArgumentError);
  Array i = Array::from_vector<std::int64_t>({1}, {1});
  EXPECT_EQ((i + (std::int64_t{1} << 40)).item<std::int64_t>(), (std::int64_t{1} << 40) + 1);
}

}  // namespace
}  // namespace weft
