// conv_general_dilated on CPUs as an implicit matrix product, blocked in registers as the CPU
// dot kernel is (dot_kernel.cpp, emit_register_blocked): each work-item keeps an R x W block of
// the output in vector registers, R (up to 8) neighbouring positions along the output's
// innermost spatial axis by W (16 or 32) output features, and streams the filter's rows past
// it: for each window position and input feature, one (or two) vector loads of W filter
// elements and R broadcasts of input elements, R x W / 16 FMAs. The rows of the "A matrix" are
// never formed: they are the input at the window's positions (im2col without the copy). The
// filter is first repacked into [window..., input feature, output feature] so that its rows
// are contiguous whatever its layout (a few hundred KiB at most; the input gradient's filter
// is transposed and reversed). Where all R positions of a window row fall inside the input
// the loads carry no checks; at the borders each position loads through a select (a padded
// position reads zero, as the padding's zeros would). Applies to f32 convolutions without
// groups or lhs dilation whose input and output features are their innermost axes (NHWC and
// the like); emit_conv_kernel runs the others.
#include <sstream>

#include "codegen/cl_types.h"
#include "codegen/conv_cpu_blocking.h"

namespace weft::opencl {
bool emit_conv_blocked_kernel(KernelContext& ctx, const FusionGroup& group,
                              const std::string& name) {
  const Graph& g = ctx.graph();
  const Node& root = g.node(group.root);
  const Node& lhs = g.node(root.inputs[0]);
  const Node& rhs = g.node(root.inputs[1]);
  const std::optional<CpuConvBlocking> blocking = cpu_conv_blocking(ctx, root);
  if (!blocking) return false;
  const ConvAttrs& a = blocking->attrs;
  const std::size_t spatial = blocking->spatial;
  const std::vector<std::int64_t>&ls = blocking->ls, &rs = blocking->rs, &os = blocking->os;
  const int VW = blocking->VW, V = blocking->V;
  const std::int64_t O = blocking->O, W = blocking->W;
  if (ls[a.lhs_spec[1]] != 1 || os[a.out_spec[1]] != 1) return false;
  const std::int64_t C = lhs.shape[a.lhs_spec[1]];
  if (C == 0) return false;
  // The row axis: the output's innermost spatial axis; `j` indexes spatial axes.
  std::size_t row = 0;
  for (std::size_t j = 1; j < spatial; ++j)
    if (os[a.out_spec[2 + j]] < os[a.out_spec[2 + row]]) row = j;
  const std::int64_t row_size = root.shape[a.out_spec[2 + row]];
  const int R = static_cast<int>(std::min<std::int64_t>(8, row_size));
  const std::int64_t row_blocks = (row_size + R - 1) / R, col_blocks = (O + W - 1) / W;
  const std::int64_t OP = col_blocks * W;  // features in the packed filter, zeros past O
  // The other output positions: batch, then the other spatial axes, as one index.
  std::vector<std::int64_t> outer_axes{a.out_spec[0]};
  std::vector<int> outer_spatial{-1};
  for (std::size_t j = 0; j < spatial; ++j)
    if (j != row) {
      outer_axes.push_back(a.out_spec[2 + j]);
      outer_spatial.push_back(static_cast<int>(j));
    }
  std::int64_t outer = 1;
  for (std::int64_t axis : outer_axes) outer *= root.shape[axis];
  const std::int64_t total = outer * row_blocks * col_blocks;
  std::int64_t window = 1;
  for (std::size_t j = 0; j < spatial; ++j) window *= rhs.shape[a.rhs_spec[2 + j]];
  const std::int64_t packed = window * C * OP;
  const bool wide = std::max({num_elements(lhs.shape), packed, num_elements(root.shape)}) >=
                    (std::int64_t{1} << 30);
  const std::string I = wide ? "long" : "int";
  const std::string TV = "float" + std::to_string(VW);
  ctx.wide_vector_calls |= VW == 16;
  auto S = [](std::int64_t v) { return std::to_string(v); };
  std::ostringstream& s = ctx.source;

  // The filter as [window positions (row-major over the spatial axes), C, OP].
  s << "__kernel void " << name << "_pack(__global const float* restrict rhs, "
    << "__global float* restrict packed) {\n"
    << "  const " << I << " at = (" << I << ")get_global_id(0);\n"
    << "  if (at >= " << S(packed) << ") return;\n"
    << "  const " << I << " o = at % " << S(OP) << ", c = (at / " << S(OP) << ") % " << S(C)
    << ";\n"
    << "  " << I << " w = at / " << S(C * OP) << ";\n"
    << "  " << I << " from = o * " << S(rs[a.rhs_spec[0]]) << " + c * " << S(rs[a.rhs_spec[1]])
    << ";\n";
  for (std::size_t j = spatial; j-- > 0;) {
    const std::int64_t k = rhs.shape[a.rhs_spec[2 + j]];
    s << "  from += (w % " << S(k) << ") * " << S(rs[a.rhs_spec[2 + j]]) << "; w /= " << S(k)
      << ";\n";
  }
  s << "  packed[at] = " << (OP == O ? "rhs[from]" : "o < " + S(O) + " ? rhs[from] : 0.0f")
    << ";\n}\n\n";
  const int packed_buffer = ctx.add_temp(static_cast<std::size_t>(packed) * sizeof(float));
  LaunchPlan pack;
  pack.kernel = name + "_pack";
  pack.args = {ctx.buffer_of.at(root.inputs[1]), packed_buffer};
  pack.writes = {packed_buffer};
  pack.global_size = static_cast<std::size_t>(packed);
  ctx.add_launch(std::move(pack));

  // The blocked convolution.
  auto acc = [](int i, int v) { return "c" + std::to_string(i) + "_" + std::to_string(v); };
  s << "__kernel void " << name << "(__global const float* restrict lhs, "
    << "__global const float* restrict packed, __global float* restrict y) {\n"
    << "  const " << I << " id = (" << I << ")get_global_id(0);\n"
    << "  if (id >= " << S(total) << ") return;\n"
    << "  const " << I << " col = id % " << S(col_blocks) << ";\n"
    << "  const " << I << " x0 = ((id / " << S(col_blocks) << ") % " << S(row_blocks) << ") * " << R
    << ";\n"
    << "  " << I << " rest = id / " << S(col_blocks * row_blocks) << ";\n"
    << "  " << I << " in_at = 0, out_at = col * " << S(W) << " + x0 * "
    << S(os[a.out_spec[2 + row]]) << ";\n";
  // Outer positions, innermost first (the last listed varies fastest).
  for (std::size_t k = outer_axes.size(); k-- > 0;) {
    const std::int64_t axis = outer_axes[k], size = root.shape[axis];
    const std::string p = "u" + std::to_string(k);
    s << "  const " << I << " " << p << " = rest % " << S(size) << "; rest /= " << S(size) << ";\n"
      << "  out_at += " << p << " * " << S(os[axis]) << ";\n";
    if (outer_spatial[k] < 0)
      s << "  in_at += " << p << " * " << S(ls[a.lhs_spec[0]]) << ";\n";
    else
      s << "  const " << I << " s" << outer_spatial[k] << " = " << p << " * "
        << S(a.window_strides[outer_spatial[k]]) << " - " << S(a.padding_low[outer_spatial[k]])
        << ";\n";
  }
  s << "  const " << I << " rows = min((" << I << ")" << R << ", (" << I << ")" << S(row_size)
    << " - x0);\n";
  for (int i = 0; i < R; ++i)
    for (int v = 0; v < V; ++v) s << "  " << TV << " " << acc(i, v) << " = (" << TV << ")(0);\n";
  // Window loops over the other spatial axes (a position outside the input contributes zero).
  std::string indent = "  ";
  std::string in_index = "in_at";
  std::string window_index = "0";
  for (std::size_t j = 0; j < spatial; ++j) {
    const std::int64_t k = rhs.shape[a.rhs_spec[2 + j]];
    const std::string w = "w" + std::to_string(j);
    s << indent << "for (int " << w << " = 0; " << w << " < " << S(k) << "; ++" << w << ") {\n";
    indent += "  ";
    window_index = "(" + window_index + ") * " + S(k) + " + " + w;
    if (j == row) continue;
    const std::string p = "p" + std::to_string(j);
    s << indent << "const " << I << " " << p << " = s" << j << " + " << w << " * "
      << S(a.rhs_dilation[j]) << ";\n"
      << indent << "if (" << p << " < 0 || " << p << " >= " << S(lhs.shape[a.lhs_spec[2 + j]])
      << ") continue;\n";
    in_index += " + " + p + " * " + S(ls[a.lhs_spec[2 + j]]);
  }
  // The row axis: position i of the block reads input position q_i.
  const std::int64_t step = a.window_strides[row] * ls[a.lhs_spec[2 + row]];
  const std::int64_t in_row = lhs.shape[a.lhs_spec[2 + row]];
  s << indent << "const " << I << " q0 = x0 * " << S(a.window_strides[row]) << " + w" << row
    << " * " << S(a.rhs_dilation[row]) << " - " << S(a.padding_low[row]) << ";\n"
    << indent << "const __global float* base = lhs + " << in_index << " + q0 * "
    << S(ls[a.lhs_spec[2 + row]]) << ";\n"
    << indent << "const __global float* wrow = packed + (" << window_index << ") * " << S(C * OP)
    << " + col * " << S(W) << ";\n";
  auto fmas = [&](const std::string& in, bool checked) {
    s << in << "for (" << I << " c = 0; c < " << S(C) << "; ++c) {\n";
    for (int v = 0; v < V; ++v)
      s << in << "  const " << TV << " b" << v << " = vload" << VW << "(" << v << ", wrow + c * "
        << S(OP) << ");\n";
    for (int i = 0; i < R; ++i) {
      const std::string load = "base[" + S(i * step) + " + c]";
      s << in << "  { const " << TV << " av = (" << TV << ")("
        << (checked ? "ok" + std::to_string(i) + " ? " + load + " : 0.0f" : load) << ");";
      for (int v = 0; v < V; ++v)
        s << " " << acc(i, v) << " = fma(av, b" << v << ", " << acc(i, v) << ");";
      s << " }\n";
    }
    s << in << "}\n";
  };
  s << indent << "if (q0 >= 0 && q0 + " << S((R - 1) * a.window_strides[row]) << " < " << S(in_row)
    << " && rows == " << R << ") {\n";
  fmas(indent + "  ", false);
  s << indent << "} else {\n";
  for (int i = 0; i < R; ++i)
    s << indent << "  const bool ok" << i << " = " << i << " < rows && q0 + "
      << S(i * a.window_strides[row]) << " >= 0 && q0 + " << S(i * a.window_strides[row]) << " < "
      << S(in_row) << ";\n";
  fmas(indent + "  ", true);
  s << indent << "}\n";
  for (std::size_t j = 0; j < spatial; ++j) {
    indent.resize(indent.size() - 2);
    s << indent << "}\n";
  }
  // The last block of features, where they do not fill it, stores its lanes below O one by one.
  if (OP != O) s << "  const int left = " << S(O) << " - (int)col * " << S(W) << ";\n";
  for (int i = 0; i < R; ++i) {
    s << "  if (" << i << " < rows) {\n";
    for (int v = 0; v < V; ++v) {
      const std::string at = "y + out_at + " + S(i * os[a.out_spec[2 + row]] + v * VW);
      if (OP == O) {
        s << "    vstore" << VW << "(" << acc(i, v) << ", 0, " << at << ");\n";
        continue;
      }
      s << "    if (left >= " << (v + 1) * VW << ") vstore" << VW << "(" << acc(i, v) << ", 0, "
        << at << ");\n"
        << "    else {\n"
        << "      float lanes[" << VW << "];\n"
        << "      vstore" << VW << "(" << acc(i, v) << ", 0, lanes);\n"
        << "      for (int j = 0; j < left - " << v * VW << "; ++j) (" << at << ")[j] = lanes[j];\n"
        << "    }\n";
    }
    s << "  }\n";
  }
  s << "}\n\n";

  LaunchPlan launch;
  launch.kernel = name;
  launch.args = {ctx.buffer_of.at(root.inputs[0]), packed_buffer, ctx.buffer_of.at(group.root)};
  launch.writes = {ctx.buffer_of.at(group.root)};
  size_blocked_launch(ctx, launch, total);
  ctx.add_launch(std::move(launch));
  return true;
}

}  // namespace weft::opencl
