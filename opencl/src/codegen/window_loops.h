// The OpenCL C that walks one window of a windowed op (window_kernel.cpp,
// select_scatter_kernel.cpp): nested loops over the window's positions, in row-major order,
// and where each lands in the operand, as the interpreter's for_each_window_position.
#pragma once

#include <string>
#include <vector>

#include "weft/ir/op_attrs.h"
#include "weft/shape.h"

namespace weft::opencl {

inline std::string window_long(std::int64_t v) {
  return std::to_string(v) + "L";
}

// Lines declaring `names[d]` = axis d of row-major position `linear` in `shape`.
inline std::string unflatten_index(const std::string& linear, const Shape& shape,
                                   const std::vector<std::string>& names,
                                   const std::string& indent) {
  std::string s;
  std::int64_t stride = 1;
  for (std::size_t d = shape.size(); d-- > 0;) {
    s += indent + "const long " + names[d] + " = (" + linear + " / " + window_long(stride) +
         ") % " + window_long(shape[d]) + ";\n";
    stride *= shape[d];
  }
  return s;
}

// The row-major position of `index` in `shape`.
inline std::string flatten_index(const std::vector<std::string>& index, const Shape& shape) {
  std::string s = "0L";
  for (std::size_t d = 0; d < shape.size(); ++d)
    s = "(" + s + " * " + window_long(shape[d]) + " + " + index[d] + ")";
  return s;
}

// Loops over the positions of the window whose result element has coordinates `result`, with
// loop variables `<prefix>k<d>`. Inside the loops (after `open`, at indentation `indent`):
// `inside` (an int, false on padding and base-dilation holes), `at` (the operand's flat index
// there, meaningful only when inside) and `offset` (the flat position in the window).
struct WindowLoops {
  std::string open, close, indent, inside, at, offset;
};

inline WindowLoops window_loops(const WindowAttrs& a, const Shape& operand,
                                const std::vector<std::string>& result, const std::string& prefix,
                                std::string indent) {
  WindowLoops w;
  std::vector<std::string> k, i;
  for (std::size_t d = 0; d < operand.size(); ++d) {
    k.push_back(prefix + "k" + std::to_string(d));
    i.push_back(prefix + "i" + std::to_string(d));
    const std::string r = prefix + "r" + std::to_string(d), in = prefix + "in" + std::to_string(d);
    const std::int64_t dilated = operand[d] == 0 ? 0 : (operand[d] - 1) * a.base_dilation[d] + 1;
    const std::int64_t bd = a.base_dilation[d];
    w.open += indent + "for (long " + k[d] + " = 0; " + k[d] + " < " +
              window_long(a.window_dimensions[d]) + "; ++" + k[d] + ") {\n";
    indent += "  ";
    w.open += indent + "const long " + r + " = " + result[d] + " * " +
              window_long(a.window_strides[d]) + " + " + k[d] + " * " +
              window_long(a.window_dilation[d]) + " - " + window_long(a.padding_low[d]) + ";\n";
    w.open += indent + "const int " + in + " = " + r + " >= 0 && " + r + " < " +
              window_long(dilated) +
              (bd == 1 ? "" : " && " + r + " % " + window_long(bd) + " == 0") + ";\n";
    w.open +=
        indent + "const long " + i[d] + " = " + (bd == 1 ? r : r + " / " + window_long(bd)) + ";\n";
    w.inside += (d ? " && " : "") + in;
  }
  if (operand.empty()) w.inside = "1";
  w.indent = indent;
  for (std::size_t d = operand.size(); d-- > 0;) {
    indent.resize(indent.size() - 2);
    w.close += indent + "}\n";
  }
  w.at = flatten_index(i, operand);
  w.offset = flatten_index(k, Shape(a.window_dimensions));
  return w;
}

}  // namespace weft::opencl
