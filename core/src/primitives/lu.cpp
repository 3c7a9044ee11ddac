// LU with partial pivoting over the last two axes (jax.lax.linalg.lu_p), the leading axes a
// batch. weft's value ops have one result, so lu_p's three are three primitives of one operand:
// `lu` (the packed factors: L below the diagonal, its unit diagonal implied, U on and above),
// `lu_pivots` (i32: the row swapped with row i at step i) and `lu_permutation` (i32: the
// permutation those swaps make, a[permutation] = L U). The factorization is LAPACK's getrf:
// at step j the row with the largest |a[i][j]| (i >= j; the first of equal ones, and a NaN never
// replaces the current) is swapped with row j, the column below the pivot is divided by it
// unless it is zero (a singular matrix: JAX's CPU result keeps such factors, no NaN), and the
// trailing block takes off the outer product. The jvp is JAX's _lu_jvp_inner; the evaluators
// compute in double. Each runs in a kernel of its own (opencl/src/codegen/lu_kernel.cpp).
#include <algorithm>
#include <cmath>
#include <numeric>

#include "primitives/families.h"
#include "primitives/matrix_rules.h"
#include "primitives/structural_rules.h"
#include "primitives/type_rule_checks.h"
#include "weft/ops.h"
#include "weft/trace/trace.h"

namespace weft::prim {

namespace {

using interp::Operands;
using interp::Value;

// ---- type rules ----------------------------------------------------------------------------

// The operand's rows and columns, after checking it is a float matrix or a batch of them.
std::pair<std::int64_t, std::int64_t> check_operand(OpKind op,
                                                    std::span<const TensorType> operands) {
  const TensorType& x = operands[0];
  if (x.shape.size() < 2)
    shape_fail(op, operands,
               "the operand must be a matrix or a batch of matrices [..., m, n]; got rank " +
                   std::to_string(x.shape.size()));
  if (x.dtype != DType::F32 && x.dtype != DType::F64)
    dtype_fail(op, operands,
               "supports f32 and f64 only; convert the operand first "
               "(lax::convert_element_type, or astype)");
  return {x.shape[x.shape.size() - 2], x.shape.back()};
}

TensorType lu_type(OpKind op, std::span<const TensorType> operands, const Attrs&,
                   const TensorType&) {
  check_operand(op, operands);
  return operands[0];
}

TensorType lu_pivots_type(OpKind op, std::span<const TensorType> operands, const Attrs&,
                          const TensorType&) {
  const auto [m, n] = check_operand(op, operands);
  Shape s(operands[0].shape.begin(), operands[0].shape.end() - 2);
  s.push_back(std::min(m, n));
  return {DType::I32, s};
}

TensorType lu_permutation_type(OpKind op, std::span<const TensorType> operands, const Attrs&,
                               const TensorType&) {
  const auto [m, n] = check_operand(op, operands);
  Shape s(operands[0].shape.begin(), operands[0].shape.end() - 2);
  s.push_back(m);
  return {DType::I32, s};
}

// ---- evaluators ----------------------------------------------------------------------------

// One m x n matrix factored in place (row-major); its min(m, n) pivots.
void factor(double* a, std::int64_t m, std::int64_t n, std::int64_t* pivots) {
  for (std::int64_t j = 0; j < std::min(m, n); ++j) {
    std::int64_t p = j;
    double best = std::abs(a[j * n + j]);
    for (std::int64_t i = j + 1; i < m; ++i)
      if (std::abs(a[i * n + j]) > best) {
        best = std::abs(a[i * n + j]);
        p = i;
      }
    pivots[j] = p;
    if (p != j)
      for (std::int64_t c = 0; c < n; ++c) std::swap(a[j * n + c], a[p * n + c]);
    const double pivot = a[j * n + j];
    if (pivot != 0)
      for (std::int64_t i = j + 1; i < m; ++i) a[i * n + j] /= pivot;
    for (std::int64_t i = j + 1; i < m; ++i)
      for (std::int64_t c = j + 1; c < n; ++c) a[i * n + c] -= a[i * n + j] * a[j * n + c];
  }
}

enum class LuPart { factors, pivots, permutation };

template <LuPart part>
Value evaluate_lu(const Node& node, Operands operands) {
  const Value& x = *operands[0];
  Value out = interp::make_value(node.dtype, node.shape);
  const std::size_t r = x.shape.size();
  const std::int64_t m = x.shape[r - 2], n = x.shape[r - 1], k = std::min(m, n);
  if (m == 0 || n == 0) return out;
  const std::int64_t batch = x.size() / (m * n);
  std::vector<double> a(static_cast<std::size_t>(m * n));
  std::vector<std::int64_t> pivots(static_cast<std::size_t>(k)), perm(static_cast<std::size_t>(m));
  for (std::int64_t b = 0; b < batch; ++b) {
    std::copy_n(x.f.begin() + b * m * n, m * n, a.begin());
    factor(a.data(), m, n, pivots.data());
    if constexpr (part == LuPart::factors) {
      for (std::int64_t i = 0; i < m * n; ++i)
        out.f[b * m * n + i] = interp::round_to(node.dtype, a[i]);
    } else if constexpr (part == LuPart::pivots) {
      std::copy(pivots.begin(), pivots.end(), out.i.begin() + b * k);
    } else {
      std::iota(perm.begin(), perm.end(), std::int64_t{0});
      for (std::int64_t i = 0; i < k; ++i) std::swap(perm[i], perm[pivots[i]]);
      std::copy(perm.begin(), perm.end(), out.i.begin() + b * m);
    }
  }
  return out;
}

// ---- rules ---------------------------------------------------------------------------------

// JAX's _lu_jvp_inner (De Hoog, Anderssen and Lukas): with P a = L U and
// X = L^-1 P a_dot U^-1, L_dot = L tril(X, -1) and U_dot = triu(X) U; the tangent of the packed
// factors is their sum. A non-square a pads L and U to square with the identity.
Tangent jvp_lu(const Node&, std::span<const Array> primals, std::span<const Tangent> tangents,
               const Array& lu, const std::source_location& loc) {
  if (!tangents[0]) return std::nullopt;
  const Array& a_dot = *tangents[0];
  const Shape& shape = lu.shape();
  const std::size_t r = shape.size();
  const std::int64_t m = shape[r - 2], n = shape[r - 1], k = std::min(m, n);
  const DType t = lu.dtype();
  const Array operands[] = {primals[0]};
  const Array permutation = detail::bind(OpKind::LuPermutation, operands, {}, {}, loc);
  // a_dot's rows permuted: a one-hot matrix P[..., i, j] = (permutation[..., i] == j), times it.
  Shape square_m = shape;
  square_m[r - 1] = m;
  const Array rows_of = lax::broadcast_in_dim(permutation, square_m, iota_axes(0, r - 1), loc);
  const Array one_hot = lax::convert_element_type(
      lax::eq(rows_of, lax::iota(DType::I32, square_m, static_cast<std::int64_t>(r - 1), loc), loc),
      t, loc);
  const Array x = batch_matmul(one_hot, a_dot, loc);

  const Array zero = lax::constant(0.0, t, loc);
  const Axes none(r, 0);
  Axes start(r, 0), limit(shape.begin(), shape.end());
  limit[r - 1] = k;
  Axes pad_l = none;
  pad_l[r - 1] = m - k;
  const Array l = lax::add(lax::pad(triangle(lax::slice(lu, start, limit, {}, loc), true, -1, loc),
                                    zero, none, pad_l, {}, loc),
                           identity(t, square_m, loc), loc);
  limit = Axes(shape.begin(), shape.end());
  limit[r - 2] = k;
  Axes pad_u = none;
  pad_u[r - 2] = n - k;
  Shape square_n = shape;
  square_n[r - 2] = n;
  // The identity's rows from k on complete U.
  const Array row_n = lax::iota(DType::I32, square_n, static_cast<std::int64_t>(r - 2), loc);
  const Array eye_n = identity(t, square_n, loc);
  const Array u_eye = lax::select(lax::ge(row_n, full(row_n, static_cast<double>(k), loc), loc),
                                  eye_n, full(eye_n, 0.0, loc), loc);
  const Array u = lax::add(lax::pad(triangle(lax::slice(lu, start, limit, {}, loc), false, 0, loc),
                                    zero, none, pad_u, {}, loc),
                           u_eye, loc);

  const Array la =
      lax::triangular_solve(l, x, {.left_side = true, .lower = true, .unit_diagonal = true}, loc);
  const Array lau = lax::triangular_solve(u, la, {.left_side = false, .lower = false}, loc);
  return lax::add(batch_matmul(l, triangle(lau, true, -1, loc), loc),
                  batch_matmul(triangle(lau, false, 0, loc), u, loc), loc);
}

// Pivots and permutations are integers: no tangent.
Tangent jvp_positions(const Node&, std::span<const Array>, std::span<const Tangent>, const Array&,
                      const std::source_location&) {
  return std::nullopt;
}

Primitive lu_part(OpKind kind, std::string_view name) {
  Primitive p = row(kind, name, OpClass::Linalg, 1);
  p.info.own_kernel = true;
  p.info.fusion_cost = 4;
  p.info.jax_names = "lu";
  p.info.own_kernel_family = "lu";
  p.transpose = none<TransposeRule>("has no transpose rule: lu is not linear in its operand");
  p.batch = rule_from(batch_as_leading_axis);
  return p;
}

}  // namespace

void define_lu_primitives(Definitions& defs) {
  Primitive lu = lu_part(OpKind::Lu, "lu");
  lu.info.jax_names = {};
  lu.type = lu_type;
  lu.evaluate = evaluate_lu<LuPart::factors>;
  lu.jvp = rule_from(jvp_lu);
  defs.add(std::move(lu));

  Primitive pivots = lu_part(OpKind::LuPivots, "lu_pivots");
  pivots.type = lu_pivots_type;
  pivots.evaluate = evaluate_lu<LuPart::pivots>;
  pivots.jvp = rule_from(jvp_positions);
  defs.add(std::move(pivots));

  Primitive permutation = lu_part(OpKind::LuPermutation, "lu_permutation");
  permutation.type = lu_permutation_type;
  permutation.evaluate = evaluate_lu<LuPart::permutation>;
  permutation.jvp = rule_from(jvp_positions);
  defs.add(std::move(permutation));
}

}  // namespace weft::prim
