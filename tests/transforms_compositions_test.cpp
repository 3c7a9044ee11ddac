// Compositions of weft's transformations, and their rules through control flow, against JAX.
// Every case of tests/data/transforms_oracle/compositions.json (written by
// tools/oracles/transforms_compositions.py with JAX on CPU) names a function ("fn"): its C++
// twin below computes the same with weft's API (grad of vmap, vmap of grad, jacfwd, jacrev,
// hessian, jvp of grad, value_and_grad with has_aux; jvp, vjp and vmap through lax::cond,
// switch_, fori_loop, scan and while_loop). Each runs eagerly on the default device and must
// give JAX's dtype, shape and values; cases marked "jit" also run inside weft::jit. A case with
// an "error" must raise it (reverse mode through a while loop, refused as JAX refuses it).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "support/oracle_json.h"
#include "weft/control_flow.h"
#include "weft/np.h"
#include "weft/ops.h"
#include "weft/transforms/grad.h"
#include "weft/transforms/jacobian.h"
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
  std::string name, fn, error;
  Hosts inputs, outputs;
  bool jit = false;
};

std::vector<Case> load_cases() {
  const auto path = std::filesystem::path(WEFT_TRANSFORMS_ORACLE_DIR) / "compositions.json";
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot open " + path.string());
  const json doc = json::parse(in);
  std::vector<Case> cases;
  for (const json& c : doc.at("cases")) {
    Case k;
    k.name = c.at("name");
    k.fn = c.at("fn");
    k.error = c.value("error", "");
    k.inputs = host_arrays(c.at("inputs"));
    k.outputs = host_arrays(c.at("outputs"));
    k.jit = c.value("jit", false);
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

// ---- generic transformations of a function of a list of arrays -------------------------------

Arrays head(const Arrays& a, std::size_t count) {
  return Arrays(a.begin(), a.begin() + static_cast<std::ptrdiff_t>(count));
}

Arrays tail(const Arrays& a, std::size_t from) {
  return Arrays(a.begin() + static_cast<std::ptrdiff_t>(from), a.end());
}

Arrays concat(Arrays a, const Arrays& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

ArrayFunction one(std::function<Array(const Arrays&)> f) {
  return [f = std::move(f)](const Arrays& a) { return Arrays{f(a)}; };
}

// The inputs are the primals, then one tangent each; returns f's outputs, then their tangents.
ArrayFunction jvp_of(ArrayFunction f) {
  return [f = std::move(f)](const Arrays& a) {
    const std::size_t n = a.size() / 2;
    const JvpResult r = jvp(f, head(a, n), tail(a, n));
    return concat(r.primals_out, r.tangents_out);
  };
}

// The inputs are n primals, then one cotangent per output; returns f's outputs, then one
// cotangent per input.
ArrayFunction vjp_of(ArrayFunction f, std::size_t n) {
  return [f = std::move(f), n](const Arrays& a) {
    const VjpResult r = vjp(f, head(a, n));
    return concat(r.primals_out, r.pullback(tail(a, n)));
  };
}

constexpr std::optional<int> kShared = std::nullopt;

// ---- the functions, as tools/oracles/transforms_compositions.py writes them --------------------

Array matmul(const Array& a, const Array& b) {
  return lax::dot_general(
      a, b, {.lhs_contracting = {1}, .rhs_contracting = {0}, .lhs_batch = {}, .rhs_batch = {}});
}

// A two-layer tanh MLP: a[0..3] are w1 [3,4], b1 [4], w2 [4,2], b2 [2]; x one example [3] or a
// batch [n, 3].
Array mlp_out(const Arrays& a, const Array& x) {
  return np::matmul(np::tanh(np::matmul(x, a[0]) + a[1]), a[2]) + a[3];
}

// (w1, b1, w2, b2, x, y) -> the squared error.
Array mlp_loss(const Arrays& a) {
  const Array d = mlp_out(a, a[4]) - a[5];
  return np::sum(d * d);
}

Arrays mlp_loss_aux(const Arrays& a) {
  const Array out = mlp_out(a, a[4]);
  const Array d = out - a[5];
  return {np::sum(d * d), out, np::sum(d * d, {1})};
}

const GradOptions kParams{.argnums = {0, 1, 2, 3}};
const VmapOptions kPerExample{.in_axes = {kShared, kShared, kShared, kShared, 0, 0},
                              .out_axes = {}};

Array softplus(const Array& x) {
  return np::log1p(np::exp(x));
}

Array softplus_sum(const Array& x) {
  return np::sum(softplus(x));
}

// sin(a b) and sum(sin(a b) * a b) for a [3, 4], b [4, 2].
Array bilinear(const Arrays& a) {
  return np::sin(matmul(a[0], a[1]));
}

Array bilinear_loss(const Arrays& a) {
  const Array p = matmul(a[0], a[1]);
  return np::sum(np::sin(p) * p);
}

// sin(x) * y when sum(x) > 0, else x³ - y.
Array cond_fn(const Array& x, const Array& y) {
  return lax::cond(
      np::sum(x) > 0.0, [](const Array& a, const Array& b) { return np::sin(a) * b; },
      [](const Array& a, const Array& b) { return a * a * a - b; }, x, y);
}

Array cond_loss(const Arrays& a) {
  return np::sum(cond_fn(a[0], a[1]) * a[0]);
}

Array switch_fn(const Array& i, const Array& x) {
  return lax::switch_(i,
                      std::make_tuple([](const Array& v) { return np::exp(v); },
                                      [](const Array& v) { return v * v; },
                                      [](const Array& v) { return np::cos(v) * 3.0; }),
                      x);
}

// Five steps of c = sin(c) w + c / 2 + i / 10 for i in [1, 6): static bounds, a scan.
Array fori_fn(const Array& x, const Array& w) {
  return lax::fori_loop(
      1, 6,
      [&](const Array& i, const Array& c) {
        return np::sin(c) * w + c * 0.5 + lax::convert_element_type(i, DType::F32) * 0.1;
      },
      x);
}

// n steps of c = tanh(c w) + 0.5 with an array bound n: a while loop.
Array fori_dynamic(const Array& n, const Array& x, const Array& w) {
  return lax::fori_loop(
      0, n, [&](const Array&, const Array& c) { return np::tanh(c * w) + 0.5; }, x);
}

// h = tanh(w h + x) over the rows of xs: the last h, and every h² stacked.
Arrays rnn(const Array& w, const Array& h0, const Array& xs, bool reverse) {
  auto [last, ys] = lax::scan(
      [&](const Array& h, const Array& x) {
        const Array next = np::tanh(matmul(w, h) + x);
        return std::pair<Array, Array>(next, next * next);
      },
      h0, xs, lax::ScanOptions{.reverse = reverse});
  return {last, ys};
}

ArrayFunction rnn_of(bool reverse) {
  return [reverse](const Arrays& a) { return rnn(a[0], a[1], a[2], reverse); };
}

// Doubles c and adds x while sum(c) < 10: the trip count depends on the data.
Array while_grow(const Array& c0, const Array& x) {
  return lax::while_loop([](const Array& c) { return np::sum(c) < 10.0; },
                         [&](const Array& c) { return c * 2.0 + x; }, c0);
}

// The same, as functions of the case's inputs.
Array softplus_of(const Arrays& a) {
  return softplus(a[0]);
}
Array softplus_sum_of(const Arrays& a) {
  return softplus_sum(a[0]);
}
Array mlp_out_of(const Arrays& a) {
  return mlp_out(a, a[4]);
}
Array cond_of(const Arrays& a) {
  return cond_fn(a[0], a[1]);
}
Array switch_of(const Arrays& a) {
  return switch_fn(a[0], a[1]);
}
Array fori_of(const Arrays& a) {
  return fori_fn(a[0], a[1]);
}
Array fori_dynamic_of(const Arrays& a) {
  return fori_dynamic(a[0], a[1], a[2]);
}
Array while_of(const Arrays& a) {
  return while_grow(a[0], a[1]);
}

VmapOptions mapped(std::vector<std::optional<int>> in_axes) {
  return {.in_axes = std::move(in_axes), .out_axes = {}};
}

// The C++ twins, keyed by the cases' "fn".
const std::map<std::string, ArrayFunction>& twins() {
  const GradOptions both{.argnums = {0, 1}};
  static const std::map<std::string, ArrayFunction> all{
      // The MLP.
      {"mlp_grad", grad(one(mlp_loss), kParams)},
      {"mlp_grad_of_vmap",
       grad(one([](const Arrays& a) { return np::sum(vmap(one(mlp_loss), kPerExample)(a).at(0)); }),
            kParams)},
      {"mlp_vmap_of_grad", vmap(grad(one(mlp_loss), kParams), kPerExample)},
      {"mlp_jacfwd", jacfwd(one(mlp_out_of), {.argnums = {0, 4}})},
      {"mlp_jacrev", jacrev(one(mlp_out_of), {.argnums = {0, 4}})},
      {"mlp_hessian", hessian(one(mlp_loss), {.argnums = {0, 2}})},
      // jvp of the gradient in the parameters (the batch closed over): Hessian-vector products.
      {"mlp_hvp",
       [](const Arrays& a) {
         const ArrayFunction g = grad(one(mlp_loss), kParams);
         const ArrayFunction of_params = [g, xs = a[4], ys = a[5]](const Arrays& p) {
           return g(concat(p, {xs, ys}));
         };
         const JvpResult r = jvp(of_params, head(a, 4), tail(a, 6));
         return concat(r.primals_out, r.tangents_out);
       }},
      {"mlp_value_and_grad_aux",
       value_and_grad(mlp_loss_aux, {.argnums = {0, 1, 2, 3}, .has_aux = true})},
      // The softplus sum.
      {"softplus_grad", grad(one(softplus_sum_of))},
      {"softplus_grad_of_vmap",
       grad(one([](const Arrays& a) { return np::sum(vmap(one(softplus_sum_of))(a).at(0)); }))},
      {"softplus_vmap_of_grad", vmap(grad(one(softplus_sum_of)))},
      {"softplus_jacfwd", jacfwd(one(softplus_of))},
      {"softplus_jacrev", jacrev(one(softplus_of))},
      {"softplus_hessian", hessian(one(softplus_sum_of))},
      {"softplus_vmap_of_hessian", vmap(hessian(one(softplus_sum_of)))},
      {"softplus_hvp", jvp_of(grad(one(softplus_sum_of)))},
      {"softplus_value_and_grad_aux", value_and_grad(
                                          [](const Arrays& a) {
                                            return Arrays{softplus_sum(a[0]), softplus(a[0])};
                                          },
                                          {.has_aux = true})},
      // dot_general.
      {"bilinear_grad", grad(one(bilinear_loss), both)},
      {"bilinear_grad_of_vmap",
       grad(one([](const Arrays& a) {
              return np::sum(vmap(one(bilinear_loss), mapped({0, kShared}))(a).at(0));
            }),
            both)},
      {"bilinear_vmap_of_grad", vmap(grad(one(bilinear_loss), both), mapped({0, kShared}))},
      {"bilinear_vmap_of_grad_axis2", vmap(grad(one(bilinear_loss), both), mapped({kShared, 2}))},
      {"bilinear_jacfwd", jacfwd(one(bilinear), {.argnums = {0, 1}})},
      {"bilinear_jacrev", jacrev(one(bilinear), {.argnums = {0, 1}})},
      {"bilinear_hessian", hessian(one(bilinear_loss), {.argnums = {0, 1}})},
      {"bilinear_hvp", jvp_of(grad(one(bilinear_loss), both))},
      {"bilinear_value_and_grad_aux", value_and_grad(
                                          [](const Arrays& a) {
                                            return Arrays{bilinear_loss(a), matmul(a[0], a[1])};
                                          },
                                          {.argnums = {0, 1}, .has_aux = true})},
      // cond.
      {"cond_jvp", jvp_of(one(cond_of))},
      {"cond_vjp", vjp_of(one(cond_of), 2)},
      {"cond_vmap", vmap(one(cond_of))},
      {"cond_vmap_shared_predicate", vmap(one(cond_of), mapped({kShared, 0}))},
      {"cond_vmap_of_grad", vmap(grad(one(cond_loss), both))},
      {"cond_hessian", hessian(one(cond_loss))},
      // switch_.
      {"switch_jvp", jvp_of(one(switch_of))},
      {"switch_vjp", vjp_of(one(switch_of), 2)},
      {"switch_vmap", vmap(one(switch_of))},
      {"switch_vmap_shared_index", vmap(one(switch_of), mapped({kShared, 0}))},
      // fori_loop with static bounds.
      {"fori_jvp", jvp_of(one(fori_of))},
      {"fori_vjp", vjp_of(one(fori_of), 2)},
      {"fori_vmap", vmap(one(fori_of), mapped({0, kShared}))},
      // The Hessian in x, w closed over.
      {"fori_hessian",
       [](const Arrays& a) {
         return hessian(one([w = a[1]](const Arrays& b) { return np::sum(fori_fn(b[0], w)); }))(
             {a[0]});
       }},
      // scan.
      {"scan_jvp", jvp_of(rnn_of(false))},
      {"scan_vjp", vjp_of(rnn_of(false), 3)},
      {"scan_vmap", vmap(rnn_of(false), mapped({kShared, 0, 0}))},
      {"scan_vmap_of_grad", vmap(grad(one([](const Arrays& a) {
                                   const Arrays r = rnn(a[0], a[1], a[2], false);
                                   return np::sum(r[0]) + 0.3 * np::sum(r[1]);
                                 })),
                                 mapped({kShared, 0, 0}))},
      {"scan_reverse_jvp", jvp_of(rnn_of(true))},
      {"scan_reverse_vjp", vjp_of(rnn_of(true), 3)},
      {"scan_reverse_vmap", vmap(rnn_of(true), mapped({kShared, 0, 1}))},
      // while_loop, and fori_loop with an array bound (a while loop).
      {"while_jvp", jvp_of(one(while_of))},
      {"while_vmap", vmap(one(while_of))},
      {"while_jvp_of_vmap", jvp_of(vmap(one(while_of)))},
      {"while_vmap_of_jvp", vmap(jvp_of(one(while_of)))},
      {"fori_dynamic_jvp", jvp_of(one(fori_dynamic_of))},
      {"fori_dynamic_vmap", vmap(one(fori_dynamic_of), mapped({0, 0, kShared}))},
      {"fori_dynamic_vmap_shared_bound", vmap(one(fori_dynamic_of), mapped({kShared, 0, 0}))},
      // Reverse mode through a while loop (refused).
      {"while_grad", grad(one([](const Arrays& a) { return np::sum(while_of(a)); }), both)},
  };
  return all;
}

// ---- comparing ------------------------------------------------------------------------------

// weft and JAX evaluate in f32 with different libraries (PoCL's OpenCL builtins, XLA's CPU
// code) and sum in different orders, so values agree to a few ulp per op, not bit for bit.
// An element may differ by rtol times its own magnitude plus the array's largest magnitude
// (a sum or a dot that cancels keeps the error of its larger terms). These cases chain
// transcendental ops (tanh, sin, exp, log1p, several of them per derivative) through up to
// two levels of differentiation and loops of up to six steps, each adding its rounding, so
// they get the 5e-5 that transforms_oracle_test.cpp gives its transcendental chains. (The worst
// seen with PoCL is 2e-7 of that scale, for vmap of hessian: the bound leaves room for other
// libm builds.)
constexpr double kRtol = 5e-5;

// Empty when `got` matches `want` within kRtol (oracle_json.h says how).
std::string compare(const HostArray& got, const HostArray& want) {
  return testing::compare_values(got, want, kRtol);
}

// ---- the tests: one per case, eagerly and (for the cases marked "jit") inside weft::jit -------

class CompositionsOracle : public ::testing::TestWithParam<std::size_t> {
 protected:
  const Case& the_case() const { return all_cases().at(GetParam()); }

  void check(bool under_jit) {
    const Case& c = the_case();
    const ArrayFunction& f = twins().at(c.fn);
    const Arrays args = device_arrays(c.inputs);
    const std::string what = c.name + (under_jit ? " under jit" : "") + " output";
    Arrays got;
    try {
      got = under_jit ? jit(f)(args) : f(args);
    } catch (const std::exception& e) {
      FAIL() << what << ": threw " << e.what();
    }
    ASSERT_EQ(got.size(), c.outputs.size()) << what;
    for (std::size_t k = 0; k < got.size(); ++k)
      EXPECT_EQ(compare(got[k].to_host(), c.outputs[k]), "") << what << " " << k;
  }
};

TEST_P(CompositionsOracle, Eager) {
  check(false);
}

class CompositionsOracleUnderJit : public CompositionsOracle {};

TEST_P(CompositionsOracleUnderJit, Jit) {
  check(true);
}

// The cases JAX refuses: weft raises the error the case names.
class CompositionsOracleRefused : public CompositionsOracle {};

TEST_P(CompositionsOracleRefused, Raises) {
  const Case& c = the_case();
  ASSERT_EQ(c.error, "TransformError") << c.name;
  const Arrays args = device_arrays(c.inputs);
  try {
    twins().at(c.fn)(args);
    ADD_FAILURE() << c.name << ": did not raise";
  } catch (const TransformError& e) {
    // Raised for the loop, not for something else on the way.
    EXPECT_NE(std::string(e.what()).find("while_loop"), std::string::npos) << e.what();
  }
}

enum class Kind { value, jit, error };

std::vector<std::size_t> case_indices(Kind kind) {
  std::vector<std::size_t> out;
  for (std::size_t i = 0; i < all_cases().size(); ++i) {
    const Case& c = all_cases()[i];
    const bool wanted = kind == Kind::error ? !c.error.empty()
                        : kind == Kind::jit ? c.error.empty() && c.jit
                                            : c.error.empty();
    if (wanted) out.push_back(i);
  }
  return out;
}

std::string case_name(const ::testing::TestParamInfo<std::size_t>& info) {
  return all_cases().at(info.param).name;
}

INSTANTIATE_TEST_SUITE_P(Jax, CompositionsOracle, ::testing::ValuesIn(case_indices(Kind::value)),
                         case_name);
INSTANTIATE_TEST_SUITE_P(Jax, CompositionsOracleUnderJit,
                         ::testing::ValuesIn(case_indices(Kind::jit)), case_name);
INSTANTIATE_TEST_SUITE_P(Jax, CompositionsOracleRefused,
                         ::testing::ValuesIn(case_indices(Kind::error)), case_name);

// The table itself: it loaded, every case has a twin and every twin a case, every value case
// compares outputs, and each composition and control-flow primitive is there.
TEST(CompositionsTable, CoversTheCompositionsAndControlFlow) {
  ASSERT_EQ(oracle().error, "");
  const std::vector<Case>& cases = all_cases();
  std::set<std::string> used;
  int jitted = 0, refused = 0;
  for (const Case& c : cases) {
    EXPECT_TRUE(twins().contains(c.fn)) << c.name << ": no twin " << c.fn;
    used.insert(c.fn);
    jitted += c.jit;
    refused += !c.error.empty();
    if (c.error.empty()) {
      EXPECT_FALSE(c.outputs.empty()) << c.name;
    }
  }
  for (const auto& [name, fn] : twins()) EXPECT_TRUE(used.contains(name)) << name << " unused";
  for (const std::string prefix : {"mlp", "softplus", "bilinear"})
    for (const char* transform : {"_grad", "_grad_of_vmap", "_vmap_of_grad", "_jacfwd", "_jacrev",
                                  "_hessian", "_hvp", "_value_and_grad_aux"})
      EXPECT_TRUE(used.contains(prefix + transform)) << prefix + transform;
  for (const std::string primitive : {"cond", "switch", "fori", "scan", "scan_reverse"})
    for (const char* transform : {"_jvp", "_vjp", "_vmap"})
      EXPECT_TRUE(used.contains(primitive + transform)) << primitive + transform;
  for (const char* fn : {"while_jvp", "while_vmap", "fori_dynamic_vmap", "while_grad"})
    EXPECT_TRUE(used.contains(fn)) << fn;
  EXPECT_GE(jitted, 20);
  EXPECT_EQ(refused, 1);
}

}  // namespace
}  // namespace weft
