#include "primitives/matrix_rules.h"

#include "primitives/structural_rules.h"
#include "weft/ops.h"

namespace weft::prim {

Array batch_matmul(const Array& x, const Array& y, const std::source_location& loc) {
  const std::size_t r = x.shape().size();
  const Axes batch = iota_axes(0, r - 2);
  return lax::dot_general(x, y,
                          lax::DotDims{.lhs_contracting = {static_cast<std::int64_t>(r - 1)},
                                       .rhs_contracting = {static_cast<std::int64_t>(r - 2)},
                                       .lhs_batch = batch,
                                       .rhs_batch = batch},
                          loc);
}

Array swap_last_two(const Array& x, const std::source_location& loc) {
  const std::size_t r = x.shape().size();
  Axes perm = iota_axes(0, r);
  std::swap(perm[r - 1], perm[r - 2]);
  return lax::transpose(x, perm, loc);
}

Array triangle(const Array& x, bool lower, std::int64_t k, const std::source_location& loc) {
  const auto r = static_cast<std::int64_t>(x.shape().size());
  const Array row = lax::iota(DType::I32, x.shape(), r - 2, loc);
  const Array col = lax::iota(DType::I32, x.shape(), r - 1, loc);
  const Array shifted = lax::add(row, full(row, static_cast<double>(k), loc), loc);
  const Array keep = lower ? lax::le(col, shifted, loc) : lax::ge(col, shifted, loc);
  return lax::select(keep, x, full(x, 0.0, loc), loc);
}

Array identity(DType t, const Shape& shape, const std::source_location& loc) {
  const auto r = static_cast<std::int64_t>(shape.size());
  const Array row = lax::iota(DType::I32, shape, r - 2, loc);
  const Array col = lax::iota(DType::I32, shape, r - 1, loc);
  return lax::convert_element_type(lax::eq(row, col, loc), t, loc);
}

}  // namespace weft::prim
