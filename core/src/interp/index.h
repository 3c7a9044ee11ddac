// Row-major index arithmetic shared by the layout, reduction and dot evaluators.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "value.h"

namespace weft::interp {

// Calls fn(k, index) for every row-major position k of `shape` with its multi-index.
template <typename F>
void for_each_index(const Shape& shape, F&& fn) {
  const std::int64_t n = num_elements(shape);
  std::vector<std::int64_t> index(shape.size(), 0);
  for (std::int64_t k = 0; k < n; ++k) {
    fn(k, static_cast<const std::vector<std::int64_t>&>(index));
    for (std::size_t d = shape.size(); d-- > 0;) {
      if (++index[d] < shape[d]) break;
      index[d] = 0;
    }
  }
}

// Calls fn(out, in, count, in_step) for each run of `shape`'s innermost axis, in row-major
// order: `count` result elements from `out` on are elements in, in + in_step, ... of a source
// laid out so that position `index` is offset + sum over axes of index[d] * strides[d].
template <typename F>
void for_each_strided_row(const Shape& shape, std::span<const std::int64_t> strides,
                          std::int64_t offset, F&& fn) {
  const std::int64_t n = num_elements(shape);
  if (n == 0) return;
  if (shape.empty()) {
    fn(std::int64_t{0}, offset, std::int64_t{1}, std::int64_t{0});
    return;
  }
  const std::size_t last = shape.size() - 1;
  const std::int64_t count = shape[last];
  std::vector<std::int64_t> index(last, 0);
  std::int64_t in = offset;
  for (std::int64_t out = 0; out < n; out += count) {
    fn(out, in, count, strides[last]);
    for (std::size_t d = last; d-- > 0;) {
      in += strides[d];
      if (++index[d] < shape[d]) break;
      in -= strides[d] * shape[d];
      index[d] = 0;
    }
  }
}

// A value of `dtype` and `shape` whose element at `index` is element
// offset + sum over axes of index[d] * strides[d] of `x`: broadcasts, slices, transposes and
// reversals, without an index per element.
Value strided_copy(DType dtype, Shape shape, const Value& x, std::span<const std::int64_t> strides,
                   std::int64_t offset);

// A value of `dtype` and `shape` whose element k is element src[k] of the sources' elements
// laid end to end (source 0 first).
Value gather(DType dtype, Shape shape, std::span<const Value* const> sources,
             const std::vector<std::int64_t>& src);

// `x` with its axes reordered: result axis k is axis perm[k] of x.
Value transposed(const Value& x, std::span<const std::int64_t> perm);

}  // namespace weft::interp
