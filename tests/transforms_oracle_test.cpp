// weft::jvp, weft::vjp and weft::vmap against JAX. Every case of
// tests/data/transforms_oracle/cases.json (written by tools/oracles/transforms.py with jax.jvp,
// jax.vjp and jax.vmap on CPU) names a primitive ("op") with its attributes; the C++ twin below
// builds the same function with weft::lax. Each transformation of every case runs inside
// weft::jit on the default device (all of them as one program) and in the reference interpreter,
// and must give JAX's dtype, shape and values; the first case of each op also runs each
// transformation eagerly. (The file's "jit" marks, which chose the cases that once ran under
// jit, are no longer read: every case does.)
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "support/oracle_cases.h"
#include "support/oracle_json.h"
#include "weft/ops.h"
#include "weft/transforms/grad.h"
#include "weft/transforms/jvp.h"
#include "weft/transforms/vmap.h"
#include "weft/weft.h"

namespace weft {
namespace {

using nlohmann::json;
using testing::device_arrays;
using testing::host_arrays;
using Arrays = std::vector<Array>;
using Hosts = std::vector<HostArray>;

struct Case {
  std::string name, op;
  json attrs;
  Hosts inputs, tangents, cotangents;
  Hosts jvp_primals, jvp_tangents, vjp_cotangents;
  std::vector<std::optional<int>> in_axes;
  Hosts vmap_inputs, vmap_outputs;
};

std::vector<Case> load_cases() {
  const auto path = std::filesystem::path(WEFT_TRANSFORMS_ORACLE_DIR) / "cases.json";
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot open " + path.string());
  const json doc = json::parse(in);
  std::vector<Case> cases;
  for (const json& c : doc.at("cases")) {
    Case k;
    k.name = c.at("name");
    k.op = c.at("op");
    k.attrs = c.at("attrs");
    k.inputs = host_arrays(c.at("inputs"));
    k.tangents = host_arrays(c.at("tangents"));
    k.cotangents = host_arrays(c.at("cotangents"));
    k.jvp_primals = host_arrays(c.at("jvp").at("primals_out"));
    k.jvp_tangents = host_arrays(c.at("jvp").at("tangents_out"));
    k.vjp_cotangents = host_arrays(c.at("vjp"));
    for (const json& axis : c.at("vmap").at("in_axes"))
      k.in_axes.push_back(axis.is_null() ? std::nullopt : std::optional<int>(axis.get<int>()));
    k.vmap_inputs = host_arrays(c.at("vmap").at("inputs"));
    k.vmap_outputs = host_arrays(c.at("vmap").at("outputs"));
    cases.push_back(std::move(k));
  }
  return cases;
}

// Loaded once (a load failure is reported by the table test).
const testing::LoadedCases<Case>& oracle() {
  static const testing::LoadedCases<Case> loaded = testing::load_or_explain(&load_cases);
  return loaded;
}

const std::vector<Case>& all_cases() {
  return oracle().cases;
}

// ---- the C++ twins, keyed by "op" -------------------------------------------------------------

using Unary = Array (*)(const Array&, std::source_location);
using Binary = Array (*)(const Array&, const Array&, std::source_location);

const std::map<std::string, Unary>& unaries() {
  static const std::map<std::string, Unary> all{
      {"neg", lax::neg},     {"abs", lax::abs},     {"sign", lax::sign},
      {"floor", lax::floor}, {"ceil", lax::ceil},   {"round", lax::round},
      {"exp", lax::exp},     {"exp2", lax::exp2},   {"log", lax::log},
      {"log1p", lax::log1p}, {"expm1", lax::expm1}, {"sqrt", lax::sqrt},
      {"rsqrt", lax::rsqrt}, {"sin", lax::sin},     {"cos", lax::cos},
      {"tan", lax::tan},     {"tanh", lax::tanh},   {"logistic", lax::logistic},
      {"erf", lax::erf},
  };
  return all;
}

const std::map<std::string, Binary>& binaries() {
  static const std::map<std::string, Binary> all{
      {"add", lax::add}, {"sub", lax::sub}, {"mul", lax::mul},
      {"div", lax::div}, {"rem", lax::rem}, {"pow", lax::pow},
      {"max", lax::max}, {"min", lax::min}, {"atan2", lax::atan2},
  };
  return all;
}

lax::Axes axes(const json& attrs, const char* key) {
  return attrs.at(key).get<lax::Axes>();
}

Arrays head(const Arrays& a, std::size_t count) {
  return Arrays(a.begin(), a.begin() + static_cast<std::ptrdiff_t>(count));
}

Arrays tail(const Arrays& a, std::size_t from) {
  return Arrays(a.begin() + static_cast<std::ptrdiff_t>(from), a.end());
}

// The case's function of its arguments, as tools/oracles/transforms.py's jax_fn builds it.
Arrays twin(const std::string& op, const json& attrs, const Arrays& a) {
  const auto here = std::source_location::current();
  if (auto it = unaries().find(op); it != unaries().end()) return {it->second(a.at(0), here)};
  if (auto it = binaries().find(op); it != binaries().end())
    return {it->second(a.at(0), a.at(1), here)};
  if (op == "select") return {lax::select(a.at(0), a.at(1), a.at(2))};
  if (op == "convert") {
    const std::optional<DType> dtype = dtype_from_name(attrs.at("dtype").get<std::string>());
    return {lax::convert_element_type(a.at(0), dtype.value())};
  }
  if (op == "broadcast_in_dim")
    return {lax::broadcast_in_dim(a.at(0), axes(attrs, "shape"), axes(attrs, "dims"))};
  if (op == "reshape") return {lax::reshape(a.at(0), axes(attrs, "shape"))};
  if (op == "transpose") return {lax::transpose(a.at(0), axes(attrs, "permutation"))};
  if (op == "slice")
    return {lax::slice(a.at(0), axes(attrs, "start"), axes(attrs, "limit"), axes(attrs, "stride"))};
  if (op == "dynamic_slice") return {lax::dynamic_slice(a.at(0), tail(a, 1), axes(attrs, "sizes"))};
  if (op == "dynamic_update_slice")
    return {lax::dynamic_update_slice(a.at(0), a.at(1), tail(a, 2))};
  if (op == "concatenate") return {lax::concatenate(a, attrs.at("dimension").get<std::int64_t>())};
  if (op == "pad")
    return {lax::pad(a.at(0), a.at(1), axes(attrs, "low"), axes(attrs, "high"),
                     axes(attrs, "interior"))};
  if (op == "reduce_sum") return {lax::reduce_sum(a.at(0), axes(attrs, "axes"))};
  if (op == "reduce_prod") return {lax::reduce_prod(a.at(0), axes(attrs, "axes"))};
  if (op == "reduce_max") return {lax::reduce_max(a.at(0), axes(attrs, "axes"))};
  if (op == "reduce_min") return {lax::reduce_min(a.at(0), axes(attrs, "axes"))};
  if (op == "argmax") return {lax::argmax(a.at(0), {attrs.at("axis").get<std::int64_t>()})};
  if (op == "argmin") return {lax::argmin(a.at(0), {attrs.at("axis").get<std::int64_t>()})};
  if (op == "dot_general")
    return {lax::dot_general(a.at(0), a.at(1),
                             {.lhs_contracting = axes(attrs, "lhs_contracting"),
                              .rhs_contracting = axes(attrs, "rhs_contracting"),
                              .lhs_batch = axes(attrs, "lhs_batch"),
                              .rhs_batch = axes(attrs, "rhs_batch")})};
  if (op == "softplus") return {lax::log1p(lax::exp(a.at(0)))};
  if (op == "logsumexp") {
    const Array& x = a.at(0);
    const std::int64_t axis = attrs.at("axis").get<std::int64_t>();
    const Array m = lax::reduce_max(x, {axis});
    lax::Axes keep;
    for (std::int64_t d = 0; d < x.ndim(); ++d)
      if (d != axis) keep.push_back(d);
    const Array shifted = lax::sub(x, lax::broadcast_in_dim(m, x.shape(), keep));
    return {lax::add(lax::log(lax::reduce_sum(lax::exp(shifted), {axis})), m)};
  }
  if (op == "dense_tanh") {
    const Array y = lax::dot_general(
        a.at(0), a.at(1),
        {.lhs_contracting = {1}, .rhs_contracting = {0}, .lhs_batch = {}, .rhs_batch = {}});
    return {lax::tanh(lax::add(y, lax::broadcast_in_dim(a.at(2), y.shape(), {1})))};
  }
  if (op == "two_outputs")
    return {lax::mul(a.at(0), a.at(1)), lax::add(lax::sin(a.at(0)), a.at(1))};
  throw std::runtime_error("no C++ twin for op " + op);
}

ArrayFunction function_of(const Case& c) {
  return [&c](const Arrays& a) { return twin(c.op, c.attrs, a); };
}

// ---- comparing ------------------------------------------------------------------------------

// weft and JAX evaluate in f32 with different libraries (PoCL's OpenCL builtins, XLA's CPU
// code) and sum in different orders, so values agree to a few ulp per op, not bit for bit.
// An element may differ by rtol times its own magnitude plus the array's largest magnitude
// (a sum or a dot that cancels keeps the error of its larger terms). OpenCL allows up to 16
// ulp for pow and erf and several for the other transcendentals; their derivatives chain a
// few of them, so those cases get 5e-5 instead of 1e-5. (The worst seen with PoCL is 3e-7 of
// that scale, for tanh's derivative: the bounds leave room for other libm builds.)
double tolerance_for(const std::string& op) {
  static const std::set<std::string> transcendental{
      "exp",   "exp2",     "log",       "log1p",      "expm1",      "sqrt", "rsqrt",
      "sin",   "cos",      "tan",       "tanh",       "logistic",   "erf",  "pow",
      "atan2", "softplus", "logsumexp", "dense_tanh", "two_outputs"};
  return transcendental.contains(op) ? 5e-5 : 1e-5;
}

// ---- the transformations, as one function of device arrays each (for eager and jit) ------------

// jvp: the inputs, then their tangents -> the primal outputs, then the tangent outputs.
Arrays run_jvp(const Case& c, const Arrays& args) {
  const std::size_t n = c.inputs.size();
  const JvpResult r = jvp(function_of(c), head(args, n), tail(args, n));
  Arrays out = r.primals_out;
  out.insert(out.end(), r.tangents_out.begin(), r.tangents_out.end());
  return out;
}

// vjp: the inputs, then the output cotangents -> the primal outputs, then input cotangents.
Arrays run_vjp(const Case& c, const Arrays& args) {
  const std::size_t n = c.inputs.size();
  const VjpResult r = vjp(function_of(c), head(args, n));
  Arrays out = r.primals_out;
  const Arrays cts = r.pullback(tail(args, n));
  out.insert(out.end(), cts.begin(), cts.end());
  return out;
}

Arrays run_vmap(const Case& c, const Arrays& args) {
  return vmap(function_of(c), {.in_axes = c.in_axes, .out_axes = {}})(args);
}

Hosts concat(Hosts a, const Hosts& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

struct Transform {
  const char* name;
  Arrays (*run)(const Case&, const Arrays&);
  Hosts (*arguments)(const Case&);
  Hosts (*expected)(const Case&);
};

const Transform kJvp{"jvp", run_jvp, [](const Case& c) { return concat(c.inputs, c.tangents); },
                     [](const Case& c) { return concat(c.jvp_primals, c.jvp_tangents); }};
const Transform kVjp{"vjp", run_vjp, [](const Case& c) { return concat(c.inputs, c.cotangents); },
                     [](const Case& c) { return concat(c.jvp_primals, c.vjp_cotangents); }};
const Transform kVmap{"vmap", run_vmap, [](const Case& c) { return c.vmap_inputs; },
                      [](const Case& c) { return c.vmap_outputs; }};

// ---- the tests: one per case and transformation ---------------------------------------------

// Every case's three transformations in one jit program (the first check builds it), checked on
// the device and in the interpreter; eagerly, each transformation of the first case of each op
// (eager transformations stage every op as its own program: a cold build each).
testing::OracleTable& oracle_table() {
  static testing::OracleTable table = [] {
    std::vector<testing::OracleCase> cases;
    for (const Case& c : all_cases())
      for (const Transform* t : {&kJvp, &kVjp, &kVmap})
        cases.push_back(
            {.name = c.name + " " + t->name,
             .eager_group = c.op + " " + t->name,
             .args = t->arguments(c),
             .expected = t->expected(c),
             .fn = [&c, t](const Arrays& a) { return t->run(c, a); },
             .compare =
                 [rtol = tolerance_for(c.op)](const HostArray& got, const HostArray& want) {
                   return testing::compare_values(got, want, rtol);
                 }});
    return testing::OracleTable(std::move(cases), "transforms_oracle_cases");
  }();
  return table;
}

class TransformsOracle : public ::testing::TestWithParam<std::size_t> {
 protected:
  void check(const Transform& t) {
    oracle_table().expect_case(all_cases().at(GetParam()).name + " " + t.name);
  }
};

TEST_P(TransformsOracle, Jvp) {
  check(kJvp);
}

TEST_P(TransformsOracle, Vjp) {
  check(kVjp);
}

TEST_P(TransformsOracle, Vmap) {
  check(kVmap);
}

std::string case_name(const ::testing::TestParamInfo<std::size_t>& info) {
  return all_cases().at(info.param).name;
}

std::vector<std::size_t> case_indices() {
  std::vector<std::size_t> out;
  for (std::size_t i = 0; i < all_cases().size(); ++i) out.push_back(i);
  return out;
}

INSTANTIATE_TEST_SUITE_P(Jax, TransformsOracle, ::testing::ValuesIn(case_indices()), case_name);

// The table itself: it loaded, every op has a twin, and the spread of ops and transformations is
// there.
TEST(CaseTable, CoversThePrimitives) {
  ASSERT_EQ(oracle().error, "");
  const std::vector<Case>& cases = all_cases();
  ASSERT_GE(cases.size(), 80u);
  std::set<std::string> ops;
  int shared = 0, mapped_off_axis_zero = 0;
  for (const Case& c : cases) {
    ops.insert(c.op);
    // Traced, not run: running every twin eagerly would build a program per op.
    EXPECT_NO_THROW(jit(function_of(c)).lower(device_arrays(c.inputs))) << c.name;
    for (const std::optional<int>& axis : c.in_axes) {
      shared += !axis.has_value();
      mapped_off_axis_zero += axis.value_or(0) != 0;
    }
  }
  for (const auto& [name, fn] : unaries()) EXPECT_TRUE(ops.contains(name)) << name;
  for (const auto& [name, fn] : binaries()) EXPECT_TRUE(ops.contains(name)) << name;
  for (const char* op :
       {"select", "convert", "broadcast_in_dim", "reshape", "transpose", "slice", "dynamic_slice",
        "dynamic_update_slice", "concatenate", "pad", "reduce_sum", "reduce_prod", "reduce_max",
        "reduce_min", "argmax", "argmin", "dot_general"})
    EXPECT_TRUE(ops.contains(op)) << op;
  EXPECT_GE(shared, 5);
  EXPECT_GE(mapped_off_axis_zero, 5);
}

}  // namespace
}  // namespace weft
