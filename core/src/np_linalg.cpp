// weft::np::linalg over weft::lax's linear algebra (linalg_ops.cpp), as jax.numpy.linalg and
// jax.scipy.linalg write theirs.
#include "weft/np_linalg.h"

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

}  // namespace

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
  const auto& [c0, lower] = c_and_lower;
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
