// weft::np's functions built on sorting and masks with static sizes (searchsorted, nonzero,
// unique, compress), each written as jax.numpy writes it so that results agree exactly.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "np_internal.h"
#include "weft/np.h"

namespace weft::np {

using namespace internal;

namespace {

// lax's sort order, as its comparators have it: -0.0 equals 0.0 and NaN is above everything
// (and equal to NaN). x < y in that order:
Array sort_less(const Array& x, const Array& y, const std::source_location& loc) {
  if (!is_float(x.dtype())) return lax::lt(x, y, loc);
  return lax::logical_or(lax::lt(x, y, loc),
                         lax::logical_and(lax::ne(y, y, loc), lax::eq(x, x, loc), loc), loc);
}
// x <= y in that order.
Array sort_less_equal(const Array& x, const Array& y, const std::source_location& loc) {
  if (!is_float(x.dtype())) return lax::le(x, y, loc);
  return lax::logical_or(lax::le(x, y, loc), lax::ne(y, y, loc), loc);
}

}  // namespace

Array searchsorted(const Array& a, const Array& v, Side side, std::source_location loc) {
  if (a.shape().size() != 1)
    throw ShapeError("searchsorted: a " + shape_to_string(a.shape()) +
                     " must be one-dimensional (sorted ascending) at " + loc_str(loc));
  return fused("searchsorted", loc, [&] {
    const DType t = promote_types(a.dtype(), v.dtype());
    const Array sorted = cast(a, t, loc), query = cast(v, t, loc);
    const std::int64_t n = a.shape()[0];
    if (n == 0) return lax::broadcast_in_dim(lax::constant(0, DType::I32, loc), v.shape(), {}, loc);
    // jnp's default method: a binary search of ceil(log2(n + 1)) halvings, unrolled here, so
    // that even an unsorted `a` gives JAX's answer.
    const auto levels = static_cast<int>(std::ceil(std::log2(static_cast<double>(n) + 1)));
    const Array two = lax::broadcast_in_dim(lax::constant(2, DType::I32, loc), v.shape(), {}, loc);
    Array low = lax::broadcast_in_dim(lax::constant(0, DType::I32, loc), v.shape(), {}, loc);
    Array high = lax::broadcast_in_dim(lax::constant(static_cast<double>(n), DType::I32, loc),
                                       v.shape(), {}, loc);
    for (int level = 0; level < levels; ++level) {
      const Array mid = lax::add(low, lax::div(lax::sub(high, low, loc), two, loc), loc);
      // mid == n only once low == high, where the comparison no longer matters.
      const Array probe = take(sorted, mid, 0, IndexMode::clip, loc);
      const Array go_left =
          side == Side::left ? sort_less_equal(query, probe, loc) : sort_less(query, probe, loc);
      low = lax::select(go_left, low, mid, loc);
      high = lax::select(go_left, mid, high, loc);
    }
    return high;
  });
}

Array searchsorted(const Array& a, const Array& v, Side side, const Array& sorter,
                   std::source_location loc) {
  if (a.shape().size() != 1 || sorter.shape() != a.shape())
    throw ShapeError("searchsorted: a " + shape_to_string(a.shape()) + " must be one-dimensional " +
                     "and sorter " + shape_to_string(sorter.shape()) + " must have its shape at " +
                     loc_str(loc));
  if (!is_integer(sorter.dtype()))
    throw DTypeError("searchsorted: sorter must hold integer indices, got " +
                     std::string(dtype_name(sorter.dtype())) + " at " + loc_str(loc));
  return searchsorted(at(a, sorter, loc).get(), v, side, loc);
}

namespace {

Array i32_full(double value, const Shape& shape, const std::source_location& loc) {
  return lax::broadcast_in_dim(lax::constant(value, DType::I32, loc), shape, {}, loc);
}

// Over a sorted 1-D array, where each distinct value starts: unequal to the element before, NaNs
// counting as one value (jnp.unique's equal_nan).
Array value_starts(const Array& sorted, const std::source_location& loc) {
  const std::int64_t n = sorted.shape()[0];
  const Array first = lax::broadcast_in_dim(lax::constant(1, DType::Bool, loc), {1}, {}, loc);
  if (n == 1) return first;
  const Array next = lax::slice(sorted, {1}, {n}, {1}, loc);
  const Array prev = lax::slice(sorted, {0}, {n - 1}, {1}, loc);
  Array differs = lax::ne(next, prev, loc);
  if (is_float(sorted.dtype()))
    differs = lax::logical_and(
        differs,
        lax::logical_not(lax::logical_and(lax::ne(next, next, loc), lax::ne(prev, prev, loc), loc),
                         loc),
        loc);
  return lax::concatenate({first, differs}, 0, loc);
}

void require_size(std::int64_t size, const char* op, const std::source_location& loc) {
  if (size < 0)
    throw InvalidArgumentError(std::string(op) + ": size=" + std::to_string(size) +
                               " must be >= 0 at " + loc_str(loc));
}

}  // namespace

std::vector<Array> nonzero(const Array& a, std::int64_t size, std::int64_t fill_value,
                           std::source_location loc) {
  const Shape& shape = a.shape();
  if (shape.empty())
    throw ShapeError("nonzero: a is a scalar; give it an axis first (reshape({1})) at " +
                     loc_str(loc));
  require_size(size, "nonzero", loc);
  const std::int64_t n = num_elements(shape);
  std::vector<Array> out;
  if (n == 0 || size == 0) {
    for (std::size_t d = 0; d < shape.size(); ++d)
      out.push_back(i32_full(static_cast<double>(fill_value), {size}, loc));
    return out;
  }
  const Array flat = lax::reshape(a, {n}, loc);
  const Array mask = flat.dtype() == DType::Bool ? flat : lax::ne(flat, full_of(0, flat, loc), loc);
  const Array counts = lax::convert_element_type(mask, DType::I32, loc);
  // As jnp: the k-th position is how many elements have fewer than k + 1 nonzeros up to and
  // including them, a cumulative sum of the bincount of the running count.
  const Array running = lax::cumsum(counts, 0, false, loc);
  const Array flat_index =
      lax::cumsum(segment_sum(i32_full(1, {n}, loc), running, size, loc), 0, false, loc);
  const Array found =
      lax::lt(lax::iota(DType::I32, {size}, 0, loc),
              lax::broadcast_in_dim(lax::reduce_sum(counts, {0}, loc), {size}, {}, loc), loc);
  const Array fill = i32_full(static_cast<double>(fill_value), {size}, loc);
  std::int64_t stride = n;
  for (const std::int64_t extent : shape) {
    stride /= extent;
    const Array index =
        lax::rem(lax::div(flat_index, i32_full(static_cast<double>(stride), {size}, loc), loc),
                 i32_full(static_cast<double>(extent), {size}, loc), loc);
    out.push_back(lax::select(found, index, fill, loc));
  }
  return out;
}

Array argwhere(const Array& a, std::int64_t size, std::int64_t fill_value,
               std::source_location loc) {
  const Array x = a.ndim() == 0 ? lax::reshape(a, {1}, loc) : a;
  std::vector<Array> columns;
  for (const Array& index : nonzero(x, size, fill_value, loc))
    columns.push_back(lax::reshape(index, {size, 1}, loc));
  if (a.ndim() == 0) return lax::slice(columns[0], {0, 0}, {size, 0}, {1, 1}, loc);
  return lax::concatenate(columns, 1, loc);
}

Array flatnonzero(const Array& a, std::int64_t size, std::int64_t fill_value,
                  std::source_location loc) {
  return nonzero(lax::reshape(a, {num_elements(a.shape())}, loc), size, fill_value, loc)[0];
}

Array unique(const Array& x, std::int64_t size, std::optional<WeakScalar> fill_value,
             std::source_location loc) {
  require_size(size, "unique", loc);
  const std::int64_t n = num_elements(x.shape());
  if (n == 0) {
    if (!fill_value && size > 0)
      throw InvalidArgumentError("unique: x " + shape_to_string(x.shape()) + " is empty, so size=" +
                                 std::to_string(size) + " needs a fill_value at " + loc_str(loc));
    return bcast(scalar_of(fill_value.value_or(0), x.dtype(), loc), {size}, loc);
  }
  return fused("unique", loc, [&] {
    const Array sorted = lax::sort(lax::reshape(x, {n}, loc), 0, loc);
    const Array starts = value_starts(sorted, loc);
    const Array first = nonzero(starts, size, 0, loc)[0];
    const Array values = take(sorted, first, 0, IndexMode::clip, loc);
    if (!fill_value) return values;  // padded with sorted[0], the smallest value
    const Array count =
        lax::reduce_sum(lax::convert_element_type(starts, DType::I32, loc), {0}, loc);
    const Array found = lax::lt(lax::iota(DType::I32, {size}, 0, loc),
                                lax::broadcast_in_dim(count, {size}, {}, loc), loc);
    return lax::select(found, values, bcast(scalar_of(*fill_value, x.dtype(), loc), {size}, loc),
                       loc);
  });
}

Unique unique_all(const Array& x, std::int64_t size, std::optional<WeakScalar> fill_value,
                  std::source_location loc) {
  require_size(size, "unique_all", loc);
  const std::int64_t n = num_elements(x.shape());
  if (n == 0)
    throw InvalidArgumentError("unique_all: x " + shape_to_string(x.shape()) +
                               " is empty; its indices and counts are undefined at " +
                               loc_str(loc));
  const Array flat = lax::reshape(x, {n}, loc);
  const Array perm = lax::argsort({flat}, 0, loc);
  const Array sorted = take(flat, perm, 0, IndexMode::clip, loc);
  const Array starts = value_starts(sorted, loc);
  const Array start_counts = lax::convert_element_type(starts, DType::I32, loc);
  const Array first = nonzero(starts, size, 0, loc)[0];
  Unique out;
  out.values = take(sorted, first, 0, IndexMode::clip, loc);
  if (fill_value) {
    const Array count = lax::reduce_sum(start_counts, {0}, loc);
    const Array found = lax::lt(lax::iota(DType::I32, {size}, 0, loc),
                                lax::broadcast_in_dim(count, {size}, {}, loc), loc);
    out.values = lax::select(found, out.values,
                             bcast(scalar_of(*fill_value, x.dtype(), loc), {size}, loc), loc);
  }
  out.indices = take(perm, first, 0, IndexMode::clip, loc);
  // Each element's value's position among the unique values: the running count of starts,
  // scattered back to where the element came from.
  const Array rank = lax::sub(lax::cumsum(start_counts, 0, false, loc), i32_full(1, {n}, loc), loc);
  out.inverse = lax::reshape(at(i32_full(0, {n}, loc), perm, loc).set(rank), x.shape(), loc);
  // Counts: the gaps between successive starts, the missing ones at n (so padding counts 0).
  const Array bounds = nonzero(starts, size + 1, 0, loc)[0];
  const Array later = lax::slice(bounds, {1}, {size + 1}, {1}, loc);
  const Array ends = lax::select(lax::ne(later, i32_full(0, {size}, loc), loc), later,
                                 i32_full(static_cast<double>(n), {size}, loc), loc);
  const Array starts_at = lax::concatenate({lax::slice(bounds, {0}, {1}, {1}, loc), ends}, 0, loc);
  out.counts = lax::sub(ends, lax::slice(starts_at, {0}, {size}, {1}, loc), loc);
  return out;
}

Array compress(const Array& condition, const Array& a, std::optional<std::int64_t> axis,
               std::int64_t size, WeakScalar fill_value, std::source_location loc) {
  if (condition.shape().size() != 1)
    throw ShapeError("compress: condition " + shape_to_string(condition.shape()) +
                     " must be one-dimensional at " + loc_str(loc));
  return fused("compress", loc, [&] {
    Array arr = a;
    std::int64_t along = 0;
    if (!axis) {
      arr = lax::reshape(a, {num_elements(a.shape())}, loc);
    } else {
      along = normalize_axis(*axis, a.shape().size(), "compress", loc);
      Axes to_front{along};
      for (std::int64_t d = 0; d < static_cast<std::int64_t>(a.shape().size()); ++d)
        if (d != along) to_front.push_back(d);
      arr = lax::transpose(a, to_front, loc);
    }
    // As jnp: the condition and the axis are cut to the shorter of the two.
    const std::int64_t length = std::min(arr.shape()[0], condition.shape()[0]);
    if (size < 0 || size > length)
      throw InvalidArgumentError("compress: size=" + std::to_string(size) +
                                 " must be between 0 and the length of the axis (" +
                                 std::to_string(length) + ") at " + loc_str(loc));
    Shape start(arr.shape().size(), 0), stop = arr.shape(), step(arr.shape().size(), 1);
    stop[0] = length;
    arr = lax::slice(arr, start, stop, step, loc);
    Array keep = lax::slice(condition, {0}, {length}, {1}, loc);
    if (keep.dtype() != DType::Bool) keep = lax::ne(keep, full_of(0, keep, loc), loc);
    Axes rows{0};
    const Array keep_rows = lax::broadcast_in_dim(keep, arr.shape(), rows, loc);
    arr = lax::select(keep_rows, arr,
                      bcast(scalar_of(fill_value, arr.dtype(), loc), arr.shape(), loc), loc);
    // The kept slices first, in order (a stable sort of "not kept"), then `size` of them.
    const Array order = lax::argsort(
        {lax::convert_element_type(lax::logical_not(keep, loc), DType::I32, loc)}, 0, loc);
    const Array picked = lax::slice(order, {0}, {size}, {1}, loc);
    Array result = take(arr, picked, 0, IndexMode::clip, loc);
    if (along == 0) return result;
    Axes back;
    for (std::int64_t d = 1; d <= along; ++d) back.push_back(d);
    back.push_back(0);
    for (std::int64_t d = along + 1; d < static_cast<std::int64_t>(a.shape().size()); ++d)
      back.push_back(d);
    return lax::transpose(result, back, loc);
  });
}

}  // namespace weft::np
