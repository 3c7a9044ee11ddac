// The jvp rules of cummax, cummin, sort and top_k move tangent elements along one axis by
// positions computed from the primals: a gather of one element per position, as JAX's rules do
// (its transpose, a scatter-add, serves grad).
#pragma once

#include "primitives/structural_rules.h"
#include "weft/ir/op_attrs.h"
#include "weft/ops.h"

namespace weft::prim {

// r[..., i, ...] = t[..., at[..., i, ...], ...] along `axis`; `at` (i32, every position within
// the axis) has t's shape but for the size of `axis`.
inline Array pick_along_axis(const Array& t, const Array& at, std::int64_t axis,
                             const std::source_location& loc) {
  const auto rank = static_cast<std::int64_t>(at.shape().size());
  GatherAttrs g;
  for (std::int64_t d = 0; d < rank; ++d)
    if (d != axis) {
      g.operand_batching_dims.push_back(d);
      g.start_indices_batching_dims.push_back(d);
    }
  g.collapsed_slice_dims = {axis};
  g.start_index_map = {axis};
  g.slice_sizes.assign(static_cast<std::size_t>(rank), 1);
  g.mode = IndexMode::promise_in_bounds;
  Shape index_shape = at.shape();
  index_shape.push_back(1);
  return lax::gather(t, lax::reshape(at, index_shape, loc), g, loc);
}

}  // namespace weft::prim
