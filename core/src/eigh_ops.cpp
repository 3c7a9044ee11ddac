// weft::lax::eigh (its primitives: primitives/eigh.cpp).
#include "weft/ir/op_attrs.h"
#include "weft/ops.h"
#include "weft/trace/trace.h"

namespace weft::lax {

std::pair<Array, Array> eigh(const Array& x, bool lower, bool symmetrize_input,
                             bool sort_eigenvalues, std::source_location loc) {
  Array a = x;
  const Shape& s = x.shape();
  const bool square_float = s.size() >= 2 && s[s.size() - 1] == s[s.size() - 2] &&
                            (x.dtype() == DType::F32 || x.dtype() == DType::F64);
  // As JAX's wrapper, not the primitive: (x + x^T) / 2. Anything else goes to the primitive
  // as it is, whose type rule says what is wrong.
  if (symmetrize_input && square_float) {
    const std::size_t r = s.size();
    Axes perm(r);
    for (std::size_t d = 0; d < r; ++d) perm[d] = static_cast<std::int64_t>(d);
    std::swap(perm[r - 1], perm[r - 2]);
    const Array half = broadcast_in_dim(constant(0.5, x.dtype(), loc), s, {}, loc);
    a = mul(add(x, transpose(x, perm, loc), loc), half, loc);
  }
  const Array operands[] = {a};
  const Attrs attrs = EighAttrs{lower, sort_eigenvalues}.write();
  return {detail::bind(OpKind::EighVectors, operands, attrs, {}, loc),
          detail::bind(OpKind::EighValues, operands, attrs, {}, loc)};
}

}  // namespace weft::lax
