// Linear algebra over the last two axes, as jax.lax.linalg (the leading axes are a batch):
// `cholesky` (lax.linalg.cholesky without symmetrizing: the lower triangle of x is read, the
// result is lower triangular with zeros above the diagonal, and an entry that is not positive
// definite (a pivot <= 0) is NaN in its whole lower triangle, as JAX's CPU result; a NaN in x
// spreads to what depends on it) and `triangular_solve`
// (lax.linalg.triangular_solve_p). Their jvp, transpose and batching rules are JAX's
// (_cholesky_jvp_rule, _triangular_solve_jvp_rule_a, ..._transpose_rule, ..._batching_rule).
// The evaluators compute in double and round each result once. Each runs in a kernel of its
// own (opencl/src/codegen/cholesky_kernel.cpp, triangular_solve_kernel.cpp).
#include <cmath>
#include <limits>

#include "primitives/families.h"
#include "primitives/matrix_rules.h"
#include "primitives/structural_rules.h"
#include "primitives/type_rule_checks.h"
#include "weft/ir/op_attrs.h"
#include "weft/ops.h"
#include "weft/trace/trace.h"

namespace weft::prim {

namespace {

using interp::Operands;
using interp::Value;

// ---- type rules ----------------------------------------------------------------------------

void check_float(OpKind op, std::span<const TensorType> operands) {
  for (const TensorType& t : operands)
    if (t.dtype != DType::F32 && t.dtype != DType::F64)
      dtype_fail(op, operands,
                 "supports f32 and f64 only; convert the operands first "
                 "(lax::convert_element_type, or astype)");
}

// A matrix or a batch of matrices [..., n, n].
void check_square(OpKind op, std::span<const TensorType> operands, const TensorType& x,
                  const char* what) {
  const Shape& s = x.shape;
  if (s.size() < 2)
    shape_fail(op, operands,
               std::string(what) +
                   " must be a matrix or a batch of matrices [..., n, n]; got rank " +
                   std::to_string(s.size()));
  if (s[s.size() - 1] != s[s.size() - 2])
    shape_fail(
        op, operands,
        std::string(what) + " must be square in its last two axes; got " + shape_to_string(s));
}

TensorType cholesky_type(OpKind op, std::span<const TensorType> operands, const Attrs&,
                         const TensorType&) {
  check_square(op, operands, operands[0], "the operand");
  check_float(op, operands);
  return operands[0];
}

TensorType triangular_solve_type(OpKind op, std::span<const TensorType> operands,
                                 const Attrs& attrs, const TensorType&) {
  const TriangularSolveAttrs at = TriangularSolveAttrs::read(attrs);
  const TensorType &a = operands[0], &b = operands[1];
  check_square(op, operands, a, "a");
  if (b.shape.size() != a.shape.size())
    shape_fail(op, operands,
               "b must have a's rank (a batch of matrices [..., m, n] on the left side, "
               "[..., n, m] on the right); solve for a vector through "
               "np::linalg::solve_triangular");
  const std::size_t r = a.shape.size();
  for (std::size_t d = 0; d + 2 < r; ++d)
    if (a.shape[d] != b.shape[d])
      shape_fail(op, operands, "a and b must have the same batch axes (all but the last two)");
  const std::int64_t m = a.shape[r - 1];
  const std::int64_t common = at.left_side ? b.shape[r - 2] : b.shape[r - 1];
  if (common != m)
    shape_fail(op, operands,
               std::string(at.left_side ? "left_side: b's second-to-last" : "b's last") +
                   " axis must match a's size " + std::to_string(m) + "; got " +
                   std::to_string(common));
  if (a.dtype != b.dtype) dtype_fail(op, operands, "a and b must have one dtype");
  check_float(op, operands);
  return b;
}

// ---- evaluators ----------------------------------------------------------------------------

Value evaluate_cholesky(const Node& node, Operands operands) {
  const Value& x = *operands[0];
  Value out = interp::make_value(node.dtype, node.shape);
  const std::int64_t n = node.shape.back();
  const std::int64_t batch = n == 0 ? 0 : x.size() / (n * n);
  std::vector<double> l(static_cast<std::size_t>(n * n));
  for (std::int64_t b = 0; b < batch; ++b) {
    const double* a = x.f.data() + b * n * n;
    std::fill(l.begin(), l.end(), 0.0);
    bool ok = true;
    for (std::int64_t j = 0; j < n && ok; ++j) {
      double d = a[j * n + j];
      for (std::int64_t k = 0; k < j; ++k) d -= l[j * n + k] * l[j * n + k];
      // Not positive definite. A NaN pivot goes on as NaN, as in JAX's CPU result.
      if (d <= 0) {
        ok = false;
        break;
      }
      const double djj = std::sqrt(d);
      l[j * n + j] = djj;
      for (std::int64_t i = j + 1; i < n; ++i) {
        double s = a[i * n + j];
        for (std::int64_t k = 0; k < j; ++k) s -= l[i * n + k] * l[j * n + k];
        l[i * n + j] = s / djj;
      }
    }
    double* y = out.f.data() + b * n * n;
    for (std::int64_t i = 0; i < n; ++i)
      for (std::int64_t j = 0; j < n; ++j)
        y[i * n + j] = j > i ? 0.0
                       : ok  ? interp::round_to(node.dtype, l[i * n + j])
                             : std::numeric_limits<double>::quiet_NaN();
  }
  return out;
}

// The solve as a left-side one on vectors: op(a) x = b (left) or x op(a) = b, which is
// op(a)^T x^T = b^T. `element(i, j)` reads the effective matrix M from a's stored triangle;
// M is lower triangular exactly when lower ^ transpose_a ^ !left_side.
struct EffectiveMatrix {
  const double* a;
  std::int64_t m;
  bool swap;  // M[i][j] = a[j][i]
  double operator()(std::int64_t i, std::int64_t j) const {
    return swap ? a[j * m + i] : a[i * m + j];
  }
};

Value evaluate_triangular_solve(const Node& node, Operands operands) {
  const TriangularSolveAttrs at = TriangularSolveAttrs::read(node.attrs);
  const Value &a = *operands[0], &b = *operands[1];
  Value out = interp::make_value(node.dtype, node.shape);
  const std::size_t r = node.shape.size();
  const std::int64_t rows = node.shape[r - 2], cols = node.shape[r - 1];
  const std::int64_t m = a.shape.back();
  if (rows == 0 || cols == 0) return out;
  const std::int64_t batch = b.size() / (rows * cols);
  // Vectors of m elements: b's columns on the left side, its rows on the right.
  const std::int64_t vectors = at.left_side ? cols : rows;
  const std::int64_t stride = at.left_side ? cols : 1;
  const std::int64_t vector_step = at.left_side ? 1 : cols;
  const bool swap = at.transpose_a == at.left_side;
  const bool lower = (at.lower != at.transpose_a) != !at.left_side;
  std::vector<double> x(static_cast<std::size_t>(m));
  for (std::int64_t bi = 0; bi < batch; ++bi) {
    const EffectiveMatrix mat{a.f.data() + bi * m * m, m, swap};
    const double* rhs = b.f.data() + bi * rows * cols;
    double* y = out.f.data() + bi * rows * cols;
    for (std::int64_t v = 0; v < vectors; ++v) {
      for (std::int64_t step = 0; step < m; ++step) {
        const std::int64_t i = lower ? step : m - 1 - step;
        double s = rhs[v * vector_step + i * stride];
        if (lower)
          for (std::int64_t j = 0; j < i; ++j) s -= mat(i, j) * x[j];
        else
          for (std::int64_t j = i + 1; j < m; ++j) s -= mat(i, j) * x[j];
        x[i] = at.unit_diagonal ? s : s / mat(i, i);
      }
      for (std::int64_t i = 0; i < m; ++i)
        y[v * vector_step + i * stride] = interp::round_to(node.dtype, x[i]);
    }
  }
  return out;
}

// ---- cholesky's rules ----------------------------------------------------------------------

// JAX's _cholesky_jvp_rule (arXiv:1602.07527): L_dot = L phi(L^-1 sigma_dot L^-T), phi taking
// the lower triangle with its diagonal halved.
Tangent jvp_cholesky(const Node&, std::span<const Array>, std::span<const Tangent> tangents,
                     const Array& l, const std::source_location& loc) {
  if (!tangents[0]) return std::nullopt;
  const Array tmp = lax::triangular_solve(
      l, *tangents[0],
      {.left_side = false, .lower = true, .transpose_a = true, .conjugate_a = true}, loc);
  const Array inner = lax::triangular_solve(l, tmp, {.left_side = true, .lower = true}, loc);
  const auto r = static_cast<std::int64_t>(inner.shape().size());
  const Array row = lax::iota(DType::I32, inner.shape(), r - 2, loc);
  const Array col = lax::iota(DType::I32, inner.shape(), r - 1, loc);
  const Array halved =
      lax::select(lax::eq(row, col, loc), full(inner, 0.5, loc), full(inner, 1.0, loc), loc);
  const Array phi = lax::mul(triangle(inner, true, 0, loc), halved, loc);
  return batch_matmul(l, phi, loc);
}

// ---- triangular_solve's rules --------------------------------------------------------------

// JAX's _triangular_solve_jvp_rule_a for a's tangent, plus the solve of b's tangent (linear).
Tangent jvp_triangular_solve(const Node& n, std::span<const Array> primals,
                             std::span<const Tangent> tangents, const Array& ans,
                             const std::source_location& loc) {
  const TriangularSolveAttrs at = TriangularSolveAttrs::read(n.attrs);
  const Array& a = primals[0];
  Tangent from_a, from_b;
  if (tangents[1]) from_b = lax::triangular_solve(a, *tangents[1], at, loc);
  if (tangents[0]) {
    const std::size_t r = ans.shape().size();
    const std::int64_t m = ans.shape()[r - 2], nn = ans.shape()[r - 1];
    const std::int64_t k = at.unit_diagonal ? 1 : 0;
    Array g_a =
        at.lower ? triangle(*tangents[0], true, -k, loc) : triangle(*tangents[0], false, k, loc);
    g_a = lax::neg(g_a, loc);
    if (at.transpose_a) g_a = swap_last_two(g_a, loc);
    auto a_inverse = [&](const Array& rhs) { return lax::triangular_solve(a, rhs, at, loc); };
    // The cheaper order of the solve and the product, as JAX chooses.
    if (at.left_side)
      from_a =
          m > nn ? a_inverse(batch_matmul(g_a, ans, loc)) : batch_matmul(a_inverse(g_a), ans, loc);
    else
      from_a =
          m < nn ? a_inverse(batch_matmul(ans, g_a, loc)) : batch_matmul(ans, a_inverse(g_a), loc);
  }
  return add_tangents(from_a, from_b, loc);
}

// Linear in b alone: b's cotangent solves with a transposed.
std::vector<Tangent> transpose_triangular_solve(const Node& n, const Array& ct,
                                                std::span<const std::optional<Array>> values,
                                                std::span<const TensorType>,
                                                const std::vector<bool>& linear,
                                                const std::string& api,
                                                const std::source_location& loc) {
  if (linear[0]) not_linear(n, api);
  TriangularSolveAttrs at = TriangularSolveAttrs::read(n.attrs);
  at.transpose_a = !at.transpose_a;
  std::vector<Tangent> out(2);
  if (linear[1]) out[1] = lax::triangular_solve(*values[0], ct, at, loc);
  return out;
}

// JAX's rule: a batched (b broadcast if not): one more batch axis. b alone batched: its batch
// axis folds into b's right-hand sides (columns on the left side, rows on the right), so a is
// not copied per batch entry.
Batched batch_triangular_solve(const Node& n, std::span<const Batched> operands,
                               std::int64_t batch_size, const std::string&,
                               const std::source_location& loc) {
  if (operands[0].batched) return rebind_batched(n, operands, batch_size, n.attrs, loc);
  const TriangularSolveAttrs at = TriangularSolveAttrs::read(n.attrs);
  const Array& a = operands[0].value;
  const Array& y = operands[1].value;  // [B, ..., rows, cols]
  const auto R = static_cast<std::int64_t>(y.shape().size());
  // Move the batch axis next to the right-hand sides: last (left side) or second to last.
  const std::int64_t to = at.left_side ? R - 1 : R - 2;
  Axes perm;
  for (std::int64_t d = 1; d < R; ++d) {
    if (d - 1 == to) perm.push_back(0);
    perm.push_back(d);
  }
  if (to == R - 1) perm.push_back(0);
  const Array moved = lax::transpose(y, perm, loc);
  Shape folded = moved.shape();
  folded[static_cast<std::size_t>(to - 1)] *= folded[static_cast<std::size_t>(to)];
  folded.erase(folded.begin() + to);
  const Array solved = lax::triangular_solve(a, lax::reshape(moved, folded, loc), at, loc);
  return {axis_to_front(lax::reshape(solved, moved.shape(), loc), to, loc), true};
}

Primitive linalg(OpKind kind, std::string_view name, int arity) {
  Primitive p = row(kind, name, OpClass::Linalg, arity);
  p.info.own_kernel = true;
  p.info.fusion_cost = 4;
  return p;
}

}  // namespace

void define_linalg_primitives(Definitions& defs) {
  Primitive cholesky = linalg(OpKind::Cholesky, "cholesky", 1);
  cholesky.type = cholesky_type;
  cholesky.evaluate = evaluate_cholesky;
  cholesky.jvp = rule_from(jvp_cholesky);
  cholesky.transpose =
      none<TransposeRule>("has no transpose rule: cholesky is not linear in its operand");
  cholesky.batch = rule_from(batch_as_leading_axis);
  defs.add(std::move(cholesky));

  Primitive solve = linalg(OpKind::TriangularSolve, "triangular_solve", 2);
  solve.type = triangular_solve_type;
  solve.evaluate = evaluate_triangular_solve;
  solve.jvp = rule_from(jvp_triangular_solve);
  solve.transpose = rule_from(transpose_triangular_solve);
  solve.batch = rule_from(batch_triangular_solve);
  defs.add(std::move(solve));
}

}  // namespace weft::prim
