// The OpenCL C that walks one window of a windowed op (window_kernel.cpp,
// select_scatter_kernel.cpp): nested loops over the window's positions, in row-major order,
// and where each lands in the operand, as the interpreter's for_each_window_position. Indices
// are of type `I`, "int" where window_index_type allows (64-bit divisions cost several times
// 32-bit ones on CPUs), else "long".
#pragma once

#include <algorithm>
#include <string>
#include <vector>

#include "weft/ir/op_attrs.h"
#include "weft/shape.h"

namespace weft::opencl {

// "int" when every index of a windowed op over `operand` (the padded, dilated operand's positions
// included) fits in 30 bits, else "long".
inline std::string window_index_type(const Shape& operand, const Shape& result,
                                     const WindowAttrs& a) {
  std::int64_t padded = 1;
  for (std::size_t d = 0; d < operand.size(); ++d) {
    const std::int64_t dilated = operand[d] == 0 ? 0 : (operand[d] - 1) * a.base_dilation[d] + 1;
    const std::int64_t window = (a.window_dimensions[d] - 1) * a.window_dilation[d] + 1;
    padded *= std::max<std::int64_t>(
        {dilated + std::abs(a.padding_low[d]) + std::abs(a.padding_high[d]), window, 1});
    if (padded >= (std::int64_t{1} << 30)) return "long";
  }
  const std::int64_t largest = std::max({num_elements(operand), num_elements(result), padded});
  return largest < (std::int64_t{1} << 30) ? "int" : "long";
}

// A literal of index type `I`.
inline std::string index_literal(std::int64_t v, const std::string& I) {
  return std::to_string(v) + (I == "int" ? "" : "L");
}

// Lines declaring `names[d]` = axis d of row-major position `linear` in `shape`.
inline std::string unflatten_index(const std::string& linear, const Shape& shape,
                                   const std::vector<std::string>& names, const std::string& I,
                                   const std::string& indent) {
  std::string s;
  std::int64_t stride = 1;
  for (std::size_t d = shape.size(); d-- > 0;) {
    s += indent + "const " + I + " " + names[d] + " = (" + linear + " / " +
         index_literal(stride, I) + ") % " + index_literal(shape[d], I) + ";\n";
    stride *= shape[d];
  }
  return s;
}

// The row-major position of `index` in `shape`.
inline std::string flatten_index(const std::vector<std::string>& index, const Shape& shape,
                                 const std::string& I) {
  std::string s = index_literal(0, I);
  for (std::size_t d = 0; d < shape.size(); ++d)
    s = "(" + s + " * " + index_literal(shape[d], I) + " + " + index[d] + ")";
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
                                const std::vector<std::string>& result, const std::string& I,
                                const std::string& prefix, std::string indent) {
  auto lit = [&I](std::int64_t v) { return index_literal(v, I); };
  WindowLoops w;
  std::vector<std::string> k, i;
  for (std::size_t d = 0; d < operand.size(); ++d) {
    k.push_back(prefix + "k" + std::to_string(d));
    i.push_back(prefix + "i" + std::to_string(d));
    const std::string r = prefix + "r" + std::to_string(d), in = prefix + "in" + std::to_string(d);
    const std::int64_t dilated = operand[d] == 0 ? 0 : (operand[d] - 1) * a.base_dilation[d] + 1;
    const std::int64_t bd = a.base_dilation[d];
    w.open += indent + "for (" + I + " " + k[d] + " = 0; " + k[d] + " < " +
              lit(a.window_dimensions[d]) + "; ++" + k[d] + ") {\n";
    indent += "  ";
    w.open += indent + "const " + I + " " + r + " = " + result[d] + " * " +
              lit(a.window_strides[d]) + " + " + k[d] + " * " + lit(a.window_dilation[d]) + " - " +
              lit(a.padding_low[d]) + ";\n";
    w.open += indent + "const int " + in + " = " + r + " >= 0 && " + r + " < " + lit(dilated) +
              (bd == 1 ? "" : " && " + r + " % " + lit(bd) + " == 0") + ";\n";
    w.open +=
        indent + "const " + I + " " + i[d] + " = " + (bd == 1 ? r : r + " / " + lit(bd)) + ";\n";
    w.inside += (d ? " && " : "") + in;
  }
  if (operand.empty()) w.inside = "1";
  w.indent = indent;
  for (std::size_t d = operand.size(); d-- > 0;) {
    indent.resize(indent.size() - 2);
    w.close += indent + "}\n";
  }
  w.at = flatten_index(i, operand, I);
  w.offset = flatten_index(k, Shape(a.window_dimensions), I);
  return w;
}

}  // namespace weft::opencl
