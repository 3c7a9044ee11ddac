// weft::lax's sorts of several operands: the stable lexicographic permutation of the keys
// (argsort), gathered out of every operand along the sorted dimension.
#include <string>

#include "weft/error.h"
#include "weft/ir/op_attrs.h"
#include "weft/ops.h"

namespace weft::lax {

namespace {

std::string loc_text(const std::source_location& loc) {
  return std::string(loc.file_name()) + ":" + std::to_string(loc.line());
}

// x permuted along `axis` by `perm` (x's shape, i32 positions along axis): take_along_axis.
Array permute_along(const Array& x, const Array& perm, std::int64_t axis,
                    const std::source_location& loc) {
  const auto rank = static_cast<std::int64_t>(x.shape().size());
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
  Shape index_shape = perm.shape();
  index_shape.push_back(1);
  return gather(x, reshape(perm, index_shape, loc), g, loc);
}

}  // namespace

std::vector<Array> sort(const std::vector<Array>& operands, std::int64_t dimension,
                        std::int64_t num_keys, std::source_location loc) {
  if (operands.empty())
    throw InvalidArgumentError("sort: needs at least one operand at " + loc_text(loc));
  if (num_keys < 1 || num_keys > static_cast<std::int64_t>(operands.size()))
    throw InvalidArgumentError("sort: num_keys=" + std::to_string(num_keys) +
                               " must be between 1 and the number of operands (" +
                               std::to_string(operands.size()) + ") at " + loc_text(loc));
  const Shape& shape = operands[0].shape();
  for (const Array& x : operands)
    if (x.shape() != shape)
      throw ShapeError("sort: operands " + shape_to_string(shape) + " and " +
                       shape_to_string(x.shape()) + " differ; all must have one shape at " +
                       loc_text(loc));
  const auto rank = static_cast<std::int64_t>(shape.size());
  if (dimension < -rank || dimension >= rank)
    throw ShapeError("sort: dimension " + std::to_string(dimension) + " is out of range for " +
                     shape_to_string(shape) + " at " + loc_text(loc));
  const std::int64_t axis = dimension < 0 ? dimension + rank : dimension;
  if (operands.size() == 1) return {sort(operands[0], axis, loc)};
  const std::vector<Array> keys(operands.begin(), operands.begin() + num_keys);
  const Array perm = argsort(keys, axis, loc);
  std::vector<Array> sorted;
  for (const Array& x : operands) sorted.push_back(permute_along(x, perm, axis, loc));
  return sorted;
}

std::pair<Array, Array> sort_key_val(const Array& keys, const Array& values, std::int64_t dimension,
                                     std::source_location loc) {
  const std::vector<Array> sorted = sort({keys, values}, dimension, 1, loc);
  return {sorted[0], sorted[1]};
}

}  // namespace weft::lax
