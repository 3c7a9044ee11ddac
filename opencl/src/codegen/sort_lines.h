// The lines a sort kernel sorts: `lines` lines of `n` positions along the sort axis, `inner`
// elements apart (the product of the dimensions after the axis).
#pragma once

#include <cstdint>
#include <string>

#include "weft/shape.h"

namespace weft::opencl {

struct SortLines {
  std::int64_t lines = 1, n = 1, inner = 1;
};

inline SortLines sort_lines(const Shape& shape, std::int64_t axis) {
  SortLines l;
  for (std::int64_t d = 0; d < static_cast<std::int64_t>(shape.size()); ++d) {
    if (d == axis) l.n = shape[d];
    if (d > axis) l.inner *= shape[d];
  }
  l.lines = l.n > 0 ? num_elements(shape) / l.n : 0;
  return l;
}

// The OpenCL C index of position `p` of line `line` (both expressions) in the operand.
inline std::string position_of(const SortLines& l, const std::string& line, const std::string& p) {
  const std::string N = std::to_string(l.n), inner = std::to_string(l.inner);
  if (l.inner == 1) return "(" + line + " * " + N + " + " + p + ")";
  return "((" + line + " / " + inner + ") * " + N + " * " + inner + " + (" + line + " % " + inner +
         ") + " + p + " * " + inner + ")";
}

}  // namespace weft::opencl
