// Gather and the scatters (jax.lax semantics, XLA's dimension numbers with the index vector
// along the indices' last axis). Gather is linear in its operand: its jvp gathers the tangent
// and its transpose is a scatter_add. scatter_add is linear in operand and updates; scatter's
// jvp masks out the updates that lose a collision, as JAX's does, so that its linear part is
// scatter_adds; scatter_mul, scatter_min and scatter_max follow JAX's rules.
#include <algorithm>
#include <cmath>
#include <limits>

#include "interp/index.h"
#include "primitives/families.h"
#include "primitives/structural_rules.h"
#include "primitives/type_rule_checks.h"
#include "weft/error.h"
#include "weft/ir/op_attrs.h"
#include "weft/ops.h"
#include "weft/trace/trace.h"

namespace weft {

IndexMode index_mode_from_name(const std::string& name, const char* attr) {
  for (IndexMode m : {IndexMode::clip, IndexMode::fill, IndexMode::promise_in_bounds})
    if (name == index_mode_name(m)) return m;
  throw InvalidGraphError("attribute '" + std::string(attr) + "' is \"" + name +
                          "\"; write one of \"clip\", \"fill\", \"promise_in_bounds\"");
}

}  // namespace weft

namespace weft::prim {

namespace {

using interp::Operands;
using interp::Value;

// ---- geometry shared by gather and scatter -----------------------------------------------

// The operand axes a window runs along: neither collapsed (inserted) nor batching, ascending.
Axes window_axes(std::size_t rank, const Axes& collapsed, const Axes& batching) {
  Axes out;
  for (std::size_t d = 0; d < rank; ++d) {
    const auto axis = static_cast<std::int64_t>(d);
    if (!contains(collapsed, axis) && !contains(batching, axis)) out.push_back(axis);
  }
  return out;
}

// The positions of a rank-`rank` index not in `window_positions`, ascending: the axes that walk
// the indices' batch.
Axes batch_positions(std::size_t rank, const Axes& window_positions) {
  Axes out;
  for (std::size_t d = 0; d < rank; ++d)
    if (!contains(window_positions, static_cast<std::int64_t>(d)))
      out.push_back(static_cast<std::int64_t>(d));
  return out;
}

// Both lists are sorted, unique and inside [0, rank).
void check_sorted_axes(OpKind op, std::span<const TensorType> operands, const Axes& axes,
                       std::size_t rank, const char* attr) {
  check_axes_list(op, operands, axes, rank, attr);
}

void check_axes_in(OpKind op, std::span<const TensorType> operands, const Axes& axes,
                   std::size_t rank, const char* attr) {
  for (std::size_t i = 0; i < axes.size(); ++i) {
    if (axes[i] < 0 || axes[i] >= static_cast<std::int64_t>(rank))
      shape_fail(op, operands,
                 std::string(attr) + "=" + list_to_string(axes) + " names an axis outside rank " +
                     std::to_string(rank));
    for (std::size_t j = 0; j < i; ++j)
      if (axes[j] == axes[i])
        shape_fail(op, operands,
                   std::string(attr) + "=" + list_to_string(axes) + " repeats an axis");
  }
}

// What gather and scatter check alike: the indices are integers with the index vector last,
// one entry per mapped operand axis, and the batching axes pair up with equal sizes.
void check_indexing(OpKind op, std::span<const TensorType> operands, const TensorType& indices,
                    const Axes& index_map, const char* index_map_name, const Axes& collapsed,
                    const char* collapsed_name, const Axes& operand_batching,
                    const Axes& indices_batching, const char* indices_batching_name) {
  const TensorType& operand = operands[0];
  const std::size_t rank = operand.shape.size();
  if (!is_integer(indices.dtype)) dtype_fail(op, operands, "indices must be integers");
  if (indices.shape.empty())
    shape_fail(op, operands, "indices need an index vector axis (the last; JAX's convention)");
  const std::int64_t vector = indices.shape.back();
  if (vector != static_cast<std::int64_t>(index_map.size()))
    shape_fail(op, operands,
               "the indices' last axis has " + std::to_string(vector) + " entries but " +
                   index_map_name + "=" + list_to_string(index_map) + " maps " +
                   std::to_string(index_map.size()) + " operand axes");
  check_axes_in(op, operands, index_map, rank, index_map_name);
  check_sorted_axes(op, operands, collapsed, rank, collapsed_name);
  check_sorted_axes(op, operands, operand_batching, rank, GatherAttrs::kOperandBatchingDims);
  check_axes_in(op, operands, indices_batching, indices.shape.size() - 1, indices_batching_name);
  if (operand_batching.size() != indices_batching.size())
    shape_fail(op, operands,
               std::string("operand_batching_dims and ") + indices_batching_name +
                   " must have one entry each per batching axis");
  for (std::size_t i = 0; i < operand_batching.size(); ++i) {
    if (contains(collapsed, operand_batching[i]) || contains(index_map, operand_batching[i]))
      shape_fail(op, operands,
                 "operand batching axis " + std::to_string(operand_batching[i]) + " is also in " +
                     collapsed_name + " or " + index_map_name);
    if (operand.shape[operand_batching[i]] != indices.shape[indices_batching[i]])
      shape_fail(op, operands,
                 "operand batching axis " + std::to_string(operand_batching[i]) +
                     " and indices batching axis " + std::to_string(indices_batching[i]) +
                     " differ in size");
  }
}

// Where one indices batch position G (the indices' multi-index less its vector axis) puts a
// window of `sizes` (per operand axis) into an operand of `shape`: the start per operand axis,
// and whether every mapped start was in bounds (before clamping).
struct WindowStart {
  std::vector<std::int64_t> start;
  bool in_bounds = true;
};

WindowStart window_start(const Value& indices, std::int64_t batch_row, const Axes& index_map,
                         const Axes& operand_batching, const Axes& indices_batching,
                         const std::vector<std::int64_t>& batch_index, const Shape& shape,
                         const std::vector<std::int64_t>& sizes) {
  WindowStart w;
  w.start.assign(shape.size(), 0);
  const auto k = static_cast<std::int64_t>(index_map.size());
  for (std::int64_t j = 0; j < k; ++j) {
    const auto d = static_cast<std::size_t>(index_map[j]);
    const std::int64_t hi = shape[d] - sizes[d];
    const std::int64_t s = indices.i[batch_row * k + j];
    if (s < 0 || s > hi) w.in_bounds = false;
    w.start[d] = std::clamp<std::int64_t>(s, 0, hi);
  }
  for (std::size_t b = 0; b < operand_batching.size(); ++b)
    w.start[operand_batching[b]] = batch_index[indices_batching[b]];
  return w;
}

std::int64_t row_major_offset(const std::vector<std::int64_t>& index, const Shape& shape) {
  std::int64_t offset = 0;
  for (std::size_t d = 0; d < shape.size(); ++d) offset = offset * shape[d] + index[d];
  return offset;
}

// Per batch row of the indices (row-major over their shape less the vector axis): the operand
// offset of its window's start, or -1 where the window is out of bounds and dropped (fill
// mode). Computed once per row: per element, its vectors cost more than the element's copy.
std::vector<std::int64_t> window_bases(const Value& indices, const Axes& index_map,
                                       const Axes& operand_batching, const Axes& indices_batching,
                                       const Shape& shape, const std::vector<std::int64_t>& sizes,
                                       bool drop_out_of_bounds) {
  const Shape batch_shape(indices.shape.begin(), indices.shape.end() - 1);
  std::vector<std::int64_t> bases(static_cast<std::size_t>(num_elements(batch_shape)));
  interp::for_each_index(batch_shape, [&](std::int64_t row, const std::vector<std::int64_t>& g) {
    const WindowStart w =
        window_start(indices, row, index_map, operand_batching, indices_batching, g, shape, sizes);
    bases[row] = drop_out_of_bounds && !w.in_bounds ? -1 : row_major_offset(w.start, shape);
  });
  return bases;
}

// Per axis of a gather's result or a scatter's updates: how far a step along it moves the batch
// row (its `batch` axes, in the indices' order) and the offset in the operand (its `offsets`
// axes, along operand axes `window`).
struct AxisSteps {
  std::vector<std::int64_t> row, operand;
};

AxisSteps axis_steps(std::size_t rank, const Axes& batch, const Shape& batch_shape,
                     const Axes& offsets, const Axes& window, const Shape& operand) {
  AxisSteps steps{std::vector<std::int64_t>(rank, 0), std::vector<std::int64_t>(rank, 0)};
  std::int64_t stride = 1;
  for (std::size_t j = batch.size(); j-- > 0;) {
    steps.row[batch[j]] = stride;
    stride *= batch_shape[j];
  }
  for (std::size_t j = 0; j < offsets.size(); ++j) {
    std::int64_t operand_stride = 1;
    for (std::size_t d = window[j] + 1; d < operand.size(); ++d) operand_stride *= operand[d];
    steps.operand[offsets[j]] = operand_stride;
  }
  return steps;
}

// Calls fn(k, base, offset) for element k of `shape` in row-major order: `base` is its batch
// row's entry of `bases`, `offset` its place within the window.
template <typename F>
void for_each_windowed(const Shape& shape, const AxisSteps& steps,
                       const std::vector<std::int64_t>& bases, F&& fn) {
  interp::for_each_index(shape, [&](std::int64_t k, const std::vector<std::int64_t>& o) {
    std::int64_t row = 0, offset = 0;
    for (std::size_t d = 0; d < o.size(); ++d) {
      row += o[d] * steps.row[d];
      offset += o[d] * steps.operand[d];
    }
    fn(k, bases[row], offset);
  });
}

// ---- gather --------------------------------------------------------------------------------

TensorType gather_type(OpKind op, std::span<const TensorType> operands, const Attrs& attrs,
                       const TensorType&) {
  if (operands.size() != 2) shape_fail(op, operands, "expects an operand and indices");
  const GatherAttrs a = GatherAttrs::read(attrs);
  const TensorType& operand = operands[0];
  const TensorType& indices = operands[1];
  const std::size_t rank = operand.shape.size();
  check_indexing(op, operands, indices, a.start_index_map, GatherAttrs::kStartIndexMap,
                 a.collapsed_slice_dims, GatherAttrs::kCollapsedSliceDims, a.operand_batching_dims,
                 a.start_indices_batching_dims, GatherAttrs::kStartIndicesBatchingDims);
  if (a.slice_sizes.size() != rank)
    shape_fail(
        op, operands,
        "slice_sizes=" + list_to_string(a.slice_sizes) + " needs one entry per operand axis");
  for (std::size_t d = 0; d < rank; ++d) {
    if (a.slice_sizes[d] < 0 || a.slice_sizes[d] > operand.shape[d])
      shape_fail(op, operands,
                 "slice_sizes=" + list_to_string(a.slice_sizes) + " exceeds the operand on axis " +
                     std::to_string(d));
    const auto axis = static_cast<std::int64_t>(d);
    if ((contains(a.collapsed_slice_dims, axis) || contains(a.operand_batching_dims, axis)) &&
        a.slice_sizes[d] != 1)
      shape_fail(op, operands,
                 "slice_sizes=" + list_to_string(a.slice_sizes) + " must be 1 on collapsed and " +
                     "batching axis " + std::to_string(d));
  }
  const Axes window = window_axes(rank, a.collapsed_slice_dims, a.operand_batching_dims);
  const std::size_t batch_rank = indices.shape.size() - 1;
  const std::size_t out_rank = batch_rank + window.size();
  if (a.offset_dims.size() != window.size())
    shape_fail(op, operands,
               "offset_dims=" + list_to_string(a.offset_dims) + " must name one result axis per " +
                   "operand axis neither collapsed nor batching (" + std::to_string(window.size()) +
                   ")");
  check_sorted_axes(op, operands, a.offset_dims, out_rank, GatherAttrs::kOffsetDims);
  Shape out(out_rank);
  for (std::size_t j = 0; j < window.size(); ++j) out[a.offset_dims[j]] = a.slice_sizes[window[j]];
  const Axes batch = batch_positions(out_rank, a.offset_dims);
  for (std::size_t j = 0; j < batch.size(); ++j) out[batch[j]] = indices.shape[j];
  return {operand.dtype, out};
}

// JAX's default fill value: NaN for floats, the lowest signed or highest unsigned integer,
// true for bool.
double default_fill(DType t) {
  if (is_float(t)) return std::numeric_limits<double>::quiet_NaN();
  if (is_signed_integer(t)) return static_cast<double>(interp::int_lowest(t));
  return static_cast<double>(interp::int_highest(t));
}

Value evaluate_gather(const Node& node, Operands operands) {
  const Value& x = *operands[0];
  const Value& indices = *operands[1];
  const GatherAttrs a = GatherAttrs::read(node.attrs);
  const Axes window = window_axes(x.shape.size(), a.collapsed_slice_dims, a.operand_batching_dims);
  const Axes batch = batch_positions(node.shape.size(), a.offset_dims);
  const Shape batch_shape(indices.shape.begin(), indices.shape.end() - 1);
  const bool fill_mode = a.mode == IndexMode::fill;
  const std::vector<std::int64_t> bases =
      window_bases(indices, a.start_index_map, a.operand_batching_dims,
                   a.start_indices_batching_dims, x.shape, a.slice_sizes, fill_mode);
  const AxisSteps steps =
      axis_steps(node.shape.size(), batch, batch_shape, a.offset_dims, window, x.shape);
  Value out = interp::make_value(node.dtype, node.shape);
  // The fill value only where a window is out of bounds (as a u64 bit pattern, the default
  // does not convert to an integer otherwise).
  const bool any_filled = std::find(bases.begin(), bases.end(), -1) != bases.end();
  const double fill = any_filled ? a.fill_value.value_or(default_fill(node.dtype)) : 0.0;
  auto copy = [&](auto& to, const auto& from, auto fill_value) {
    for_each_windowed(node.shape, steps, bases,
                      [&](std::int64_t k, std::int64_t base, std::int64_t offset) {
                        to[k] = base < 0 ? fill_value : from[base + offset];
                      });
  };
  if (is_float(node.dtype))
    copy(out.f, x.f, interp::round_to(node.dtype, fill));
  else
    copy(out.i, x.i, any_filled ? interp::wrap_to(node.dtype, static_cast<std::int64_t>(fill)) : 0);
  return out;
}

// The scatter that undoes a gather's indexing (its transpose) and back.
ScatterAttrs scatter_of(const GatherAttrs& g, bool unique) {
  ScatterAttrs s;
  s.update_window_dims = g.offset_dims;
  s.inserted_window_dims = g.collapsed_slice_dims;
  s.scatter_dims_to_operand_dims = g.start_index_map;
  s.operand_batching_dims = g.operand_batching_dims;
  s.scatter_indices_batching_dims = g.start_indices_batching_dims;
  s.mode = g.mode;
  s.unique_indices = unique;
  return s;
}

GatherAttrs gather_of(const ScatterAttrs& s, const Shape& operand, const Shape& updates) {
  GatherAttrs g;
  g.offset_dims = s.update_window_dims;
  g.collapsed_slice_dims = s.inserted_window_dims;
  g.start_index_map = s.scatter_dims_to_operand_dims;
  g.operand_batching_dims = s.operand_batching_dims;
  g.start_indices_batching_dims = s.scatter_indices_batching_dims;
  g.mode = s.mode;
  g.fill_value = 0.0;
  const Axes window = window_axes(operand.size(), s.inserted_window_dims, s.operand_batching_dims);
  g.slice_sizes.assign(operand.size(), 1);
  for (std::size_t j = 0; j < window.size(); ++j)
    g.slice_sizes[window[j]] = updates[s.update_window_dims[j]];
  return g;
}

Tangent jvp_gather(const Node& n, std::span<const Array> primals, std::span<const Tangent> tangents,
                   const Array&, const std::source_location& loc) {
  if (!tangents[0]) return std::nullopt;
  GatherAttrs a = GatherAttrs::read(n.attrs);
  a.fill_value = 0.0;  // what is filled is constant
  return lax::gather(*tangents[0], primals[1], a, loc);
}

std::vector<Tangent> transpose_gather(const Node& n, const Array& ct,
                                      std::span<const std::optional<Array>> values,
                                      std::span<const TensorType> types,
                                      const std::vector<bool>& linear, const std::string& api,
                                      const std::source_location& loc) {
  if (linear[1]) not_linear(n, api);
  std::vector<Tangent> out(2);
  out[0] = lax::scatter_add(zeros_of(types[0], loc), *values[1], ct,
                            scatter_of(GatherAttrs::read(n.attrs), false), loc);
  return out;
}

// Operand batched or not, indices batched or not: with JAX's batching dims, the batch axis
// of each becomes a batching axis pair (an unbatched operand is broadcast); batched indices
// alone add a batch axis to the indices only.
Batched batch_gather(const Node& n, std::span<const Batched> operands, std::int64_t batch_size,
                     const std::string&, const std::source_location& loc) {
  const GatherAttrs a = GatherAttrs::read(n.attrs);
  GatherAttrs b = a;
  b.offset_dims = shifted(a.offset_dims);
  b.start_indices_batching_dims = shifted(a.start_indices_batching_dims);
  const Array indices = batched_value(operands[1], batch_size, loc);
  if (!operands[0].batched) return {lax::gather(operands[0].value, indices, b, loc), true};
  b.collapsed_slice_dims = shifted(a.collapsed_slice_dims);
  b.start_index_map = shifted(a.start_index_map);
  b.operand_batching_dims = with_leading_axis(0, shifted(a.operand_batching_dims));
  b.start_indices_batching_dims = with_leading_axis(0, shifted(a.start_indices_batching_dims));
  b.slice_sizes = with_leading_axis(1, a.slice_sizes);
  return {lax::gather(operands[0].value, indices, b, loc), true};
}

// ---- the scatters --------------------------------------------------------------------------

TensorType scatter_type(OpKind op, std::span<const TensorType> operands, const Attrs& attrs,
                        const TensorType&) {
  if (operands.size() != 3) shape_fail(op, operands, "expects an operand, indices and updates");
  const ScatterAttrs a = ScatterAttrs::read(attrs);
  const TensorType& operand = operands[0];
  const TensorType& indices = operands[1];
  const TensorType& updates = operands[2];
  const std::size_t rank = operand.shape.size();
  if (updates.dtype != operand.dtype)
    dtype_fail(op, operands, "updates must have the operand's dtype");
  check_indexing(op, operands, indices, a.scatter_dims_to_operand_dims,
                 ScatterAttrs::kScatterDimsToOperandDims, a.inserted_window_dims,
                 ScatterAttrs::kInsertedWindowDims, a.operand_batching_dims,
                 a.scatter_indices_batching_dims, ScatterAttrs::kScatterIndicesBatchingDims);
  const Axes window = window_axes(rank, a.inserted_window_dims, a.operand_batching_dims);
  const std::size_t batch_rank = indices.shape.size() - 1;
  if (updates.shape.size() != batch_rank + window.size() ||
      a.update_window_dims.size() != window.size())
    shape_fail(op, operands,
               "updates need one axis per indices batch axis (" + std::to_string(batch_rank) +
                   ") and update_window_dims=" + list_to_string(a.update_window_dims) +
                   " one per operand axis neither inserted nor batching (" +
                   std::to_string(window.size()) + ")");
  check_sorted_axes(op, operands, a.update_window_dims, updates.shape.size(),
                    ScatterAttrs::kUpdateWindowDims);
  for (std::size_t j = 0; j < window.size(); ++j)
    if (updates.shape[a.update_window_dims[j]] > operand.shape[window[j]])
      shape_fail(op, operands,
                 "update window axis " + std::to_string(a.update_window_dims[j]) +
                     " is larger than operand axis " + std::to_string(window[j]));
  const Axes scatter = batch_positions(updates.shape.size(), a.update_window_dims);
  for (std::size_t j = 0; j < scatter.size(); ++j)
    if (updates.shape[scatter[j]] != indices.shape[j])
      shape_fail(op, operands,
                 "updates axis " + std::to_string(scatter[j]) + " must match indices axis " +
                     std::to_string(j));
  return operand;
}

// How colliding updates combine with what is there (scatter replaces).
double combine_float(OpKind op, double have, double update) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  if (op == OpKind::ScatterAdd) return have + update;
  if (op == OpKind::ScatterMul) return have * update;
  if (op == OpKind::ScatterMin)
    return std::isnan(have) || std::isnan(update) ? nan : std::min(have, update);
  if (op == OpKind::ScatterMax)
    return std::isnan(have) || std::isnan(update) ? nan : std::max(have, update);
  return update;
}

std::int64_t combine_int(OpKind op, DType t, std::int64_t have, std::int64_t update) {
  const auto h = static_cast<std::uint64_t>(have);
  const auto u = static_cast<std::uint64_t>(update);
  if (op == OpKind::ScatterAdd) return interp::wrap_to(t, h + u);
  if (op == OpKind::ScatterMul) return interp::wrap_to(t, h * u);
  const bool is_unsigned = t == DType::U64;  // narrower unsigned values are non-negative int64s
  if (op == OpKind::ScatterMin)
    return is_unsigned ? static_cast<std::int64_t>(std::min(h, u)) : std::min(have, update);
  if (op == OpKind::ScatterMax)
    return is_unsigned ? static_cast<std::int64_t>(std::max(h, u)) : std::max(have, update);
  return update;
}

// Every update in row-major order of the updates, so that a replacing scatter keeps the last
// of colliding updates (as XLA's CPU backend does) and sums are in a fixed order.
Value evaluate_scatter(const Node& node, Operands operands) {
  const Value& x = *operands[0];
  const Value& indices = *operands[1];
  const Value& updates = *operands[2];
  const ScatterAttrs a = ScatterAttrs::read(node.attrs);
  const Axes window = window_axes(x.shape.size(), a.inserted_window_dims, a.operand_batching_dims);
  const Axes scatter = batch_positions(updates.shape.size(), a.update_window_dims);
  const Shape batch_shape(indices.shape.begin(), indices.shape.end() - 1);
  std::vector<std::int64_t> sizes(x.shape.size(), 1);
  for (std::size_t j = 0; j < window.size(); ++j)
    sizes[window[j]] = updates.shape[a.update_window_dims[j]];
  // Windows out of bounds in fill mode are dropped.
  const std::vector<std::int64_t> bases =
      window_bases(indices, a.scatter_dims_to_operand_dims, a.operand_batching_dims,
                   a.scatter_indices_batching_dims, x.shape, sizes, a.mode == IndexMode::fill);
  const AxisSteps steps =
      axis_steps(updates.shape.size(), scatter, batch_shape, a.update_window_dims, window, x.shape);
  Value out = x;
  if (is_float(node.dtype)) {
    for_each_windowed(updates.shape, steps, bases,
                      [&](std::int64_t k, std::int64_t base, std::int64_t offset) {
                        if (base < 0) return;
                        double& to = out.f[base + offset];
                        to = interp::round_to(node.dtype, combine_float(node.op, to, updates.f[k]));
                      });
  } else {
    for_each_windowed(updates.shape, steps, bases,
                      [&](std::int64_t k, std::int64_t base, std::int64_t offset) {
                        if (base < 0) return;
                        std::int64_t& to = out.i[base + offset];
                        to = combine_int(node.op, node.dtype, to, updates.i[k]);
                      });
  }
  return out;
}

Array scatter_like(OpKind op, const Array& x, const Array& indices, const Array& updates,
                   const ScatterAttrs& a, const std::source_location& loc) {
  const Array operands[] = {x, indices, updates};
  return detail::bind(op, operands, a.write(), {}, loc);
}

Array zeros_like_array(const Array& like, const std::source_location& loc) {
  return zeros_of({like.dtype(), like.shape()}, loc);
}

Array ones_like_array(const Array& like, const std::source_location& loc) {
  return full(like, 1, loc);
}

Tangent jvp_scatter_add(const Node& n, std::span<const Array> primals,
                        std::span<const Tangent> tangents, const Array&,
                        const std::source_location& loc) {
  if (!tangents[0] && !tangents[2]) return std::nullopt;
  return apply_linear(n, primals, tangents, {true, false, true}, loc);
}

// Unique indices: scatter is linear in operand and updates. Otherwise JAX's way: scatter each
// update's id, gather the ids back to find the updates that won, and express the result as a
// scatter_add of the winners into the operand with their targets cleared.
Tangent jvp_scatter(const Node& n, std::span<const Array> primals,
                    std::span<const Tangent> tangents, const Array&,
                    const std::source_location& loc) {
  if (!tangents[0] && !tangents[2]) return std::nullopt;
  const ScatterAttrs a = ScatterAttrs::read(n.attrs);
  if (a.unique_indices) return apply_linear(n, primals, tangents, {true, false, true}, loc);
  const Array& x = primals[0];
  const Array& indices = primals[1];
  const Array& updates = primals[2];
  const Shape& ushape = updates.shape();
  Shape ids_shape = ushape;
  for (std::int64_t d : a.update_window_dims) ids_shape[d] = 1;
  const std::int64_t num_ids = num_elements(ids_shape);
  const Array ids =
      lax::add(lax::reshape(lax::iota(DType::I32, {num_ids}, 0, loc), ids_shape, loc),
               lax::broadcast_in_dim(lax::constant(1, DType::I32, loc), ids_shape, {}, loc), loc);
  Axes all_axes = iota_axes(0, ushape.size());
  const Array update_ids = lax::broadcast_in_dim(ids, ushape, all_axes, loc);
  const Array no_ids = zeros_of({DType::I32, x.shape()}, loc);
  const Array scattered_ids = scatter_like(OpKind::Scatter, no_ids, indices, update_ids, a, loc);
  const Array won_ids = lax::gather(scattered_ids, indices, gather_of(a, x.shape(), ushape), loc);
  const Array untouched = lax::eq(scattered_ids, no_ids, loc);
  const Array won = lax::eq(update_ids, won_ids, loc);
  const Array tx = tangents[0] ? *tangents[0] : zeros_like_array(x, loc);
  const Array tu = tangents[2] ? *tangents[2] : zeros_like_array(updates, loc);
  ScatterAttrs add = a;
  return scatter_like(OpKind::ScatterAdd, lax::select(untouched, tx, zeros_like_array(x, loc), loc),
                      indices, lax::select(won, tu, zeros_like_array(updates, loc), loc), add, loc);
}

// scatter_mul: linear in the operand; in the updates only where no two updates collide.
Tangent jvp_scatter_mul(const Node& n, std::span<const Array> primals,
                        std::span<const Tangent> tangents, const Array&,
                        const std::source_location& loc) {
  const ScatterAttrs a = ScatterAttrs::read(n.attrs);
  Tangent out;
  if (tangents[0])
    out = scatter_like(OpKind::ScatterMul, *tangents[0], primals[1], primals[2], a, loc);
  if (tangents[2]) {
    if (!a.unique_indices)
      throw TransformError("jvp: scatter_mul at " + n.origin.describe() +
                           " differentiates its updates only with unique_indices=1 (as JAX); "
                           "pass unique indices and say so, or stop the updates' gradient");
    const Array spread = scatter_like(OpKind::ScatterAdd, zeros_like_array(primals[0], loc),
                                      primals[1], *tangents[2], a, loc);
    out = add_tangents(out, lax::mul(primals[0], spread, loc), loc);
  }
  return out;
}

// scatter_min and scatter_max: the tangents of every value that ties for the extreme, averaged
// (JAX's rule): the operand's where it is kept, each winning update's where it lands.
Tangent jvp_scatter_extremum(const Node& n, std::span<const Array> primals,
                             std::span<const Tangent> tangents, const Array& result,
                             const std::source_location& loc) {
  if (!tangents[0] && !tangents[2]) return std::nullopt;
  const ScatterAttrs a = ScatterAttrs::read(n.attrs);
  const Array& x = primals[0];
  const Array& indices = primals[1];
  const Array& updates = primals[2];
  const GatherAttrs back = gather_of(a, x.shape(), updates.shape());
  const Array at_updates = lax::gather(result, indices, back, loc);
  const DType t = x.dtype();
  const Array won = as_float(lax::eq(updates, at_updates, loc), t, loc);
  const Array kept = as_float(lax::eq(x, result, loc), t, loc);
  ScatterAttrs add = a;
  const Array count =
      lax::add(scatter_like(OpKind::ScatterAdd, zeros_like_array(x, loc), indices, won, add, loc),
               kept, loc);
  const Array share =
      lax::div(ones_like_array(x, loc), lax::max(count, ones_like_array(x, loc), loc), loc);
  Tangent out;
  if (tangents[0]) out = lax::mul(lax::mul(*tangents[0], kept, loc), share, loc);
  if (tangents[2]) {
    const Array weighted =
        lax::mul(lax::mul(*tangents[2], won, loc), lax::gather(share, indices, back, loc), loc);
    out = add_tangents(
        out,
        scatter_like(OpKind::ScatterAdd, zeros_like_array(x, loc), indices, weighted, add, loc),
        loc);
  }
  return out;
}

// The cotangent of the updates: the cotangent gathered from where each update landed (zero
// for a dropped one).
Array gathered_cotangent(const Array& ct, const Array& indices, const ScatterAttrs& a,
                         const TensorType& updates, const std::source_location& loc) {
  return lax::gather(ct, indices, gather_of(a, ct.shape(), updates.shape), loc);
}

std::vector<Tangent> transpose_scatter_add(const Node& n, const Array& ct,
                                           std::span<const std::optional<Array>> values,
                                           std::span<const TensorType> types,
                                           const std::vector<bool>& linear, const std::string& api,
                                           const std::source_location& loc) {
  if (linear[1]) not_linear(n, api);
  std::vector<Tangent> out(3);
  if (linear[0]) out[0] = ct;
  if (linear[2])
    out[2] = gathered_cotangent(ct, *values[1], ScatterAttrs::read(n.attrs), types[2], loc);
  return out;
}

// Only with unique indices (as JAX): a replaced operand element gets no cotangent, each
// update the cotangent where it landed.
std::vector<Tangent> transpose_scatter(const Node& n, const Array& ct,
                                       std::span<const std::optional<Array>> values,
                                       std::span<const TensorType> types,
                                       const std::vector<bool>& linear, const std::string& api,
                                       const std::source_location& loc) {
  if (linear[1]) not_linear(n, api);
  const ScatterAttrs a = ScatterAttrs::read(n.attrs);
  if (!a.unique_indices)
    throw TransformError(api + ": scatter at " + n.origin.describe() +
                         " transposes only with unique_indices=1 (as JAX); its jvp rewrites "
                         "colliding updates as scatter_add, so differentiate it instead");
  std::vector<Tangent> out(3);
  if (linear[0])
    out[0] = scatter_like(OpKind::Scatter, ct, *values[1], zeros_of(types[2], loc), a, loc);
  if (linear[2]) out[2] = gathered_cotangent(ct, *values[1], a, types[2], loc);
  return out;
}

// Linear in the operand only (the updates multiply it).
std::vector<Tangent> transpose_scatter_mul(const Node& n, const Array& ct,
                                           std::span<const std::optional<Array>> values,
                                           std::span<const TensorType>,
                                           const std::vector<bool>& linear, const std::string& api,
                                           const std::source_location& loc) {
  if (linear[1] || linear[2]) not_linear(n, api);
  std::vector<Tangent> out(3);
  out[0] = scatter_like(OpKind::ScatterMul, ct, *values[1], *values[2], ScatterAttrs::read(n.attrs),
                        loc);
  return out;
}

// Every operand given the batch axis (broadcast where unbatched), which then pairs up as a
// batching axis of operand and indices, and is the updates' first scatter axis.
Batched batch_scatter(const Node& n, std::span<const Batched> operands, std::int64_t batch_size,
                      const std::string&, const std::source_location& loc) {
  const ScatterAttrs a = ScatterAttrs::read(n.attrs);
  ScatterAttrs b = a;
  b.update_window_dims = shifted(a.update_window_dims);
  b.inserted_window_dims = shifted(a.inserted_window_dims);
  b.scatter_dims_to_operand_dims = shifted(a.scatter_dims_to_operand_dims);
  b.operand_batching_dims = with_leading_axis(0, shifted(a.operand_batching_dims));
  b.scatter_indices_batching_dims = with_leading_axis(0, shifted(a.scatter_indices_batching_dims));
  return {scatter_like(n.op, batched_value(operands[0], batch_size, loc),
                       batched_value(operands[1], batch_size, loc),
                       batched_value(operands[2], batch_size, loc), b, loc),
          true};
}

Primitive scatter_op(OpKind kind, std::string_view name) {
  // A kernel of its own: each update lands on an element it cannot know before reading the
  // indices.
  Primitive p = row(kind, name, OpClass::Layout, 3);
  p.info.fusion_cost = 4;
  p.info.own_kernel = true;
  p.type = scatter_type;
  p.evaluate = evaluate_scatter;
  p.batch = rule_from(batch_scatter);
  return p;
}

}  // namespace

void define_gather_scatter_primitives(Definitions& defs) {
  Primitive gather = free_op(row(OpKind::Gather, "gather", OpClass::Layout, 2));
  gather.type = gather_type;
  gather.evaluate = evaluate_gather;
  gather.jvp = rule_from(jvp_gather);
  gather.transpose = rule_from(transpose_gather);
  gather.batch = rule_from(batch_gather);
  defs.add(std::move(gather));

  Primitive scatter = scatter_op(OpKind::Scatter, "scatter");
  scatter.jvp = rule_from(jvp_scatter);
  scatter.transpose = rule_from(transpose_scatter);
  defs.add(std::move(scatter));

  Primitive add = scatter_op(OpKind::ScatterAdd, "scatter_add");
  add.jvp = rule_from(jvp_scatter_add);
  add.transpose = rule_from(transpose_scatter_add);
  defs.add(std::move(add));

  Primitive mul = scatter_op(OpKind::ScatterMul, "scatter_mul");
  mul.jvp = rule_from(jvp_scatter_mul);
  mul.transpose = rule_from(transpose_scatter_mul);
  defs.add(std::move(mul));

  for (auto [kind, name] : {std::pair{OpKind::ScatterMin, "scatter_min"},
                            std::pair{OpKind::ScatterMax, "scatter_max"}}) {
    Primitive extremum = scatter_op(kind, name);
    extremum.jvp = rule_from(jvp_scatter_extremum);
    extremum.transpose = no_transpose();
    defs.add(std::move(extremum));
  }
}

}  // namespace weft::prim
