// The jvp rules of cummax, cummin, sort and top_k move tangent elements along one axis by
// positions computed from the primals: a one-hot mask over each line (n x m elements for n
// positions picked from a line of m), built from ops every backend has.
#pragma once

#include <numeric>

#include "primitives/structural_rules.h"
#include "weft/ops.h"

namespace weft::prim {

// r[..., i, ...] = t[..., at[..., i, ...], ...] along `axis`; `at` (i32) has t's shape but for
// the size of `axis`.
inline Array pick_along_axis(const Array& t, const Array& at, std::int64_t axis,
                             const std::source_location& loc) {
  using namespace lax;
  const Shape& shape = at.shape();
  const std::int64_t rank = static_cast<std::int64_t>(shape.size());
  const std::int64_t len = t.shape()[static_cast<std::size_t>(axis)];
  // [..., i, ..., j]: whether element i takes position j of its line.
  Shape wide = shape;
  wide.push_back(len);
  Axes leading(shape.size());
  std::iota(leading.begin(), leading.end(), std::int64_t{0});
  const Array picks = convert_element_type(
      eq(broadcast_in_dim(at, wide, leading, loc), iota(DType::I32, wide, rank, loc), loc),
      t.dtype(), loc);
  // t with `axis` moved last, as j.
  Axes others, to_last;
  for (std::int64_t d = 0; d < rank; ++d)
    if (d != axis) others.push_back(d);
  to_last = others;
  to_last.push_back(axis);
  others.push_back(rank);
  const Array t_by_j = broadcast_in_dim(transpose(t, to_last, loc), wide, others, loc);
  return reduce_sum(mul(picks, t_by_j, loc), {rank}, loc);
}

}  // namespace weft::prim
