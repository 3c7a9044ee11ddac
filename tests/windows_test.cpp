// The windowed reductions, their select_and_* derivatives and pooling against JAX
// (tools/oracles/windows.py writes the cases): every case runs under jit (all cases as one program;
// the first forward case of each op eagerly too) on the default device, and in the reference
// interpreter on the graph jit traced; the results must be JAX's (NaN where JAX has NaN). Cases
// cover 1-D to 3-D windows (NHWC and NCHW), strides, padding (negative too), base and window
// dilation, ties, -inf and NaN, integer, f16 and f64 operands, gradients (through
// select_and_scatter_add), jvp (through select_and_gather_add), vmap, and flax's max_pool and
// avg_pool.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "support/oracle_cases.h"
#include "support/oracle_json.h"
#include "support/transform_check.h"
#include "weft/interp/interpreter.h"
#include "weft/transforms/grad.h"
#include "weft/transforms/jvp.h"
#include "weft/transforms/vmap.h"
#include "weft/weft.h"

namespace weft {
namespace {

using nlohmann::json;

std::vector<std::int64_t> ints(const json& attrs, const char* name) {
  return attrs.contains(name) ? attrs.at(name).get<std::vector<std::int64_t>>()
                              : std::vector<std::int64_t>{};
}

WindowAttrs window_attrs(const json& a) {
  return {ints(a, "window_dimensions"), ints(a, "window_strides"), ints(a, "padding_low"),
          ints(a, "padding_high"),      ints(a, "base_dilation"),  ints(a, "window_dilation")};
}

struct Case {
  std::string name, op, transform;
  json attrs;
  std::vector<HostArray> args, expected;
  std::vector<int> argnums;
  std::vector<std::optional<int>> in_axes;
};

std::vector<Case> load_cases() {
  std::ifstream in(std::string(WEFT_WINDOWS_ORACLE_DIR) + "/cases.json");
  if (!in) throw std::runtime_error("cannot read the windows oracle");
  const json doc = json::parse(in);
  std::vector<Case> cases;
  for (const char* list : {"cases", "pool_cases"})
    for (const json& c : doc.at(list)) {
      const bool pool = c.contains("fn");
      Case k{c.at("name"),
             pool ? c.at("fn") : c.at("op"),
             c.at("transform"),
             pool ? c.at("params") : c.at("attrs"),
             {},
             {},
             {},
             {}};
      for (const json& a : c.at("args")) k.args.push_back(testing::host_array(a));
      for (const json& e : c.at("expected")) k.expected.push_back(testing::host_array(e));
      if (pool && k.transform == "grad") k.argnums = {0};
      if (c.contains("argnums")) k.argnums = c.at("argnums").get<std::vector<int>>();
      if (c.contains("in_axes"))
        for (const json& axis : c.at("in_axes"))
          k.in_axes.push_back(axis.is_null() ? std::nullopt : std::optional<int>(axis.get<int>()));
      cases.push_back(std::move(k));
    }
  return cases;
}

np::PoolPadding pool_padding(const json& params) {
  if (!params.contains("padding")) return {};
  const json& p = params.at("padding");
  if (p.is_string()) return np::PoolPadding(p.get<std::string>().c_str());
  std::vector<std::pair<std::int64_t, std::int64_t>> pairs;
  for (const json& pair : p) pairs.emplace_back(pair.at(0).get<int>(), pair.at(1).get<int>());
  return np::PoolPadding(pairs);
}

Shape shape_param(const json& params, const char* name) {
  return params.contains(name) && !params.at(name).is_null() ? params.at(name).get<Shape>()
                                                             : Shape{};
}

// The case's primitive (or pool) on its operands.
Array apply_op(const Case& c, const std::vector<Array>& xs) {
  if (c.op == "max_pool")
    return np::max_pool(xs[0], shape_param(c.attrs, "window_shape"),
                        shape_param(c.attrs, "strides"), pool_padding(c.attrs));
  if (c.op == "avg_pool")
    return np::avg_pool(xs[0], shape_param(c.attrs, "window_shape"),
                        shape_param(c.attrs, "strides"), pool_padding(c.attrs),
                        c.attrs.value("count_include_pad", true));
  const WindowAttrs w = window_attrs(c.attrs);
  if (c.op == "reduce_window_sum") return lax::reduce_window_sum(xs[0], w);
  if (c.op == "reduce_window_max") return lax::reduce_window_max(xs[0], w);
  if (c.op == "reduce_window_min") return lax::reduce_window_min(xs[0], w);
  const bool chooses_max = c.attrs.at("select_prim") == "ge";
  if (c.op == "select_and_gather_add")
    return lax::select_and_gather_add(xs[0], xs[1], chooses_max, w);
  if (c.op == "select_and_scatter_add")
    return lax::select_and_scatter_add(xs[0], xs[1], chooses_max, w);
  throw std::runtime_error("unknown op " + c.op);
}

Array sum_all(const Array& y) {
  lax::Axes all;
  for (std::size_t d = 0; d < y.shape().size(); ++d) all.push_back(static_cast<std::int64_t>(d));
  return lax::reduce_sum(y, all);
}

// The case's function of all its arguments: the op, its gradient (first or second order), its
// jvp or its vmap.
std::vector<Array> run_case_fn(const Case& c, const std::vector<Array>& xs) {
  auto op = [&c](const std::vector<Array>& a) { return std::vector<Array>{apply_op(c, a)}; };
  if (c.transform == "none") return op(xs);
  if (c.transform == "grad") {
    auto loss = [&c](const std::vector<Array>& a) {
      const Array y = apply_op(c, std::vector<Array>(a.begin(), a.end() - 1));
      return std::vector<Array>{sum_all(lax::mul(y, a.back()))};
    };
    return grad(loss, GradOptions{c.argnums})(xs);
  }
  if (c.transform == "grad_grad") {
    // d/dw of sum(grad_x(sum(op(x) * w)) * v), on [x, w, v].
    auto inner = [&c](const std::vector<Array>& a) {
      auto loss = [&c](const std::vector<Array>& b) {
        return std::vector<Array>{sum_all(lax::mul(apply_op(c, {b[0]}), b[1]))};
      };
      return grad(loss, GradOptions{{0}})(a);
    };
    auto outer = [inner](const std::vector<Array>& a) {
      return std::vector<Array>{sum_all(lax::mul(inner({a[0], a[1]})[0], a[2]))};
    };
    return grad(outer, GradOptions{{1}})(xs);
  }
  if (c.transform == "vmap_grad") {
    auto per_example = [&c](const std::vector<Array>& a) {
      auto loss = [&c](const std::vector<Array>& b) {
        return std::vector<Array>{sum_all(lax::mul(apply_op(c, {b[0]}), b[1]))};
      };
      return grad(loss, GradOptions{{0}})(a);
    };
    return vmap(per_example, VmapOptions{c.in_axes, {}})(xs);
  }
  if (c.transform == "jvp") {
    const std::size_t n = xs.size() / 2;
    const JvpResult r = jvp(op, std::vector<Array>(xs.begin(), xs.begin() + n),
                            std::vector<Array>(xs.begin() + n, xs.end()));
    return {r.primals_out[0], r.tangents_out[0]};
  }
  return vmap(op, VmapOptions{c.in_axes, {}})(xs);
}

class WindowsOracle : public ::testing::TestWithParam<Case> {};

const testing::LoadedCases<Case>& loaded() {
  static const auto cases = testing::load_or_explain(load_cases);
  return cases;
}

// Every case in one jit program (the first check builds it), on the device and in the
// interpreter; eagerly, only the first untransformed case of each op.
testing::OracleTable& oracle_table() {
  static testing::OracleTable table = [] {
    std::vector<testing::OracleCase> cases;
    for (const Case& c : loaded().cases)
      cases.push_back({.name = c.name,
                       .eager_group = c.transform == "none" ? c.op : "",
                       .args = c.args,
                       .expected = c.expected,
                       .fn = [&c](const std::vector<Array>& xs) { return run_case_fn(c, xs); },
                       .compare =
                           [](const HostArray& got, const HostArray& want) {
                             return testing::compare_values_nonfinite(got, want, 1e-5);
                           }});
    return testing::OracleTable(std::move(cases), "windows_cases");
  }();
  return table;
}

TEST_P(WindowsOracle, MatchesJaxOnDeviceAndInterpreter) {
  oracle_table().expect_case(GetParam().name);
}

TEST(WindowsOracleFile, Loads) {
  EXPECT_EQ(loaded().error, "");
  EXPECT_FALSE(loaded().cases.empty());
}

INSTANTIATE_TEST_SUITE_P(Jax, WindowsOracle, ::testing::ValuesIn(loaded().cases),
                         [](const ::testing::TestParamInfo<Case>& info) {
                           return info.param.name;
                         });

// Each transpose against its jvp by the adjoint identity <ct, J t> = <J^T ct, t>, on random
// data (distinct values: no ties) and attributes the oracle does not cover.
double dot(const Array& a, const Array& b) {
  const HostArray x = a.to_host(), y = b.to_host();
  double s = 0;
  for (std::int64_t i = 0; i < x.size(); ++i) s += x.get_f64(i) * y.get_f64(i);
  return s;
}

TEST(WindowsTranspose, AdjointIdentity) {
  std::mt19937 rng(29);
  const WindowAttrs sum_window{.window_dimensions = {2, 3, 2},
                               .window_strides = {1, 2, 3},
                               .padding_low = {1, -1, 2},
                               .padding_high = {0, 2, 1},
                               .base_dilation = {2, 1, 3},
                               .window_dilation = {1, 2, 1}};
  const WindowAttrs pool{.window_dimensions = {1, 3, 3},
                         .window_strides = {1, 2, 1},
                         .padding_low = {0, 1, 0},
                         .padding_high = {0, 1, 2},
                         .base_dilation = {1, 1, 2}};
  const Array x = testing::random_float({3, 7, 5}, -1, 1, rng);
  const Array y = testing::random_float({3, 7, 5}, -1, 1, rng);
  const Array source = testing::random_float({3, 4, 5}, -1, 1, rng);
  WindowAttrs scatter = pool;
  scatter.base_dilation.clear();
  using Fn = std::function<Array(const Array&)>;
  const std::vector<std::pair<const char*, Fn>> cases = {
      {"reduce_window_sum", [&](const Array& a) { return lax::reduce_window_sum(a, sum_window); }},
      {"reduce_window_max", [&](const Array& a) { return lax::reduce_window_max(a, pool); }},
      {"reduce_window_min", [&](const Array& a) { return lax::reduce_window_min(a, pool); }},
      {"select_and_gather_add",
       [&](const Array& a) { return lax::select_and_gather_add(a, y, false, pool); }},
      {"select_and_scatter_add",
       [&](const Array& a) { return lax::select_and_scatter_add(a, y, true, scatter); }},
  };
  for (const auto& [name, fn] : cases) {
    const Array at = std::string(name) == "select_and_scatter_add" ? source : x;
    const ArrayFunction f = [fn = fn](const std::vector<Array>& a) {
      return std::vector<Array>{fn(a[0])};
    };
    const Array t = testing::random_float(at.shape(), -1, 1, rng);
    const Array ct = testing::random_float(fn(at).shape(), -1, 1, rng);
    // J t and J^T ct in one compiled program (eagerly, each op would build its own).
    std::function<std::vector<Array>(const std::vector<Array>&)> both =
        [f](const std::vector<Array>& a) {
          return std::vector<Array>{jvp(f, {a[0]}, {a[1]}).tangents_out[0],
                                    vjp(f, {a[0]}).pullback({a[2]})[0]};
        };
    const std::vector<Array> r =
        jit(both, {.name = "windows_adjoint"})(std::vector<Array>{at, t, ct});
    const double lhs = dot(ct, r[0]);
    const double rhs = dot(r[1], t);
    EXPECT_NEAR(lhs, rhs, 1e-4 * (1 + std::abs(lhs))) << name;
  }
}

// Errors name the op and what to fix.
Array zeros(DType t, const Shape& shape) {
  return Array::from_host(HostArray(t, shape));
}

template <typename E>
std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const E& e) {
    return e.what();
  }
  return "no error";
}

TEST(WindowsErrors, AttributesNeedOneEntryPerAxis) {
  const Array x = zeros(DType::F32, {4, 5});
  const std::string msg =
      message_of<ShapeError>([&] { lax::reduce_window_max(x, {.window_dimensions = {2}}); });
  EXPECT_NE(msg.find("reduce_window_max"), std::string::npos) << msg;
  EXPECT_NE(msg.find("window_dimensions=[2] needs one entry per axis"), std::string::npos) << msg;
}

TEST(WindowsErrors, WindowLargerThanThePaddedOperand) {
  const Array x = zeros(DType::F32, {4, 5});
  const std::string msg = message_of<ShapeError>([&] {
    lax::reduce_window_sum(x, {.window_dimensions = {2, 7}, .padding_high = {0, 1}});
  });
  EXPECT_NE(msg.find("larger than the padded, dilated operand (6)"), std::string::npos) << msg;
}

TEST(WindowsErrors, StridesMustBePositive) {
  const Array x = zeros(DType::F32, {4, 5});
  const std::string msg = message_of<ShapeError>([&] {
    lax::reduce_window_min(x, {.window_dimensions = {2, 2}, .window_strides = {1, 0}});
  });
  EXPECT_NE(msg.find("window_strides=[1,0] must be positive"), std::string::npos) << msg;
}

TEST(WindowsErrors, BoolIsRefused) {
  const Array x = zeros(DType::Bool, {4});
  const std::string msg =
      message_of<DTypeError>([&] { lax::reduce_window_max(x, {.window_dimensions = {2}}); });
  EXPECT_NE(msg.find("takes numbers, not bool"), std::string::npos) << msg;
}

TEST(WindowsErrors, SelectAndScatterAddHasNoDilation) {
  const Array x = zeros(DType::F32, {4});
  const Array source = zeros(DType::F32, {6});
  const std::string msg = message_of<ShapeError>([&] {
    lax::select_and_scatter_add(source, x, true, {.window_dimensions = {2}, .base_dilation = {2}});
  });
  EXPECT_NE(msg.find("has no dilation"), std::string::npos) << msg;
}

TEST(WindowsErrors, GradientThroughWindowDilationIsRefusedAsInJax) {
  const Array x = zeros(DType::F32, {6});
  auto loss = [](const std::vector<Array>& a) {
    const Array y =
        lax::reduce_window_max(a[0], {.window_dimensions = {2}, .window_dilation = {2}});
    return std::vector<Array>{lax::reduce_sum(y, {0})};
  };
  const std::string msg = message_of<TransformError>([&] { grad(loss)({x}); });
  EXPECT_NE(msg.find("window_dilation=[2]"), std::string::npos) << msg;
}

TEST(WindowsErrors, PoolNeedsAFeatureAxis) {
  const Array x = zeros(DType::F32, {4, 5});
  const std::string msg = message_of<ShapeError>([&] { np::max_pool(x, {2, 2}); });
  EXPECT_NE(msg.find("np::max_pool"), std::string::npos) << msg;
  EXPECT_NE(msg.find("[batch..., spatial..., features]"), std::string::npos) << msg;
}

}  // namespace
}  // namespace weft
