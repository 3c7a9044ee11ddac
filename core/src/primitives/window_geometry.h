// What the windowed primitives (window.cpp, select_window.cpp) share: the type rule's checks of
// WindowAttrs and the result shape, and the walk over every window position that their
// reference evaluators make.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "primitives/structural_rules.h"
#include "weft/ir/op_attrs.h"
#include "weft/ir/shape_rules.h"

namespace weft::prim {

// Checks `a` against `operand` (one entry per axis, positive window sizes, strides and
// dilations, a window that fits the padded, base-dilated operand) and returns the shape of the
// result: per axis, (padded dilated size - dilated window) / stride + 1. Errors are ShapeErrors
// naming `op` and `operands`.
Shape window_result_shape(OpKind op, std::span<const TensorType> operands, const Shape& operand,
                          const WindowAttrs& a);

// Calls f(out, w, at) for every result element `out` (flat, row-major) and every position `w`
// of its window (flat, row-major over window_dimensions), in that order, with `at` the flat
// index of the operand element there, or -1 where the window covers padding or a hole of the
// base dilation.
template <typename F>
void for_each_window_position(const Shape& operand, const Shape& result, const WindowAttrs& a,
                              F&& f) {
  const std::size_t rank = operand.size();
  const std::int64_t results = num_elements(result);
  const std::int64_t positions = num_elements(Shape(a.window_dimensions));
  std::vector<std::int64_t> o(rank), k(rank);
  for (std::int64_t out = 0; out < results; ++out) {
    for (std::int64_t rest = out, d = static_cast<std::int64_t>(rank) - 1; d >= 0; --d) {
      o[d] = rest % result[d];
      rest /= result[d];
    }
    for (std::int64_t w = 0; w < positions; ++w) {
      for (std::int64_t rest = w, d = static_cast<std::int64_t>(rank) - 1; d >= 0; --d) {
        k[d] = rest % a.window_dimensions[d];
        rest /= a.window_dimensions[d];
      }
      std::int64_t at = 0;
      for (std::size_t d = 0; d < rank && at >= 0; ++d) {
        // The position in the base-dilated operand; inside it only on a multiple of the dilation.
        const std::int64_t r =
            o[d] * a.window_strides[d] + k[d] * a.window_dilation[d] - a.padding_low[d];
        const std::int64_t dilated = (operand[d] - 1) * a.base_dilation[d] + 1;
        if (r < 0 || r >= dilated || r % a.base_dilation[d] != 0)
          at = -1;
        else
          at = at * operand[d] + r / a.base_dilation[d];
      }
      f(out, w, at);
    }
  }
}

// Batching: the batch axis moved to the front of every operand and given a window of size 1
// (stride 1, no padding or dilation), as JAX's _reduce_window_batch_rule.
Batched batch_window(const Node& n, std::span<const Batched> operands, std::int64_t batch_size,
                     const std::string& api, const std::source_location& loc);

}  // namespace weft::prim
