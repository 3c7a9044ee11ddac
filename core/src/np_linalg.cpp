// weft::np::linalg over weft::lax's linear algebra (linalg_ops.cpp), as jax.numpy.linalg and
// jax.scipy.linalg write theirs.
#include "weft/np_linalg.h"

#include <cmath>
#include <initializer_list>

#include "np_internal.h"

namespace weft::np::linalg {

using namespace internal;

namespace {

// Integer and bool operands compute in f32 (promote_dtypes_inexact).
Array inexact(const Array& x, DType t, const std::source_location& loc) {
  return cast(x, inexact_type(t), loc);
}

void check_square(const Array& a, const char* op, const std::source_location& loc) {
  const Shape& s = a.shape();
  if (s.size() < 2 || s[s.size() - 1] != s[s.size() - 2])
    throw ShapeError(std::string(op) + ": a must be a square matrix or a batch of them " +
                     "[..., n, n]; got " + shape_to_string(s) + " at " + loc_str(loc));
}

// x with its last two axes swapped.
Array matrix_transpose(const Array& x, const std::source_location& loc) {
  const std::size_t r = x.shape().size();
  Axes perm(r);
  for (std::size_t d = 0; d < r; ++d) perm[d] = static_cast<std::int64_t>(d);
  std::swap(perm[r - 1], perm[r - 2]);
  return lax::transpose(x, perm, loc);
}

// Solves a x = b on the left side for a vector, a matrix or a batch of vectors b (as JAX's
// vectorize signatures "(n,n),(n)->(n)" and "(n,n),(n,k)->(n,k)"), the batch axes of a and b
// broadcast together. a and b already have one float dtype.
Array solve_left(const Array& a, const Array& b, TriangularSolveAttrs attrs, const char* op,
                 const std::source_location& loc) {
  check_square(a, op, loc);
  const Shape& sa = a.shape();
  const std::int64_t n = sa.back();
  const bool vector =
      b.shape().size() == 1 || (sa.size() == b.shape().size() + 1 && b.shape().back() == n);
  Shape column = b.shape();
  column.push_back(1);
  const Array matrix = vector ? lax::reshape(b, column, loc) : b;
  const Shape& sb = matrix.shape();
  if (sb.size() < 2 || sb[sb.size() - 2] != n)
    throw ShapeError(std::string(op) + ": b must be [n], [..., n, k] or [..., n] for a of " +
                     shape_to_string(sa) + "; got " + shape_to_string(b.shape()) + " at " +
                     loc_str(loc));
  Shape batch =
      broadcast_shapes(Shape(sa.begin(), sa.end() - 2), Shape(sb.begin(), sb.end() - 2), op);
  Shape a_shape = batch, b_shape = batch;
  a_shape.insert(a_shape.end(), {n, n});
  b_shape.insert(b_shape.end(), sb.end() - 2, sb.end());
  attrs.left_side = true;
  const Array x =
      lax::triangular_solve(bcast(a, a_shape, loc), bcast(matrix, b_shape, loc), attrs, loc);
  if (!vector) return x;
  Shape out = x.shape();
  out.pop_back();
  return lax::reshape(x, out, loc);
}

// The permutation matrices P[..., i, j] = (permutation[..., i] == j) of dtype t: P b takes b's
// rows in the permutation's order.
Array permutation_matrix(const Array& permutation, DType t, const std::source_location& loc) {
  Shape shape = permutation.shape();
  shape.push_back(shape.back());
  const auto r = static_cast<std::int64_t>(shape.size());
  Axes dims(static_cast<std::size_t>(r - 1));
  for (std::int64_t d = 0; d < r - 1; ++d) dims[static_cast<std::size_t>(d)] = d;
  const Array rows = lax::broadcast_in_dim(permutation, shape, dims, loc);
  return lax::convert_element_type(lax::eq(rows, lax::iota(DType::I32, shape, r - 1, loc), loc), t,
                                   loc);
}

// Each matrix's diagonal, [..., n].
Array diagonal(const Array& x, const std::source_location& loc) {
  const auto r = static_cast<std::int64_t>(x.shape().size());
  const Array on_diagonal = lax::eq(lax::iota(DType::I32, x.shape(), r - 2, loc),
                                    lax::iota(DType::I32, x.shape(), r - 1, loc), loc);
  return lax::reduce_sum(lax::select(on_diagonal, x, full_of(0, x, loc), loc), {r - 1}, loc);
}

// x[..., i, j], [...].
Array entry(const Array& x, std::int64_t i, std::int64_t j, const std::source_location& loc) {
  const std::size_t r = x.shape().size();
  Axes start(r, 0), limit(x.shape().begin(), x.shape().end());
  start[r - 2] = i;
  start[r - 1] = j;
  limit[r - 2] = i + 1;
  limit[r - 1] = j + 1;
  return lax::reshape(lax::slice(x, start, limit, {}, loc),
                      Shape(x.shape().begin(), x.shape().end() - 2), loc);
}

// JAX's _slogdet_lu: the sign from the pivots' and the diagonal's parity, the log of |det| from
// U's diagonal; a zero on it gives sign 0 and -inf.
std::pair<Array, Array> slogdet_lu(const Array& a, const std::source_location& loc) {
  const auto [factors, pivots, permutation] = lax::lu(a, loc);
  const Array diag = diagonal(factors, loc);
  const auto last = static_cast<std::int64_t>(diag.shape().size()) - 1;
  const auto count = [&](const Array& mask) {
    return lax::reduce_sum(lax::convert_element_type(mask, DType::I32, loc), {last}, loc);
  };
  const Array zeros = count(lax::eq(diag, full_of(0, diag, loc), loc));
  const Array is_zero = lax::gt(zeros, full_of(0, zeros, loc), loc);
  const Array swaps = count(lax::ne(pivots, lax::iota(DType::I32, pivots.shape(), last, loc), loc));
  const Array parity = lax::add(swaps, count(lax::lt(diag, full_of(0, diag, loc), loc)), loc);
  const Array odd =
      lax::eq(lax::rem(parity, full_of(2, parity, loc), loc), full_of(1, parity, loc), loc);
  const Array one = lax::broadcast_in_dim(lax::constant(1.0, a.dtype(), loc), odd.shape(), {}, loc);
  Array sign = lax::select(odd, lax::neg(one, loc), one, loc);
  sign = lax::select(is_zero, full_of(0, one, loc), sign, loc);
  Array logdet = lax::reduce_sum(lax::log(lax::abs(diag, loc), loc), {last}, loc);
  logdet = lax::select(is_zero, full_of(-INFINITY, logdet, loc), logdet, loc);
  return {sign, logdet};
}

}  // namespace

Array solve(const Array& a, const Array& b, std::source_location loc) {
  return fused("solve", loc, [&] {
    const DType t = promote_types(a.dtype(), b.dtype());
    const Array a_ = inexact(a, t, loc);
    Array b_ = inexact(b, t, loc);
    check_square(a_, "solve", loc);
    const Shape &sa = a_.shape(), &sb = b_.shape();
    if (sb.size() > 1 && sa.size() == sb.size() + 1 && sa.back() == sb.back() &&
        sa.back() != sb[sb.size() - 2])
      throw ShapeError("solve: b " + shape_to_string(sb) + " would be a batch of vectors for a " +
                       shape_to_string(sa) + "; JAX solves matrices [..., n, k] here: pass " +
                       "b with a trailing axis of 1 and drop it after at " + loc_str(loc));
    const bool vector = sb.size() == 1;
    Shape column = sb;
    column.push_back(1);
    const Array matrix = vector ? lax::reshape(b_, column, loc) : b_;
    const Shape& sm = matrix.shape();
    const std::int64_t n = sa.back();
    if (sm[sm.size() - 2] != n)
      throw ShapeError("solve: b must be [n] or [..., n, k] for a of " + shape_to_string(sa) +
                       "; got " + shape_to_string(sb) + " at " + loc_str(loc));
    const Shape batch =
        broadcast_shapes(Shape(sa.begin(), sa.end() - 2), Shape(sm.begin(), sm.end() - 2), "solve");
    Shape a_shape = batch, b_shape = batch;
    a_shape.insert(a_shape.end(), {n, n});
    b_shape.insert(b_shape.end(), sm.end() - 2, sm.end());
    const auto [factors, pivots, permutation] = lax::lu(bcast(a_, a_shape, loc), loc);
    // P a = L U: L U x = P b.
    const Array pb =
        matmul(permutation_matrix(permutation, t, loc), bcast(matrix, b_shape, loc), loc);
    const Array y = lax::triangular_solve(
        factors, pb, {.left_side = true, .lower = true, .unit_diagonal = true}, loc);
    const Array x = lax::triangular_solve(factors, y, {.left_side = true, .lower = false}, loc);
    if (!vector) return x;
    Shape out = x.shape();
    out.pop_back();
    return lax::reshape(x, out, loc);
  });
}

Array inv(const Array& a, std::source_location loc) {
  return fused("inv", loc, [&] {
    const Array a_ = inexact(a, a.dtype(), loc);
    check_square(a_, "inv", loc);
    return solve(a_, bcast(eye(a_.shape().back(), a_.dtype(), loc), a_.shape(), loc), loc);
  });
}

std::pair<Array, Array> slogdet(const Array& a, std::source_location loc) {
  const Array a_ = inexact(a, a.dtype(), loc);
  check_square(a_, "slogdet", loc);
  // Traced, once; eager, one fused program per result (a fused program has one result).
  if (weft::detail::tracing_active()) return slogdet_lu(a_, loc);
  return {fused("slogdet", loc, [&] { return slogdet_lu(a_, loc).first; }),
          fused("slogdet", loc, [&] { return slogdet_lu(a_, loc).second; })};
}

Array det(const Array& a, std::source_location loc) {
  return fused("det", loc, [&] {
    const Array x = inexact(a, a.dtype(), loc);
    check_square(x, "det", loc);
    const std::int64_t n = x.shape().back();
    auto e = [&](std::int64_t i, std::int64_t j) { return entry(x, i, j, loc); };
    auto product = [&](std::initializer_list<Array> factors) {
      Array p = *factors.begin();
      for (auto it = factors.begin() + 1; it != factors.end(); ++it) p = lax::mul(p, *it, loc);
      return p;
    };
    // Closed forms for 2x2 and 3x3, as jnp.linalg.det.
    if (n == 2) return lax::sub(product({e(0, 0), e(1, 1)}), product({e(0, 1), e(1, 0)}), loc);
    if (n == 3) {
      Array d =
          lax::add(product({e(0, 0), e(1, 1), e(2, 2)}), product({e(0, 1), e(1, 2), e(2, 0)}), loc);
      d = lax::add(d, product({e(0, 2), e(1, 0), e(2, 1)}), loc);
      d = lax::sub(d, product({e(0, 2), e(1, 1), e(2, 0)}), loc);
      d = lax::sub(d, product({e(0, 0), e(1, 2), e(2, 1)}), loc);
      return lax::sub(d, product({e(0, 1), e(1, 0), e(2, 2)}), loc);
    }
    const auto [sign, logdet] = slogdet_lu(x, loc);
    return lax::mul(sign, lax::exp(logdet, loc), loc);
  });
}

Array cholesky(const Array& x, bool upper, std::source_location loc) {
  return fused("cholesky", loc, [&] {
    const Array a = inexact(x, x.dtype(), loc);
    check_square(a, "cholesky", loc);
    const Array half = full_of(0.5, a, loc);
    const Array symmetric = lax::mul(lax::add(a, matrix_transpose(a, loc), loc), half, loc);
    const Array l = lax::cholesky(symmetric, loc);
    return upper ? matrix_transpose(l, loc) : l;
  });
}

Array solve_triangular(const Array& a, const Array& b, int trans, bool lower, bool unit_diagonal,
                       std::source_location loc) {
  if (trans < 0 || trans > 2)
    throw InvalidArgumentError("solve_triangular: trans=" + std::to_string(trans) +
                               " must be 0 (a x = b), 1 (a^T x = b) or 2 (a^H x = b) at " +
                               loc_str(loc));
  return fused("solve_triangular", loc, [&] {
    const DType t = promote_types(a.dtype(), b.dtype());
    return solve_left(inexact(a, t, loc), inexact(b, t, loc),
                      {.lower = lower,
                       .transpose_a = trans != 0,
                       .conjugate_a = trans == 2,
                       .unit_diagonal = unit_diagonal},
                      "solve_triangular", loc);
  });
}

Array cho_solve(const std::pair<Array, bool>& c_and_lower, const Array& b,
                std::source_location loc) {
  // Named copies, not a structured binding: clang 15 cannot capture those in a lambda.
  const Array& c0 = c_and_lower.first;
  const bool lower = c_and_lower.second;
  return fused("cho_solve", loc, [&] {
    const DType t = promote_types(c0.dtype(), b.dtype());
    const Array c = inexact(c0, t, loc);
    // A = L L^T: solve L y = b, then L^T x = y (or, from U = L^T, U^T y = b and U x = y).
    const Array y = solve_left(c, inexact(b, t, loc),
                               {.lower = lower, .transpose_a = !lower, .conjugate_a = !lower},
                               "cho_solve", loc);
    return solve_left(c, y, {.lower = lower, .transpose_a = lower, .conjugate_a = lower},
                      "cho_solve", loc);
  });
}

}  // namespace weft::np::linalg
