// The numpy layer's indexing: take, take_along_axis, at(...) updates, one_hot and the segment
// reductions, each a gather or a scatter with jax.numpy's dimension numbers and defaults.
#include <algorithm>
#include <limits>

#include "np_internal.h"
#include "weft/ops.h"

namespace weft::np {

namespace {

using internal::loc_str;

void require_integer(const Array& indices, const char* op, const std::source_location& loc) {
  if (!is_integer(indices.dtype()))
    throw DTypeError(std::string(op) + ": indices must be integers, got " +
                     std::string(dtype_name(indices.dtype())) + " at " + loc_str(loc));
}

// Negative indices count from the end of an axis of `size` (numpy); others pass unchanged.
Array wrap_negative(const Array& indices, std::int64_t size, const std::source_location& loc) {
  if (!is_signed_integer(indices.dtype())) return indices;
  const DType t = indices.dtype();
  const Array zero = internal::bcast(lax::constant(0, t, loc), indices.shape(), loc);
  const Array n =
      internal::bcast(lax::constant(static_cast<double>(size), t, loc), indices.shape(), loc);
  return lax::select(lax::lt(indices, zero, loc), lax::add(indices, n, loc), indices, loc);
}

// indices with a trailing index-vector axis of 1.
Array as_index_vectors(const Array& indices, const std::source_location& loc) {
  Shape shape = indices.shape();
  shape.push_back(1);
  return lax::reshape(indices, shape, loc);
}

Axes range(std::int64_t from, std::int64_t to) {
  Axes out;
  for (std::int64_t d = from; d < to; ++d) out.push_back(d);
  return out;
}

}  // namespace

namespace {

// take, with negative indices counting from the end where `wrap`.
Array take_along(const Array& x, const Array& indices, std::optional<std::int64_t> axis,
                 IndexMode mode, bool wrap, const std::source_location& loc) {
  require_integer(indices, "take", loc);
  if (!axis) return take_along(lax::reshape(x, {x.size()}, loc), indices, 0, mode, wrap, loc);
  const std::size_t rank = x.shape().size();
  const std::int64_t a = internal::normalize_axis(*axis, rank, "take", loc);
  const auto index_rank = static_cast<std::int64_t>(indices.shape().size());
  GatherAttrs g;
  g.offset_dims = range(0, a);
  for (std::int64_t d = a + 1; d < static_cast<std::int64_t>(rank); ++d)
    g.offset_dims.push_back(d - 1 + index_rank);
  g.collapsed_slice_dims = {a};
  g.start_index_map = {a};
  g.slice_sizes = x.shape();
  g.slice_sizes[a] = 1;
  g.mode = mode;
  const Array i = wrap ? wrap_negative(indices, x.shape()[a], loc) : indices;
  return lax::gather(x, as_index_vectors(i, loc), g, loc);
}

}  // namespace

// As jnp.take: clip mode clamps negative indices to 0 (numpy's take does the same).
Array take(const Array& x, const Array& indices, std::optional<std::int64_t> axis, IndexMode mode,
           std::source_location loc) {
  return take_along(x, indices, axis, mode, mode != IndexMode::clip, loc);
}

Array take_along_axis(const Array& x, const Array& indices, std::int64_t axis, IndexMode mode,
                      std::source_location loc) {
  require_integer(indices, "take_along_axis", loc);
  const std::size_t rank = x.shape().size();
  if (indices.shape().size() != rank)
    throw ShapeError("take_along_axis: indices " + shape_to_string(indices.shape()) +
                     " need x's rank " + std::to_string(rank) + " at " + loc_str(loc));
  const std::int64_t a = internal::normalize_axis(axis, rank, "take_along_axis", loc);
  // Other axes broadcast against each other (numpy); the indices keep their own along `axis`.
  Shape x_shape = x.shape(), i_shape = indices.shape();
  for (std::size_t d = 0; d < rank; ++d) {
    if (static_cast<std::int64_t>(d) == a) continue;
    const std::int64_t both = std::max(x_shape[d], i_shape[d]);
    if ((x_shape[d] != 1 && x_shape[d] != both) || (i_shape[d] != 1 && i_shape[d] != both))
      throw ShapeError("take_along_axis: x " + shape_to_string(x.shape()) + " and indices " +
                       shape_to_string(indices.shape()) + " do not broadcast on axis " +
                       std::to_string(d) + " at " + loc_str(loc));
    x_shape[d] = i_shape[d] = both;
  }
  const Array xb = x_shape == x.shape() ? x : internal::bcast(x, x_shape, loc);
  const Array ib = i_shape == indices.shape() ? indices : internal::bcast(indices, i_shape, loc);
  GatherAttrs g;
  for (std::int64_t d = 0; d < static_cast<std::int64_t>(rank); ++d)
    if (d != a) {
      g.operand_batching_dims.push_back(d);
      g.start_indices_batching_dims.push_back(d);
    }
  g.collapsed_slice_dims = {a};
  g.start_index_map = {a};
  g.slice_sizes.assign(rank, 1);
  g.mode = mode;
  return lax::gather(xb, as_index_vectors(wrap_negative(ib, x_shape[a], loc), loc), g, loc);
}

AtIndex at(const Array& x, const Array& indices, std::source_location loc) {
  require_integer(indices, "at", loc);
  if (x.shape().empty())
    throw ShapeError("at: x is a scalar; index an array with at least one axis at " + loc_str(loc));
  return AtIndex(x, indices, loc);
}

Array AtIndex::get(IndexMode mode) const {
  return take_along(x_, indices_, 0, mode, true, loc_);
}

Array AtIndex::update(OpKind op, const Array& values, IndexMode mode) const {
  const Shape& xs = x_.shape();
  Shape shape = indices_.shape();
  shape.insert(shape.end(), xs.begin() + 1, xs.end());
  const Array v = internal::bcast(internal::cast(values, x_.dtype(), loc_), shape, loc_);
  ScatterAttrs s;
  const auto index_rank = static_cast<std::int64_t>(indices_.shape().size());
  s.update_window_dims = range(index_rank, static_cast<std::int64_t>(shape.size()));
  s.inserted_window_dims = {0};
  s.scatter_dims_to_operand_dims = {0};
  s.mode = mode;
  const Array i = as_index_vectors(wrap_negative(indices_, xs[0], loc_), loc_);
  if (op == OpKind::ScatterAdd) return lax::scatter_add(x_, i, v, s, loc_);
  if (op == OpKind::ScatterMul) return lax::scatter_mul(x_, i, v, s, loc_);
  if (op == OpKind::ScatterMin) return lax::scatter_min(x_, i, v, s, loc_);
  if (op == OpKind::ScatterMax) return lax::scatter_max(x_, i, v, s, loc_);
  return lax::scatter(x_, i, v, s, loc_);
}

Array AtIndex::set(const Array& values, IndexMode mode) const {
  return update(OpKind::Scatter, values, mode);
}
Array AtIndex::add(const Array& values, IndexMode mode) const {
  return update(OpKind::ScatterAdd, values, mode);
}
Array AtIndex::multiply(const Array& values, IndexMode mode) const {
  return update(OpKind::ScatterMul, values, mode);
}
Array AtIndex::min(const Array& values, IndexMode mode) const {
  return update(OpKind::ScatterMin, values, mode);
}
Array AtIndex::max(const Array& values, IndexMode mode) const {
  return update(OpKind::ScatterMax, values, mode);
}

Array one_hot(const Array& x, std::int64_t num_classes, DType dtype, std::source_location loc) {
  Shape shape = x.shape();
  shape.push_back(num_classes);
  const auto last = static_cast<std::int64_t>(x.shape().size());
  const Array classes = lax::iota(x.dtype(), shape, last, loc);
  const Array values = lax::broadcast_in_dim(x, shape, range(0, last), loc);
  return lax::convert_element_type(lax::eq(values, classes, loc), dtype, loc);
}

namespace {

// data's rows scattered by segment id onto `num_segments` rows that start at `initial`.
Array segment_reduce(OpKind op, const Array& data, const Array& segment_ids,
                     std::int64_t num_segments, WeakScalar initial, const char* name,
                     const std::source_location& loc) {
  require_integer(segment_ids, name, loc);
  if (segment_ids.shape().size() != 1 || data.shape().empty() ||
      data.shape()[0] != segment_ids.shape()[0])
    throw ShapeError(std::string(name) + ": segment_ids " + shape_to_string(segment_ids.shape()) +
                     " must give one id per row of data " + shape_to_string(data.shape()) + " at " +
                     loc_str(loc));
  Shape shape = data.shape();
  shape[0] = num_segments;
  const Array start = internal::bcast(internal::scalar_of(initial, data.dtype(), loc), shape, loc);
  ScatterAttrs s;
  s.update_window_dims = range(1, static_cast<std::int64_t>(shape.size()));
  s.inserted_window_dims = {0};
  s.scatter_dims_to_operand_dims = {0};
  s.mode = IndexMode::fill;  // ids outside the segments are dropped
  const Array ids = as_index_vectors(segment_ids, loc);
  const Array operands[] = {start, ids, data};
  return detail::bind(op, operands, s.write(), {}, loc);
}

WeakScalar lowest(DType t) {
  if (is_float(t)) return -std::numeric_limits<double>::infinity();
  if (t == DType::I32) return std::numeric_limits<std::int32_t>::min();
  if (t == DType::I64) return std::numeric_limits<std::int64_t>::min();
  if (t == DType::Bool) return false;
  return 0;
}
WeakScalar highest(DType t) {
  if (is_float(t)) return std::numeric_limits<double>::infinity();
  if (t == DType::I32) return std::numeric_limits<std::int32_t>::max();
  if (t == DType::U32) return std::numeric_limits<std::uint32_t>::max();
  if (t == DType::I64) return std::numeric_limits<std::int64_t>::max();
  return true;
}

}  // namespace

Array segment_sum(const Array& data, const Array& segment_ids, std::int64_t num_segments,
                  std::source_location loc) {
  return segment_reduce(OpKind::ScatterAdd, data, segment_ids, num_segments, 0, "segment_sum", loc);
}
Array segment_max(const Array& data, const Array& segment_ids, std::int64_t num_segments,
                  std::source_location loc) {
  return segment_reduce(OpKind::ScatterMax, data, segment_ids, num_segments, lowest(data.dtype()),
                        "segment_max", loc);
}
Array segment_min(const Array& data, const Array& segment_ids, std::int64_t num_segments,
                  std::source_location loc) {
  return segment_reduce(OpKind::ScatterMin, data, segment_ids, num_segments, highest(data.dtype()),
                        "segment_min", loc);
}

Array repeat(const Array& x, std::int64_t repeats, std::optional<std::int64_t> axis,
             std::source_location loc) {
  if (repeats < 0)
    throw ShapeError("repeat: repeats=" + std::to_string(repeats) + " must be >= 0 at " +
                     loc_str(loc));
  if (!axis) return repeat(lax::reshape(x, {x.size()}, loc), repeats, 0, loc);
  const Shape& in = x.shape();
  const std::int64_t a = internal::normalize_axis(*axis, in.size(), "repeat", loc);
  // A new axis of `repeats` right after `axis`, then the two merged.
  Shape spread;
  Axes dims;
  for (std::int64_t d = 0; d < static_cast<std::int64_t>(in.size()); ++d) {
    dims.push_back(static_cast<std::int64_t>(spread.size()));
    spread.push_back(in[d]);
    if (d == a) spread.push_back(repeats);
  }
  Shape out = in;
  out[a] *= repeats;
  return lax::reshape(lax::broadcast_in_dim(x, spread, dims, loc), out, loc);
}

namespace {

// x flattened (no axis) or x with its axis normalized; counts as one per element along it.
std::pair<Array, std::int64_t> repeat_operand(const Array& x, std::optional<std::int64_t> axis,
                                              const std::source_location& loc) {
  if (!axis) return {lax::reshape(x, {x.size()}, loc), 0};
  return {x, internal::normalize_axis(*axis, x.shape().size(), "repeat", loc)};
}

std::string repeat_count_error(std::int64_t counts, const Array& x, std::int64_t axis,
                               const std::source_location& loc) {
  return "repeat: " + std::to_string(counts) + " repeat counts for axis " + std::to_string(axis) +
         " of " + shape_to_string(x.shape()) +
         " (give one count, or one per element along the axis) at " + loc_str(loc);
}

}  // namespace

Array repeat(const Array& x, const std::vector<std::int64_t>& repeats,
             std::optional<std::int64_t> axis, std::source_location loc) {
  for (std::int64_t r : repeats)
    if (r < 0)
      throw ShapeError("repeat: repeat counts must be >= 0, got " + std::to_string(r) + " at " +
                       loc_str(loc));
  if (x.shape().empty() && axis) {
    if (repeats.size() != 1)
      throw ShapeError("repeat: a scalar takes one repeat count, got " +
                       std::to_string(repeats.size()) + " at " + loc_str(loc));
    return internal::bcast(x, {repeats[0]}, loc);
  }
  if (repeats.size() == 1) return repeat(x, repeats[0], axis, loc);
  const auto [operand, a] = repeat_operand(x, axis, loc);
  const std::int64_t n = operand.shape()[static_cast<std::size_t>(a)];
  if (static_cast<std::int64_t>(repeats.size()) != n)
    throw ShapeError(
        repeat_count_error(static_cast<std::int64_t>(repeats.size()), operand, a, loc));
  // The counts are known: gather with the element index of each output position.
  std::vector<std::int32_t> source;
  for (std::int64_t i = 0; i < n; ++i)
    source.insert(source.end(), static_cast<std::size_t>(repeats[static_cast<std::size_t>(i)]),
                  static_cast<std::int32_t>(i));
  const auto total = static_cast<std::int64_t>(source.size());
  const Array indices = Array::from_vector<std::int32_t>({total}, source);
  return take(operand, indices, a, IndexMode::promise_in_bounds, loc);
}

// jnp.repeat's own construction for traced counts, so that counts whose sum differs from
// total_repeat_length truncate or repeat the last element as JAX's do: a 1 where each element's
// block starts (starts past the end dropped), summed into each output position's element.
Array repeat(const Array& x, const Array& repeats, std::int64_t total_repeat_length,
             std::optional<std::int64_t> axis, std::source_location loc) {
  require_integer(repeats, "repeat", loc);
  if (total_repeat_length < 0)
    throw ShapeError("repeat: total_repeat_length=" + std::to_string(total_repeat_length) +
                     " must be >= 0 at " + loc_str(loc));
  // Counts add up in i32, as jnp.cumsum promotes narrow integers.
  const Array counts =
      internal::cast(lax::reshape(repeats, {repeats.size()}, loc), DType::I32, loc);
  if (x.shape().empty() && axis) {
    if (counts.size() != 1)
      throw ShapeError("repeat: a scalar takes one repeat count, got " +
                       std::to_string(counts.size()) + " at " + loc_str(loc));
    return internal::bcast(x, {total_repeat_length}, loc);
  }
  const auto [operand, a] = repeat_operand(x, axis, loc);
  const std::int64_t n = operand.shape()[static_cast<std::size_t>(a)];
  if (counts.size() != 1 && counts.size() != n)
    throw ShapeError(repeat_count_error(counts.size(), operand, a, loc));
  if (total_repeat_length == 0 || n == 0) {
    if (n == 0) return operand;
    Shape empty = operand.shape();
    empty[static_cast<std::size_t>(a)] = 0;
    return lax::broadcast_in_dim(lax::constant(0, operand.dtype(), loc), empty, {}, loc);
  }
  const Array per_element = internal::bcast(counts, {n}, loc);
  const Array block_starts = lax::sub(lax::cumsum(per_element, 0, false, loc), per_element, loc);
  const Array starts_marked =
      at(zeros({total_repeat_length}, DType::I32, loc), block_starts, loc)
          .add(lax::broadcast_in_dim(lax::constant(1, DType::I32, loc), {n}, {}, loc));
  const Array source = lax::sub(
      lax::cumsum(starts_marked, 0, false, loc),
      lax::broadcast_in_dim(lax::constant(1, DType::I32, loc), {total_repeat_length}, {}, loc),
      loc);
  return take(operand, source, a, IndexMode::fill, loc);
}

Array tile(const Array& x, const std::vector<std::int64_t>& reps, std::source_location loc) {
  for (std::int64_t r : reps)
    if (r < 0)
      throw ShapeError("tile: reps must be >= 0, got a " + std::to_string(r) + " at " +
                       loc_str(loc));
  const std::size_t rank = std::max(reps.size(), x.shape().size());
  Shape in(rank - x.shape().size(), 1);
  in.insert(in.end(), x.shape().begin(), x.shape().end());
  std::vector<std::int64_t> r(rank - reps.size(), 1);
  r.insert(r.end(), reps.begin(), reps.end());
  // Each axis becomes (its repeats, itself), then each pair merges.
  Shape spread, out;
  Axes dims;
  for (std::size_t d = 0; d < rank; ++d) {
    spread.push_back(r[d]);
    dims.push_back(static_cast<std::int64_t>(spread.size()));
    spread.push_back(in[d]);
    out.push_back(r[d] * in[d]);
  }
  const Array x_in = lax::reshape(x, in, loc);
  return lax::reshape(lax::broadcast_in_dim(x_in, spread, dims, loc), out, loc);
}

}  // namespace weft::np
