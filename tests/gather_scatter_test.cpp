// Gather and the scatters against JAX (tools/oracles/gather_scatter.py writes the cases): every
// case runs under jit (all cases as one program; the first forward case of each op eagerly too) on
// the default device, and in the reference interpreter on the graph jit traced; the results must be
// JAX's (NaN where JAX has NaN). Cases cover embedding lookups in every index mode, windows,
// take_along_axis through batching axes, scatters with colliding and stray indices, segment sums,
// gradients (gather's is a scatter_add) and vmap.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "support/device_check.h"
#include "support/oracle_cases.h"
#include "support/oracle_json.h"
#include "weft/interp/interpreter.h"
#include "weft/opencl/device.h"
#include "weft/transforms/grad.h"
#include "weft/transforms/vmap.h"
#include "weft/weft.h"

namespace weft {
namespace {

using nlohmann::json;

std::vector<std::int64_t> ints(const json& attrs, const char* name) {
  return attrs.at(name).get<std::vector<std::int64_t>>();
}

GatherAttrs gather_attrs(const json& a) {
  GatherAttrs g;
  g.offset_dims = ints(a, "offset_dims");
  g.collapsed_slice_dims = ints(a, "collapsed_slice_dims");
  g.start_index_map = ints(a, "start_index_map");
  g.operand_batching_dims = ints(a, "operand_batching_dims");
  g.start_indices_batching_dims = ints(a, "start_indices_batching_dims");
  g.slice_sizes = ints(a, "slice_sizes");
  g.mode = index_mode_from_name(a.at("mode").get<std::string>(), "mode");
  if (a.contains("fill_value") && !a.at("fill_value").is_null())
    g.fill_value = a.at("fill_value").get<double>();
  return g;
}

ScatterAttrs scatter_attrs(const json& a) {
  ScatterAttrs s;
  s.update_window_dims = ints(a, "update_window_dims");
  s.inserted_window_dims = ints(a, "inserted_window_dims");
  s.scatter_dims_to_operand_dims = ints(a, "scatter_dims_to_operand_dims");
  s.operand_batching_dims = ints(a, "operand_batching_dims");
  s.scatter_indices_batching_dims = ints(a, "scatter_indices_batching_dims");
  s.mode = index_mode_from_name(a.at("mode").get<std::string>(), "mode");
  s.unique_indices = a.at("unique_indices").get<int>() != 0;
  return s;
}

struct Case {
  std::string name, op, transform;
  json attrs;
  std::vector<HostArray> args, expected;
  std::vector<int> argnums;
  std::vector<std::optional<int>> in_axes;
};

std::vector<Case> load_cases() {
  std::ifstream in(std::string(WEFT_GATHER_SCATTER_ORACLE_DIR) + "/cases.json");
  if (!in) throw std::runtime_error("cannot read the gather/scatter oracle");
  const json doc = json::parse(in);
  std::vector<Case> cases;
  for (const json& c : doc.at("cases")) {
    Case k{c.at("name"), c.at("op"), c.at("transform"), c.at("attrs"), {}, {}, {}, {}};
    for (const json& a : c.at("args")) k.args.push_back(testing::host_array(a));
    for (const json& e : c.at("expected")) k.expected.push_back(testing::host_array(e));
    if (c.contains("argnums")) k.argnums = c.at("argnums").get<std::vector<int>>();
    if (c.contains("in_axes"))
      for (const json& axis : c.at("in_axes"))
        k.in_axes.push_back(axis.is_null() ? std::nullopt : std::optional<int>(axis.get<int>()));
    cases.push_back(std::move(k));
  }
  return cases;
}

// The case's primitive on its operands.
Array apply_op(const Case& c, const std::vector<Array>& xs) {
  if (c.op == "gather") return lax::gather(xs[0], xs[1], gather_attrs(c.attrs));
  const ScatterAttrs s = scatter_attrs(c.attrs);
  if (c.op == "scatter") return lax::scatter(xs[0], xs[1], xs[2], s);
  if (c.op == "scatter_add") return lax::scatter_add(xs[0], xs[1], xs[2], s);
  if (c.op == "scatter_mul") return lax::scatter_mul(xs[0], xs[1], xs[2], s);
  if (c.op == "scatter_min") return lax::scatter_min(xs[0], xs[1], xs[2], s);
  if (c.op == "scatter_max") return lax::scatter_max(xs[0], xs[1], xs[2], s);
  throw std::runtime_error("unknown op " + c.op);
}

// The case's function of all its arguments: the op, its gradient, or its vmap.
std::vector<Array> run_case_fn(const Case& c, const std::vector<Array>& xs) {
  if (c.transform == "none") return {apply_op(c, xs)};
  if (c.transform == "grad") {
    auto loss = [&c](const std::vector<Array>& a) {
      const std::vector<Array> operands(a.begin(), a.end() - 1);
      const Array y = apply_op(c, operands);
      lax::Axes all;
      for (std::size_t d = 0; d < y.shape().size(); ++d)
        all.push_back(static_cast<std::int64_t>(d));
      return std::vector<Array>{lax::reduce_sum(lax::mul(y, a.back()), all)};
    };
    return grad(loss, GradOptions{c.argnums})(xs);
  }
  auto op = [&c](const std::vector<Array>& a) { return std::vector<Array>{apply_op(c, a)}; };
  return vmap(op, VmapOptions{c.in_axes, {}})(xs);
}

class GatherScatterOracle : public ::testing::TestWithParam<Case> {};

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
    return testing::OracleTable(std::move(cases), "gather_scatter_cases");
  }();
  return table;
}

TEST_P(GatherScatterOracle, MatchesJaxOnDeviceAndInterpreter) {
  oracle_table().expect_case(GetParam().name);
}

TEST(GatherScatterOracleFile, Loads) {
  EXPECT_EQ(loaded().error, "");
  EXPECT_FALSE(loaded().cases.empty());
}

INSTANTIATE_TEST_SUITE_P(Jax, GatherScatterOracle, ::testing::ValuesIn(loaded().cases),
                         [](const ::testing::TestParamInfo<Case>& info) {
                           return info.param.name;
                         });

// Errors name the op and what to fix.
TEST(GatherScatterErrors, IndicesMustMatchTheIndexMap) {
  const Array x = Array::from_host(HostArray(DType::F32, {5, 3}));
  const Array i = Array::from_host(HostArray(DType::I32, {4, 2}));
  GatherAttrs a;
  a.offset_dims = {1};
  a.collapsed_slice_dims = {0};
  a.start_index_map = {0};
  a.slice_sizes = {1, 3};
  try {
    lax::gather(x, i, a);
    FAIL() << "no error";
  } catch (const ShapeError& e) {
    EXPECT_NE(std::string(e.what()).find("gather"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("start_index_map"), std::string::npos) << e.what();
  }
}

TEST(GatherScatterErrors, UnknownModeIsNamed) {
  EXPECT_THROW(index_mode_from_name("wrap", "mode"), InvalidGraphError);
}

// Gathers of whole rows (the trailing run at least 16 long) run one work-item per result row
// (loop_kernel.cpp): every index mode with negative and stray indices, several dtypes, a
// consumer fused after the gather, a 3-D table, and a window that also starts along the last
// axis (clamped so it fits).
TEST(GatherDevice, RowGathersMatchTheInterpreter) {
  std::mt19937 rng(30);
  const std::vector<HostArray> inputs = {
      testing::random_array(DType::F32, {40, 24}, -4, 4, rng),
      testing::random_array(DType::I32, {37}, -45, 45, rng),  // negative and out of bounds
      testing::random_array(DType::F16, {40, 32}, -4, 4, rng),
      testing::random_array(DType::I8, {40, 17}, -100, 100, rng),
      testing::random_array(DType::U64, {40, 3, 20}, 0, 1e9, rng),
      testing::random_array(DType::I32, {37, 2}, -2, 41, rng),
      testing::random_array(DType::I32, {37}, 0, 39, rng)};
  EXPECT_EQ(
      testing::check_against_interpreter(
          [](const std::vector<Array>& xs) {
            std::vector<Array> r;
            for (IndexMode mode : {IndexMode::fill, IndexMode::clip})
              r.push_back(np::take(xs[0], xs[1], 0, mode));
            r.push_back(np::take(xs[0], xs[6], 0, IndexMode::promise_in_bounds));
            r.push_back(lax::mul(np::take(xs[0], xs[1], 0), lax::slice(xs[0], {0, 0}, {37, 24})));
            r.push_back(np::take(xs[2], xs[1], 0));
            r.push_back(np::take(xs[3], xs[1], 0, IndexMode::clip));
            r.push_back(np::take(xs[4], xs[1], 0));
            GatherAttrs window;  // rows and a start along the last axis: [37, 20] of [40, 24]
            window.offset_dims = {1};
            window.collapsed_slice_dims = {0};
            window.start_index_map = {0, 1};
            window.slice_sizes = {1, 20};
            for (IndexMode mode : {IndexMode::fill, IndexMode::clip}) {
              window.mode = mode;
              r.push_back(lax::gather(xs[0], xs[5], window));
            }
            return r;
          },
          inputs, 1e-6, 1e-6),
      "");
}

// Embedding-gradient shape: thousands of updates onto a few rows, combined atomically on the
// device (compare-and-swap loops for f32, atomic_add for i32), against the interpreter.
ScatterAttrs rows_scatter() {
  ScatterAttrs a;
  a.update_window_dims = {1};
  a.inserted_window_dims = {0};
  a.scatter_dims_to_operand_dims = {0};
  return a;
}

std::vector<HostArray> colliding_inputs(DType dtype) {
  std::mt19937 rng(28);
  return {testing::random_array(dtype, {50, 8}, -4, 4, rng),
          testing::random_array(DType::I32, {4096, 1}, -2, 51, rng),  // a few strays: dropped
          testing::random_array(dtype, {4096, 8}, -4, 4, rng)};
}

std::vector<Array> scatter_ops(const std::vector<Array>& xs) {
  return {lax::scatter_add(xs[0], xs[1], xs[2], rows_scatter()),
          lax::scatter_max(xs[0], xs[1], xs[2], rows_scatter()),
          lax::scatter_mul(xs[0], xs[1], lax::div(xs[2], xs[2]), rows_scatter())};
}

TEST(ScatterDevice, ManyCollisionsMatchTheInterpreter) {
  EXPECT_EQ(
      testing::check_against_interpreter(scatter_ops, colliding_inputs(DType::F32), 1e-4, 1e-4),
      "");
  EXPECT_EQ(testing::check_against_interpreter(
                [](const std::vector<Array>& xs) {
                  return std::vector<Array>{lax::scatter_add(xs[0], xs[1], xs[2], rows_scatter()),
                                            lax::scatter_min(xs[0], xs[1], xs[2], rows_scatter())};
                },
                colliding_inputs(DType::I32), 0, 0),
            "");
}

// Both device paths of the 32-bit scatters: many updates onto a small result fold into private
// copies per work-group and merge; few updates onto a large result combine atomically. Every op,
// each 32-bit dtype, clip and fill modes (strays clamped or dropped), and segment-sum's 1-D shape.
std::vector<Array> every_scatter(const std::vector<Array>& xs) {
  std::vector<Array> results;
  for (std::size_t d = 0; d < xs.size(); d += 6) {  // one dtype's six inputs
    ScatterAttrs clip = rows_scatter(), fill = rows_scatter();
    clip.mode = IndexMode::clip;
    fill.mode = IndexMode::fill;
    const Array &small = xs[d], &rows = xs[d + 1], &updates = xs[d + 2], &large = xs[d + 3];
    results.push_back(lax::scatter_add(small, rows, updates, clip));  // privatised
    results.push_back(lax::scatter_min(small, rows, updates, fill));
    results.push_back(lax::scatter_max(small, rows, updates, clip));
    results.push_back(lax::scatter_mul(small, rows, lax::sign(updates), fill));
    results.push_back(lax::scatter_add(large, rows, updates, fill));  // atomic
    results.push_back(lax::scatter_max(large, rows, updates, clip));
    results.push_back(lax::scatter_min(large, rows, updates, clip));
    ScatterAttrs segments;
    segments.inserted_window_dims = {0};
    segments.scatter_dims_to_operand_dims = {0};
    results.push_back(lax::scatter_add(xs[d + 4], rows, xs[d + 5], segments));
  }
  return results;
}

TEST(ScatterDevice, PrivatisedAndAtomicPathsMatchTheInterpreter) {
  std::vector<HostArray> inputs;
  std::mt19937 rng(29);
  for (DType dtype : {DType::F32, DType::I32, DType::U32}) {
    const double lo = dtype == DType::U32 ? 0 : -4;
    const std::vector<HostArray> colliding = colliding_inputs(dtype);
    inputs.push_back(colliding[0]);
    inputs.push_back(colliding[1]);
    inputs.push_back(testing::random_array(dtype, {4096, 8}, lo, 4, rng));
    inputs.push_back(testing::random_array(dtype, {5000, 8}, lo, 4, rng));
    HostArray segments_out = testing::random_array(dtype, {50}, lo, 4, rng);
    if (dtype == DType::F32) segments_out.set_f64(3, -0.0);  // no update: stays -0.0
    inputs.push_back(segments_out);
    inputs.push_back(testing::random_array(dtype, {4096}, lo, 4, rng));
  }
  EXPECT_EQ(testing::check_against_interpreter(every_scatter, inputs, 1e-4, 1e-3), "");
}

// Few updates onto a large result of a 64-bit dtype: combined by 64-bit compare-and-swap where
// the device has cl_khr_int64_base_atomics (PoCL's CPU devices do; so do most GPUs, where f64
// scatters would otherwise take the ordered kernel, one work-item per result element).
TEST(ScatterDevice, WideDtypesCombineAtomically) {
  std::mt19937 rng(33);
  std::vector<HostArray> inputs;
  for (DType dtype : {DType::F64, DType::I64, DType::U64}) {
    const double lo = dtype == DType::U64 ? 0 : -100;
    inputs.push_back(testing::random_array(dtype, {5000, 8}, lo, 100, rng));
    inputs.push_back(testing::random_array(DType::I32, {4096, 1}, -2, 5001, rng));
    inputs.push_back(testing::random_array(dtype, {4096, 8}, lo, 100, rng));
  }
  const auto scatters = [](const std::vector<Array>& xs) {
    std::vector<Array> results;
    ScatterAttrs fill = rows_scatter();
    fill.mode = IndexMode::fill;
    for (std::size_t d = 0; d < xs.size(); d += 3) {
      results.push_back(lax::scatter_add(xs[d], xs[d + 1], xs[d + 2], fill));
      results.push_back(lax::scatter_min(xs[d], xs[d + 1], xs[d + 2], fill));
      results.push_back(lax::scatter_max(xs[d], xs[d + 1], xs[d + 2], fill));
    }
    results.push_back(lax::scatter_mul(xs[0], xs[1], lax::sign(xs[2]), fill));
    return results;
  };
  EXPECT_EQ(testing::check_against_interpreter(scatters, inputs, 1e-12, 1e-12), "");
  // The path this device takes: the atomic one wherever the extension is there.
  std::vector<Array> args;
  for (const HostArray& h : inputs) args.push_back(Array::from_host(h));
  auto traced = jit(std::function<std::vector<Array>(const std::vector<Array>&)>(scatters));
  const std::string source = traced.lower(args).compile()->info().source;
  const auto* device = dynamic_cast<const opencl::OpenCLDevice*>(&default_device());
  ASSERT_NE(device, nullptr);
  if (device->info().int64_atomics) {
    EXPECT_NE(source.find("atom_cmpxchg"), std::string::npos) << source;
  }
}

// Elements without OpenCL atomics fold into private copies too (where the updates outnumber the
// result several times over): 8-, 16- and 64-bit integers (wrapping, their own extremes as the
// starting values) exactly, f64 within rounding.
TEST(ScatterDevice, PrivatisedPathCoversDtypesWithoutAtomics) {
  std::mt19937 rng(32);
  const auto inputs_of = [&](DType dtype) {
    std::vector<HostArray> xs = colliding_inputs(dtype);
    xs[2] =
        testing::random_array(dtype, {4096, 8}, is_unsigned_integer(dtype) ? 0 : -100, 100, rng);
    return xs;
  };
  std::vector<HostArray> exact;
  for (DType dtype : {DType::F64, DType::I8, DType::U16, DType::I64, DType::U64})
    for (HostArray& h : inputs_of(dtype)) exact.push_back(std::move(h));
  EXPECT_EQ(testing::check_against_interpreter(
                [](const std::vector<Array>& xs) {
                  const ScatterAttrs a = rows_scatter();
                  return std::vector<Array>{lax::scatter_add(xs[0], xs[1], xs[2], a),
                                            lax::scatter_max(xs[0], xs[1], xs[2], a),
                                            lax::scatter_add(xs[3], xs[4], xs[5], a),
                                            lax::scatter_mul(xs[3], xs[4], xs[5], a),
                                            lax::scatter_max(xs[6], xs[7], xs[8], a),
                                            lax::scatter_add(xs[9], xs[10], xs[11], a),
                                            lax::scatter_min(xs[9], xs[10], xs[11], a),
                                            lax::scatter_add(xs[12], xs[13], xs[14], a),
                                            lax::scatter_min(xs[12], xs[13], xs[14], a)};
                },
                exact, 1e-12, 1e-12),
            "");
}

// WEFT_DETERMINISTIC_SCATTER=1: the same sums, bit for bit, on every run.
TEST(ScatterDevice, DeterministicModeRepeatsSumsExactly) {
  ::setenv("WEFT_DETERMINISTIC_SCATTER", "1", 1);
  const std::vector<HostArray> inputs = colliding_inputs(DType::F32);
  std::vector<Array> args;
  for (const HostArray& h : inputs) args.push_back(Array::from_host(h));
  std::function<std::vector<Array>(const std::vector<Array>&)> fn =
      [](const std::vector<Array>& xs) {
        return std::vector<Array>{lax::scatter_add(xs[0], xs[1], xs[2], rows_scatter())};
      };
  auto traced = jit(fn, {.name = "deterministic_scatter"});
  const HostArray first = traced(args)[0].to_host();
  for (int run = 0; run < 3; ++run) {
    const HostArray again = traced(args)[0].to_host();
    for (std::int64_t i = 0; i < first.size(); ++i)
      ASSERT_EQ(first.get_f64(i), again.get_f64(i)) << "run " << run << ", element " << i;
  }
  EXPECT_EQ(testing::check_against_interpreter(fn, inputs, 1e-4, 1e-4), "");
  ::unsetenv("WEFT_DETERMINISTIC_SCATTER");
}

// ---- the numpy layer (np_cases.json) -------------------------------------------------------

struct NpCase {
  std::string name, fn;
  json params;
  std::vector<HostArray> args;
  HostArray expected;
};

std::vector<NpCase> load_np_cases() {
  std::ifstream in(std::string(WEFT_GATHER_SCATTER_ORACLE_DIR) + "/np_cases.json");
  if (!in) throw std::runtime_error("cannot read the numpy indexing oracle");
  const json doc = json::parse(in);
  std::vector<NpCase> cases;
  for (const json& c : doc.at("cases")) {
    NpCase k{c.at("name"), c.at("fn"), c.at("params"), {}, testing::host_array(c.at("expected"))};
    for (const json& a : c.at("args")) k.args.push_back(testing::host_array(a));
    cases.push_back(std::move(k));
  }
  return cases;
}

IndexMode mode_of(const NpCase& c) {
  return index_mode_from_name(c.params.at("mode").get<std::string>(), "mode");
}

Array apply_np(const NpCase& c, const std::vector<Array>& xs) {
  if (c.fn == "take") {
    const json& axis = c.params.at("axis");
    return np::take(xs[0], xs[1],
                    axis.is_null() ? std::nullopt : std::optional<std::int64_t>(axis.get<int>()),
                    mode_of(c));
  }
  if (c.fn == "take_along_axis")
    return np::take_along_axis(xs[0], xs[1], c.params.at("axis").get<int>(), mode_of(c));
  if (c.fn == "at_get") return np::at(xs[0], xs[1]).get(mode_of(c));
  if (c.fn == "at_set") return np::at(xs[0], xs[1]).set(xs[2], mode_of(c));
  if (c.fn == "at_add") return np::at(xs[0], xs[1]).add(xs[2], mode_of(c));
  if (c.fn == "at_multiply") return np::at(xs[0], xs[1]).multiply(xs[2], mode_of(c));
  if (c.fn == "at_min") return np::at(xs[0], xs[1]).min(xs[2], mode_of(c));
  if (c.fn == "at_max") return np::at(xs[0], xs[1]).max(xs[2], mode_of(c));
  if (c.fn == "one_hot") return np::one_hot(xs[0], c.params.at("num_classes").get<int>());
  if (c.fn == "repeat") {
    const json& axis = c.params.at("axis");
    return np::repeat(xs[0], c.params.at("repeats").get<int>(),
                      axis.is_null() ? std::nullopt : std::optional<std::int64_t>(axis.get<int>()));
  }
  if (c.fn == "repeat_counts" || c.fn == "repeat_traced") {
    const json& axis = c.params.at("axis");
    const std::optional<std::int64_t> along =
        axis.is_null() ? std::nullopt : std::optional<std::int64_t>(axis.get<int>());
    if (c.fn == "repeat_counts")
      return np::repeat(xs[0], c.params.at("counts").get<std::vector<std::int64_t>>(), along);
    return np::repeat(xs[0], xs[1], c.params.at("total_repeat_length").get<std::int64_t>(), along);
  }
  if (c.fn == "tile") return np::tile(xs[0], c.params.at("reps").get<std::vector<std::int64_t>>());
  const std::int64_t n = c.params.at("num_segments").get<int>();
  if (c.fn == "segment_sum") return np::segment_sum(xs[0], xs[1], n);
  if (c.fn == "segment_max") return np::segment_max(xs[0], xs[1], n);
  if (c.fn == "segment_min") return np::segment_min(xs[0], xs[1], n);
  throw std::runtime_error("unknown numpy function " + c.fn);
}

const testing::LoadedCases<NpCase>& loaded_np() {
  static const auto cases = testing::load_or_explain(load_np_cases);
  return cases;
}

// Every case in one jit program (the first check builds it), on the device and in the
// interpreter; eagerly, only the first case of each function.
testing::OracleTable& np_oracle_table() {
  static testing::OracleTable table = [] {
    std::vector<testing::OracleCase> cases;
    for (const NpCase& c : loaded_np().cases)
      cases.push_back(
          {.name = c.name,
           .eager_group = c.fn,
           .args = c.args,
           .expected = {c.expected},
           .fn = [&c](const std::vector<Array>& xs) { return std::vector<Array>{apply_np(c, xs)}; },
           .compare =
               [](const HostArray& got, const HostArray& want) {
                 return testing::compare_values_nonfinite(got, want, 1e-5);
               }});
    return testing::OracleTable(std::move(cases), "np_indexing_cases");
  }();
  return table;
}

class NpIndexingOracle : public ::testing::TestWithParam<NpCase> {};

TEST_P(NpIndexingOracle, MatchesJaxOnDeviceAndInterpreter) {
  np_oracle_table().expect_case(GetParam().name);
}

TEST(NpIndexingOracleFile, Loads) {
  EXPECT_EQ(loaded_np().error, "");
  EXPECT_FALSE(loaded_np().cases.empty());
}

TEST(NpIndexingErrors, RepeatCountsMustFitTheAxis) {
  const Array x = Array::from_host(HostArray(DType::F32, {3, 2}));
  EXPECT_THROW(np::repeat(x, std::vector<std::int64_t>{1, 2}, 0), ShapeError);
  EXPECT_THROW(np::repeat(x, std::vector<std::int64_t>{1, -1, 2}, 0), ShapeError);
  const Array two_counts = Array::from_host(HostArray(DType::I32, {2}));
  EXPECT_THROW(np::repeat(x, two_counts, 4, 0), ShapeError);
  EXPECT_THROW(np::repeat(x, Array::from_host(HostArray(DType::F32, {3})), 4, 0), DTypeError);
  EXPECT_THROW(np::repeat(x, Array::from_host(HostArray(DType::I32, {3})), -1, 0), ShapeError);
}

INSTANTIATE_TEST_SUITE_P(Jax, NpIndexingOracle, ::testing::ValuesIn(loaded_np().cases),
                         [](const ::testing::TestParamInfo<NpCase>& info) {
                           return info.param.name;
                         });

}  // namespace
}  // namespace weft
