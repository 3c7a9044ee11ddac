// weft::lax's linear algebra (its primitives: primitives/linalg.cpp, lu.cpp).
#include "weft/ir/op_attrs.h"
#include "weft/ops.h"
#include "weft/trace/trace.h"

namespace weft::lax {

Array cholesky(const Array& x, std::source_location loc) {
  const Array operands[] = {x};
  return detail::bind(OpKind::Cholesky, operands, {}, {}, loc);
}

Array triangular_solve(const Array& a, const Array& b, const TriangularSolveAttrs& attrs,
                       std::source_location loc) {
  // A vector b (one axis fewer than a) is a single right-hand side, as in JAX's wrapper.
  const bool vector = a.shape().size() >= 2 && b.shape().size() + 1 == a.shape().size();
  if (!vector) {
    const Array operands[] = {a, b};
    return detail::bind(OpKind::TriangularSolve, operands, attrs.write(), {}, loc);
  }
  Shape as_matrix = b.shape();
  as_matrix.insert(attrs.left_side ? as_matrix.end() : as_matrix.end() - 1, 1);
  const Array operands[] = {a, reshape(b, as_matrix, loc)};
  const Array x = detail::bind(OpKind::TriangularSolve, operands, attrs.write(), {}, loc);
  return reshape(x, b.shape(), loc);
}

std::tuple<Array, Array, Array> lu(const Array& a, std::source_location loc) {
  const Array operands[] = {a};
  return {detail::bind(OpKind::Lu, operands, {}, {}, loc),
          detail::bind(OpKind::LuPivots, operands, {}, {}, loc),
          detail::bind(OpKind::LuPermutation, operands, {}, {}, loc)};
}

}  // namespace weft::lax
