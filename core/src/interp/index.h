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

// For every position of `shape`: offset + sum over axes of index[d] * strides[d].
std::vector<std::int64_t> strided_map(const Shape& shape, std::span<const std::int64_t> strides,
                                      std::int64_t offset);

// A value of `dtype` and `shape` whose element k is element src[k] of the sources' elements
// laid end to end (source 0 first).
Value gather(DType dtype, Shape shape, std::span<const Value* const> sources,
             const std::vector<std::int64_t>& src);

// `x` with its axes reordered: result axis k is axis perm[k] of x.
Value transposed(const Value& x, std::span<const std::int64_t> perm);

}  // namespace weft::interp
