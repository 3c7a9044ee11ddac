// The symmetric eigendecomposition against JAX (tools/oracles/eigh.py writes the cases):
// lax::eigh as jax.lax.linalg.eigh, np::linalg::eigh and eigvalsh as jax.numpy.linalg's, their
// gradients, jvps and vmap. Each case runs under jit on the default device and in the reference
// interpreter on the graph jit traced (one case eagerly too); results must be JAX's within the
// case's tolerance, eigenvectors after making each column's largest-magnitude entry positive on
// both sides (they are unique only up to sign), and V diag(w) V^T must give back the matrix
// read, V^T V the identity. Cases cover n = 1, 2, 3, 5, 8, 33, 64, batches, f32 and f64, either
// triangle read, symmetrizing. Errors name the op and what to do.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "support/device_check.h"
#include "support/oracle_cases.h"
#include "support/oracle_json.h"
#include "weft/interp/interpreter.h"
#include "weft/transforms/grad.h"
#include "weft/transforms/jvp.h"
#include "weft/transforms/vmap.h"
#include "weft/weft.h"

namespace weft {
namespace {

using nlohmann::json;

struct Case {
  std::string name, op, transform;
  json attrs;
  std::vector<HostArray> args, expected;
  std::vector<int> vectors;  // which results are eigenvectors
  double rtol = 1e-5;
  std::vector<int> argnums;
  std::vector<std::optional<int>> in_axes;
};

std::vector<Case> load_cases() {
  std::ifstream in(std::string(WEFT_EIGH_ORACLE_DIR) + "/cases.json");
  if (!in) throw std::runtime_error("cannot read the eigh oracle");
  const json doc = json::parse(in);
  std::vector<Case> cases;
  for (const json& c : doc.at("cases")) {
    Case k;
    k.name = c.at("name");
    k.op = c.at("op");
    k.transform = c.at("transform");
    k.attrs = c.at("attrs");
    k.rtol = c.at("rtol");
    k.vectors = c.at("vectors").get<std::vector<int>>();
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

bool flag(const json& attrs, const char* name, bool otherwise) {
  return attrs.contains(name) ? attrs.at(name).get<int>() != 0 : otherwise;
}

// The case's function on its operands: its results.
std::vector<Array> apply_op(const Case& c, const std::vector<Array>& xs) {
  const bool lower = flag(c.attrs, "lower", true);
  if (c.op == "eigh") {
    auto [v, w] = lax::eigh(xs[0], lower, flag(c.attrs, "symmetrize_input", true));
    return {v, w};
  }
  if (c.op == "np_eigh") {
    auto [w, v] = np::linalg::eigh(xs[0], lower);
    return {w, v};
  }
  if (c.op == "eigvalsh") return {np::linalg::eigvalsh(xs[0], lower)};
  if (c.op == "eigh_w") return {lax::eigh(xs[0]).second};
  if (c.op == "eigh_vv") {
    const Array v = lax::eigh(xs[0]).first;
    return {lax::mul(v, v)};
  }
  throw std::runtime_error("unknown op " + c.op);
}

lax::Axes all_axes(const Array& y) {
  lax::Axes all;
  for (std::size_t d = 0; d < y.shape().size(); ++d) all.push_back(static_cast<std::int64_t>(d));
  return all;
}

// The case's function of all its arguments: the op, its gradient, its jvp or its vmap.
std::vector<Array> run_case_fn(const Case& c, const std::vector<Array>& xs) {
  auto op = [&c](const std::vector<Array>& a) { return apply_op(c, a); };
  if (c.transform == "none") return op(xs);
  if (c.transform == "grad") {
    auto loss = [&c](const std::vector<Array>& a) {
      const std::vector<Array> operands(a.begin(), a.end() - 1);
      const Array y = apply_op(c, operands)[0];
      return std::vector<Array>{lax::reduce_sum(lax::mul(y, a.back()), all_axes(y))};
    };
    return grad(loss, GradOptions{c.argnums})(xs);
  }
  if (c.transform == "jvp") {
    const std::size_t half = xs.size() / 2;
    const JvpResult r = jvp(op, std::vector<Array>(xs.begin(), xs.begin() + half),
                            std::vector<Array>(xs.begin() + half, xs.end()));
    return {r.primals_out[0], r.tangents_out[0]};
  }
  return vmap(op, VmapOptions{c.in_axes, {}})(xs);
}

// v [..., n, n] with each column's largest-magnitude entry (the first of equal ones) positive.
HostArray normalised(const HostArray& v) {
  HostArray out = v;
  const std::int64_t n = v.shape().back();
  if (n == 0) return out;
  for (std::int64_t b = 0; b < v.size() / (n * n); ++b)
    for (std::int64_t k = 0; k < n; ++k) {
      std::int64_t lead = 0;
      for (std::int64_t i = 1; i < n; ++i)
        if (std::abs(v.get_f64(b * n * n + i * n + k)) >
            std::abs(v.get_f64(b * n * n + lead * n + k)))
          lead = i;
      if (v.get_f64(b * n * n + lead * n + k) < 0)
        for (std::int64_t i = 0; i < n; ++i)
          out.set_f64(b * n * n + i * n + k, -v.get_f64(b * n * n + i * n + k));
    }
  return out;
}

// Empty when V diag(w) V^T is the matrix eigh read (of `x`: symmetrized, or one triangle
// mirrored) and V^T V the identity, within rtol of the matrix's largest entry.
std::string check_decomposition(const HostArray& x, bool lower, bool symmetrize, const HostArray& v,
                                const HostArray& w, double rtol) {
  const std::int64_t n = x.shape().back();
  if (n == 0) return {};
  double scale = 1;
  for (std::int64_t e = 0; e < x.size(); ++e) scale = std::max(scale, std::abs(x.get_f64(e)));
  for (std::int64_t b = 0; b < x.size() / (n * n); ++b) {
    auto at = [&](const HostArray& m, std::int64_t i, std::int64_t j) {
      return m.get_f64(b * n * n + i * n + j);
    };
    for (std::int64_t i = 0; i < n; ++i)
      for (std::int64_t j = 0; j < n; ++j) {
        const double read = symmetrize                  ? (at(x, i, j) + at(x, j, i)) / 2
                            : (lower ? i >= j : i <= j) ? at(x, i, j)
                                                        : at(x, j, i);
        double product = 0, gram = 0;
        for (std::int64_t k = 0; k < n; ++k) {
          product += at(v, i, k) * w.get_f64(b * n + k) * at(v, j, k);
          gram += at(v, k, i) * at(v, k, j);
        }
        if (std::abs(product - read) > rtol * scale * 10)
          return "V diag(w) V^T differs at matrix " + std::to_string(b) + " (" + std::to_string(i) +
                 ", " + std::to_string(j) + "): " + std::to_string(product) + " vs " +
                 std::to_string(read);
        if (std::abs(gram - (i == j ? 1.0 : 0.0)) > rtol * 10)
          return "V^T V is not the identity at matrix " + std::to_string(b) + " (" +
                 std::to_string(i) + ", " + std::to_string(j) + "): " + std::to_string(gram);
      }
  }
  return {};
}

// Every result against JAX's (eigenvectors normalised), and the decomposition itself.
void expect_matches(const Case& c, const std::vector<HostArray>& got, const std::string& where) {
  ASSERT_EQ(got.size(), c.expected.size()) << where;
  for (std::size_t k = 0; k < got.size(); ++k) {
    const bool vectors =
        std::find(c.vectors.begin(), c.vectors.end(), static_cast<int>(k)) != c.vectors.end();
    EXPECT_EQ(testing::compare_values(vectors ? normalised(got[k]) : got[k], c.expected[k], c.rtol),
              "")
        << where << ", result " << k;
  }
  if (c.transform != "none" || (c.op != "eigh" && c.op != "np_eigh")) return;
  const bool lax_order = c.op == "eigh";
  EXPECT_EQ(check_decomposition(c.args[0], flag(c.attrs, "lower", true),
                                flag(c.attrs, "symmetrize_input", true), got[lax_order ? 0 : 1],
                                got[lax_order ? 1 : 0], c.rtol),
            "")
      << where;
}

class EighOracle : public ::testing::TestWithParam<Case> {};

const testing::LoadedCases<Case>& loaded() {
  static const auto cases = testing::load_or_explain(load_cases);
  return cases;
}

// Every case in one jit program (the first check builds it), on the device and in the
// interpreter; each case then compares its own results (eigenvectors normalised).
const testing::OracleRun& oracle_run() {
  static const testing::OracleRun run = [] {
    std::vector<testing::OracleCase> cases;
    for (const Case& c : loaded().cases)
      cases.push_back({.name = c.name,
                       .eager_group = "",  // eagerly: one case, checked below
                       .args = c.args,
                       .expected = c.expected,
                       .fn = [&c](const std::vector<Array>& xs) { return run_case_fn(c, xs); },
                       .compare = {}});  // expect_matches compares
    return testing::run_oracle_cases(cases, "eigh_cases");
  }();
  return run;
}

TEST_P(EighOracle, MatchesJaxOnDeviceAndInterpreter) {
  const Case& c = GetParam();
  const testing::OracleRun& run = oracle_run();
  ASSERT_EQ(run.error, "");
  std::size_t i = 0;
  while (i < loaded().cases.size() && loaded().cases[i].name != c.name) ++i;
  ASSERT_LT(i, loaded().cases.size());
  expect_matches(c, run.jitted.at(i), "jit");
  expect_matches(c, run.interpreted.at(i), "interpreter");
  // Eagerly one case: every eager op is a program of its own to compile.
  if (c.name == "eigh_f32_batch") {
    std::vector<HostArray> eager;
    for (const Array& y : run_case_fn(c, testing::device_arrays(c.args)))
      eager.push_back(y.to_host());
    expect_matches(c, eager, "eager");
  }
}

TEST(EighOracleFile, Loads) {
  EXPECT_EQ(loaded().error, "");
  EXPECT_FALSE(loaded().cases.empty());
}

INSTANTIATE_TEST_SUITE_P(Jax, EighOracle, ::testing::ValuesIn(loaded().cases),
                         [](const ::testing::TestParamInfo<Case>& info) {
                           return info.param.name;
                         });

// Unsorted, the eigenvalues are those of the sorted decomposition in some order, each still
// paired with its vector.
TEST(EighDevice, UnsortedIsAPermutationOfSorted) {
  const Case* sample = nullptr;
  for (const Case& c : loaded().cases)
    if (c.name == "eigh_f64_n8") sample = &c;
  ASSERT_NE(sample, nullptr);
  auto unsorted = jit(
      [](const std::vector<Array>& xs) {
        auto [v, w] = lax::eigh(xs[0], true, true, false);
        return std::vector<Array>{v, w};
      },
      {.name = "eigh_unsorted"});
  const std::vector<Array> out = unsorted(testing::device_arrays(sample->args));
  const HostArray v = out[0].to_host(), w = out[1].to_host();
  EXPECT_EQ(check_decomposition(sample->args[0], true, true, v, w, 1e-9), "");
  std::vector<double> values;
  for (std::int64_t k = 0; k < w.size(); ++k) values.push_back(w.get_f64(k));
  std::sort(values.begin(), values.end());
  for (std::size_t k = 0; k < values.size(); ++k)
    EXPECT_NEAR(values[k], sample->expected[1].get_f64(static_cast<std::int64_t>(k)), 1e-9);
}

// A 129x129 matrix (odd, more pairs than work-items) agrees with the interpreter (both fix the
// vectors' signs alike) and decomposes; so do matrices with repeated eigenvalues, whose vectors
// are any basis of each eigenspace: the identity, zeros, and diag(2, 2, 1) rotated.
TEST(EighDevice, LargeOddAndDegenerateMatricesDecompose) {
  std::mt19937 rng(43);
  HostArray large = testing::random_array(DType::F64, {129, 129}, -1, 1, rng);
  const testing::MultiFn fn = [](const std::vector<Array>& xs) {
    auto [v, w] = lax::eigh(xs[0]);
    return std::vector<Array>{v, w};
  };
  EXPECT_EQ(testing::check_against_interpreter(fn, {large}, 1e-8, 1e-9), "");
  HostArray degenerate(DType::F64, {3, 3, 3});
  const double c = std::cos(0.7), s = std::sin(0.7);
  const double q[3][3] = {{c, -s, 0}, {s, c, 0}, {0, 0, 1}}, d[3] = {2, 2, 1};
  for (std::int64_t i = 0; i < 3; ++i)
    for (std::int64_t j = 0; j < 3; ++j) {
      double rotated = 0;
      for (int k = 0; k < 3; ++k) rotated += q[k][i] * d[k] * q[k][j];
      degenerate.set_f64(i * 3 + j, i == j ? 1.0 : 0.0);
      degenerate.set_f64(9 + i * 3 + j, 0.0);
      degenerate.set_f64(18 + i * 3 + j, rotated);
    }
  auto decompose = jit(fn, {.name = "eigh_device"});
  for (const HostArray& x : {large, degenerate}) {
    const std::vector<Array> out = decompose(testing::device_arrays({x}));
    EXPECT_EQ(check_decomposition(x, true, true, out[0].to_host(), out[1].to_host(), 1e-10), "");
  }
}

TEST(EighErrors, NameTheProblem) {
  std::string e = testing::error_of<ShapeError>([] { lax::eigh(np::zeros({3, 4}, DType::F32)); });
  EXPECT_NE(e.find("eigh"), std::string::npos) << e;
  EXPECT_NE(e.find("square"), std::string::npos) << e;
  EXPECT_NE(e.find("f32[3,4]"), std::string::npos) << e;
  e = testing::error_of<ShapeError>([] { lax::eigh(np::zeros({3}, DType::F64)); });
  EXPECT_NE(e.find("rank 1"), std::string::npos) << e;
  e = testing::error_of<DTypeError>([] { lax::eigh(np::zeros({3, 3}, DType::I32)); });
  EXPECT_NE(e.find("eigh"), std::string::npos) << e;
  EXPECT_NE(e.find("f32 and f64"), std::string::npos) << e;
  EXPECT_NE(e.find("convert"), std::string::npos) << e;
  e = testing::error_of<ShapeError>([] { np::linalg::eigh(np::zeros({2, 3}, DType::F32)); });
  EXPECT_NE(e.find("eigh"), std::string::npos) << e;
  EXPECT_NE(e.find("square"), std::string::npos) << e;
  // The numpy layer computes integers in f32 (under jit: one program to build).
  auto eigvalsh = jit(
      [](const std::vector<Array>& xs) { return std::vector<Array>{np::linalg::eigvalsh(xs[0])}; },
      {.name = "eigvalsh_i32"});
  const HostArray w = eigvalsh(std::vector<Array>{np::eye(2, DType::I32)})[0].to_host();
  EXPECT_EQ(w.dtype(), DType::F32);
  EXPECT_EQ(w.get_f64(0), 1.0);
}

}  // namespace
}  // namespace weft
