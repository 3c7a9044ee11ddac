// Linear algebra against JAX (tools/oracles/linalg.py writes the cases): cholesky and
// triangular_solve and lu as jax.lax.linalg, and the numpy layer's cholesky, solve_triangular,
// cho_solve, solve, inv, slogdet and det. Every case runs under jit (all cases as one program; the
// first forward case of each op eagerly too) on the default device, and in the reference
// interpreter on the graph jit traced; the results must be JAX's within the case's tolerance (NaN
// where JAX has NaN). Cases cover n = 1, 3, 33, batches, f32 and f64, a matrix that is not positive
// definite, every triangular_solve variant, lu (square, wide, tall, singular, a pivot tie) and
// solve, inv, slogdet and det on it, gradients, jvp and vmap. A 200x200 cholesky and its solves
// check against the interpreter and by reconstruction; errors name the op.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
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
  double rtol = 1e-5;
  std::vector<int> argnums;
  std::vector<std::optional<int>> in_axes;
};

std::vector<Case> load_cases() {
  std::ifstream in(std::string(WEFT_LINALG_ORACLE_DIR) + "/cases.json");
  if (!in) throw std::runtime_error("cannot read the linalg oracle");
  const json doc = json::parse(in);
  std::vector<Case> cases;
  for (const json& c : doc.at("cases")) {
    Case k{c.at("name"), c.at("op"), c.at("transform"), c.at("attrs"), {}, {}, c.at("rtol"),
           {},           {}};
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

bool flag(const json& attrs, const char* name) {
  return attrs.at(name).get<int>() != 0;
}

// The functions with one result.
Array apply_one(const Case& c, const std::vector<Array>& xs) {
  const json& a = c.attrs;
  if (c.op == "cholesky") return lax::cholesky(xs[0]);
  if (c.op == "triangular_solve")
    return lax::triangular_solve(xs[0], xs[1],
                                 {.left_side = flag(a, "left_side"),
                                  .lower = flag(a, "lower"),
                                  .transpose_a = flag(a, "transpose_a"),
                                  .conjugate_a = flag(a, "conjugate_a"),
                                  .unit_diagonal = flag(a, "unit_diagonal")});
  if (c.op == "np_cholesky") return np::linalg::cholesky(xs[0], flag(a, "upper"));
  if (c.op == "solve_triangular")
    return np::linalg::solve_triangular(xs[0], xs[1], a.at("trans").get<int>(), flag(a, "lower"),
                                        flag(a, "unit_diagonal"));
  if (c.op == "cho_solve") return np::linalg::cho_solve({xs[0], flag(a, "lower")}, xs[1]);
  if (c.op == "solve") return np::linalg::solve(xs[0], xs[1]);
  if (c.op == "inv") return np::linalg::inv(xs[0]);
  if (c.op == "det") return np::linalg::det(xs[0]);
  throw std::runtime_error("unknown op " + c.op);
}

// The case's function on its operands: its results.
std::vector<Array> apply_op(const Case& c, const std::vector<Array>& xs) {
  if (c.op == "lu") {
    auto [factors, pivots, permutation] = lax::lu(xs[0]);
    return {factors, pivots, permutation};
  }
  if (c.op == "slogdet") {
    auto [sign, logdet] = np::linalg::slogdet(xs[0]);
    return {sign, logdet};
  }
  return {apply_one(c, xs)};
}

// The result a gradient or jvp case differentiates: the first, slogdet's logabsdet.
Array differentiated(const Case& c, const std::vector<Array>& xs) {
  return apply_op(c, xs)[c.op == "slogdet" ? 1 : 0];
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
      const Array y = differentiated(c, operands);
      return std::vector<Array>{lax::reduce_sum(lax::mul(y, a.back()), all_axes(y))};
    };
    return grad(loss, GradOptions{c.argnums})(xs);
  }
  if (c.transform == "jvp") {
    const std::size_t half = xs.size() / 2;
    auto first = [&c](const std::vector<Array>& a) {
      return std::vector<Array>{differentiated(c, a)};
    };
    const JvpResult r = jvp(first, std::vector<Array>(xs.begin(), xs.begin() + half),
                            std::vector<Array>(xs.begin() + half, xs.end()));
    return {r.primals_out[0], r.tangents_out[0]};
  }
  return vmap(op, VmapOptions{c.in_axes, {}})(xs);
}

class LinalgOracle : public ::testing::TestWithParam<Case> {};

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
                           [rtol = c.rtol](const HostArray& got, const HostArray& want) {
                             return testing::compare_values_nonfinite(got, want, rtol);
                           }});
    return testing::OracleTable(std::move(cases), "linalg_cases");
  }();
  return table;
}

TEST_P(LinalgOracle, MatchesJaxOnDeviceAndInterpreter) {
  oracle_table().expect_case(GetParam().name);
}

TEST(LinalgOracleFile, Loads) {
  EXPECT_EQ(loaded().error, "");
  EXPECT_FALSE(loaded().cases.empty());
}

INSTANTIATE_TEST_SUITE_P(Jax, LinalgOracle, ::testing::ValuesIn(loaded().cases),
                         [](const ::testing::TestParamInfo<Case>& info) {
                           return info.param.name;
                         });

// A 200x200 SPD matrix (and a batch of two 40x40): the device's cholesky and the solves built
// on it agree with the interpreter, and L L^T gives the matrix back.
TEST(LinalgDevice, LargeCholeskyAndSolvesMatchTheInterpreter) {
  std::mt19937 rng(41);
  auto spd = [&](std::int64_t batch, std::int64_t n) {
    const HostArray m = testing::random_array(DType::F64, {batch, n, n}, -1, 1, rng);
    HostArray a(DType::F64, {batch, n, n});
    for (std::int64_t b = 0; b < batch; ++b)
      for (std::int64_t i = 0; i < n; ++i)
        for (std::int64_t j = 0; j < n; ++j) {
          double s = i == j ? static_cast<double>(n) : 0.0;
          for (std::int64_t k = 0; k < n; ++k)
            s += m.get_f64((b * n + i) * n + k) * m.get_f64((b * n + j) * n + k);
          a.set_f64((b * n + i) * n + j, s);
        }
    return a;
  };
  const std::vector<HostArray> inputs = {spd(1, 200), spd(2, 40),
                                         testing::random_array(DType::F64, {200, 3}, -1, 1, rng)};
  const auto fn = [](const std::vector<Array>& xs) {
    const Array l = lax::cholesky(xs[0]);
    const Array back = np::matmul(l, lax::transpose(l, {0, 2, 1}));
    const Array x = np::linalg::cho_solve({lax::reshape(l, {200, 200}), true}, xs[2]);
    return std::vector<Array>{l, lax::sub(back, xs[0]), x, lax::cholesky(xs[1])};
  };
  EXPECT_EQ(testing::check_against_interpreter(fn, inputs, 1e-9, 1e-9), "");
  // f32 rounds differently from the interpreter's double.
  EXPECT_EQ(
      testing::check_against_interpreter(
          [](const std::vector<Array>& xs) {
            return std::vector<Array>{lax::cholesky(lax::convert_element_type(xs[0], DType::F32))};
          },
          {inputs[1]}, 1e-5, 1e-5),
      "");
  std::vector<Array> args = testing::device_arrays(inputs);
  const std::vector<Array> out = fn(args);
  const HostArray residual = out[1].to_host();
  double worst = 0;
  for (std::int64_t i = 0; i < residual.size(); ++i)
    worst = std::max(worst, std::abs(residual.get_f64(i)));
  EXPECT_LT(worst, 1e-9);
}

// A 200x200 LU on the device: the factors reproduce the permuted matrix, and solve agrees with
// the interpreter (pivots may differ from it only at near ties, so they are not compared).
TEST(LinalgDevice, LargeLuReconstructsAndSolves) {
  std::mt19937 rng(43);
  const std::int64_t n = 200;
  const std::vector<HostArray> inputs = {testing::random_array(DType::F64, {n, n}, -1, 1, rng),
                                         testing::random_array(DType::F64, {n, 2}, -1, 1, rng)};
  const auto solve = [](const std::vector<Array>& xs) {
    return std::vector<Array>{np::linalg::solve(xs[0], xs[1])};
  };
  EXPECT_EQ(testing::check_against_interpreter(solve, inputs, 1e-8, 1e-8), "");
  const std::vector<Array> args = testing::device_arrays(inputs);
  auto [factors, pivots, permutation] = lax::lu(args[0]);
  const HostArray lu = factors.to_host(), perm = permutation.to_host();
  double worst = 0, largest = 0;
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t j = 0; j < n; ++j) {
      double s = 0;  // (L U)[i][j], L unit lower, U upper
      for (std::int64_t k = 0; k <= std::min(i, j); ++k)
        s += (k == i ? 1.0 : lu.get_f64(i * n + k)) * lu.get_f64(k * n + j);
      const double want = inputs[0].get_f64(perm.get_i64(i) * n + j);
      worst = std::max(worst, std::abs(s - want));
      if (j < i) largest = std::max(largest, std::abs(lu.get_f64(i * n + j)));
    }
  EXPECT_LT(worst, 1e-10);
  EXPECT_LE(largest, 1.0);  // partial pivoting: |L| <= 1
}

// lu, lu_pivots and lu_permutation of one matrix run as one kernel under jit (the factorization
// once), whichever of them the function uses.
TEST(LinalgDevice, LuPartsShareOneKernel) {
  std::mt19937 rng(44);
  const std::vector<Array> args = {
      Array::from_host(testing::random_array(DType::F32, {2, 5, 5}, -1, 1, rng))};
  const auto own_kernels =
      [&](const std::function<std::vector<Array>(const std::vector<Array>&)>& f) {
        auto traced = jit(f);
        int count = 0;
        for (const KernelSummary& k : traced.lower(args).compile()->info().kernels)
          count += k.kind == "own";
        return count;
      };
  EXPECT_EQ(own_kernels([](const std::vector<Array>& xs) {
              auto [factors, pivots, permutation] = lax::lu(xs[0]);
              return std::vector<Array>{factors, pivots, permutation};
            }),
            1);
  EXPECT_EQ(own_kernels([](const std::vector<Array>& xs) {
              auto [factors, pivots, permutation] = lax::lu(xs[0]);
              return std::vector<Array>{lax::add(lax::convert_element_type(permutation, DType::F32),
                                                 lax::reduce_sum(factors, {2}))};
            }),
            1);
}

// Edge shapes of the blocked kernels against the interpreter: wide (columns right of the last
// block) and one-column lu, a block of 8 rows plus one, 17 right-hand sides (a tile of 16 and a
// single one in f64) on the right side, 1x1 matrices (one not positive definite), and a lu whose
// last block column holds one column.
TEST(LinalgDevice, EdgeShapesMatchTheInterpreter) {
  std::mt19937 rng(45);
  std::vector<HostArray> inputs = {testing::random_array(DType::F64, {40, 75}, -1, 1, rng),
                                   testing::random_array(DType::F64, {40, 1}, -1, 1, rng),
                                   testing::random_array(DType::F64, {2, 9, 9}, -1, 1, rng),
                                   testing::random_array(DType::F64, {2, 17, 9}, -1, 1, rng),
                                   testing::random_array(DType::F32, {3, 1, 1}, -1, 1, rng),
                                   testing::random_array(DType::F32, {33, 33}, -1, 1, rng)};
  inputs[4].set_f64(0, 2.0);
  inputs[4].set_f64(1, -1.0);
  const auto fn = [](const std::vector<Array>& xs) {
    auto [wide, wide_pivots, wide_permutation] = lax::lu(xs[0]);
    auto [tall, tall_pivots, tall_permutation] = lax::lu(xs[1]);
    auto [square, square_pivots, square_permutation] = lax::lu(xs[5]);
    const Array triangle = xs[2] + np::eye(9, DType::F64) * 4.0;
    return std::vector<Array>{
        wide,
        wide_permutation,
        tall,
        tall_pivots,
        tall_permutation,
        square,
        square_permutation,
        lax::triangular_solve(triangle, xs[3], {.left_side = false, .lower = true}),
        lax::triangular_solve(triangle, xs[3],
                              {.left_side = false, .lower = false, .transpose_a = true}),
        lax::triangular_solve(triangle, lax::transpose(xs[3], {0, 2, 1}),
                              {.left_side = true, .lower = false, .unit_diagonal = true}),
        lax::cholesky(xs[4])};
  };
  EXPECT_EQ(testing::check_against_interpreter(fn, inputs, 1e-5, 1e-5), "");
}

// ---- errors name the op, the shapes and what to do ----------------------------------------

Array zeros(DType dtype, const Shape& shape) {
  return Array::from_host(HostArray(dtype, shape));
}

TEST(LinalgErrors, CholeskyNeedsSquareFloatMatrices) {
  std::string e = testing::error_of<ShapeError>([] { lax::cholesky(zeros(DType::F32, {3, 4})); });
  EXPECT_NE(e.find("cholesky"), std::string::npos) << e;
  EXPECT_NE(e.find("square"), std::string::npos) << e;
  EXPECT_NE(e.find("f32[3,4]"), std::string::npos) << e;
  e = testing::error_of<ShapeError>([] { lax::cholesky(zeros(DType::F32, {3})); });
  EXPECT_NE(e.find("rank 1"), std::string::npos) << e;
  e = testing::error_of<DTypeError>([] { lax::cholesky(zeros(DType::I32, {3, 3})); });
  EXPECT_NE(e.find("cholesky"), std::string::npos) << e;
  EXPECT_NE(e.find("f32 and f64"), std::string::npos) << e;
  EXPECT_NE(e.find("convert"), std::string::npos) << e;
  // The numpy layer promotes integers to f32 instead.
  const HostArray l = np::linalg::cholesky(np::eye(2, DType::I32)).to_host();
  EXPECT_EQ(l.dtype(), DType::F32);
  EXPECT_EQ(l.get_f64(0), 1.0);
}

TEST(LinalgErrors, TriangularSolveNamesMismatchedShapes) {
  std::string e = testing::error_of<ShapeError>([] {
    lax::triangular_solve(zeros(DType::F32, {3, 3}), zeros(DType::F32, {4, 2}),
                          {.left_side = true});
  });
  EXPECT_NE(e.find("triangular_solve"), std::string::npos) << e;
  EXPECT_NE(e.find("f32[4,2]"), std::string::npos) << e;
  e = testing::error_of<ShapeError>([] {
    lax::triangular_solve(zeros(DType::F32, {2, 3, 3}), zeros(DType::F32, {5, 3, 2}));
  });
  EXPECT_NE(e.find("batch"), std::string::npos) << e;
  e = testing::error_of<ShapeError>([] {
    lax::triangular_solve(zeros(DType::F32, {3, 2}), zeros(DType::F32, {3, 2}));
  });
  EXPECT_NE(e.find("square"), std::string::npos) << e;
  e = testing::error_of<DTypeError>([] {
    lax::triangular_solve(zeros(DType::F32, {3, 3}), zeros(DType::F64, {3, 3}));
  });
  EXPECT_NE(e.find("one dtype"), std::string::npos) << e;
  e = testing::error_of<DTypeError>([] {
    lax::triangular_solve(zeros(DType::I32, {3, 3}), zeros(DType::I32, {3, 3}));
  });
  EXPECT_NE(e.find("f32 and f64"), std::string::npos) << e;
  e = testing::error_of<ShapeError>([] {
    np::linalg::solve_triangular(zeros(DType::F32, {3, 3}), zeros(DType::F32, {4}));
  });
  EXPECT_NE(e.find("solve_triangular"), std::string::npos) << e;
  EXPECT_NE(e.find("[4]"), std::string::npos) << e;
  e = testing::error_of<InvalidArgumentError>([] {
    np::linalg::solve_triangular(zeros(DType::F32, {3, 3}), zeros(DType::F32, {3}), 3);
  });
  EXPECT_NE(e.find("trans=3"), std::string::npos) << e;
}

TEST(LinalgErrors, LuAndItsUsersNameTheProblem) {
  std::string e = testing::error_of<DTypeError>([] { lax::lu(zeros(DType::I32, {3, 3})); });
  EXPECT_NE(e.find("lu"), std::string::npos) << e;
  EXPECT_NE(e.find("f32 and f64"), std::string::npos) << e;
  e = testing::error_of<ShapeError>([] { lax::lu(zeros(DType::F32, {3})); });
  EXPECT_NE(e.find("rank 1"), std::string::npos) << e;
  e = testing::error_of<ShapeError>([] {
    np::linalg::solve(zeros(DType::F32, {3, 3}), zeros(DType::F32, {4}));
  });
  EXPECT_NE(e.find("solve"), std::string::npos) << e;
  EXPECT_NE(e.find("[4]"), std::string::npos) << e;
  e = testing::error_of<ShapeError>([] { np::linalg::det(zeros(DType::F32, {3, 4})); });
  EXPECT_NE(e.find("det"), std::string::npos) << e;
  EXPECT_NE(e.find("square"), std::string::npos) << e;
  e = testing::error_of<ShapeError>([] { np::linalg::slogdet(zeros(DType::F64, {2, 3})); });
  EXPECT_NE(e.find("slogdet"), std::string::npos) << e;
}

}  // namespace
}  // namespace weft
