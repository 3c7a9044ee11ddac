// conv_general_dilated on CPUs where the window is large and the output small: the filter
// gradient of a convolution, which JAX writes as a convolution of the input with the output's
// cotangent (batch and feature axes swapped: the input's channels become the batch, the batch
// the contracted features, the image the window; the result is the filter). As a matrix product
// it is short and wide (a 3x3x64x64 filter from 32x56x56 images contracts 100,352 products per
// element), so each work-item keeps an R x W block in registers as the other CPU kernels do: R
// (up to 8) neighbouring output batch entries, which are neighbouring input elements, by W
// output features, which are a contiguous row of the cotangent, and walks the window one row
// at a time: rows wholly outside the input are skipped, and within a row only the positions
// inside it are visited, so no load carries a check. The window's rows (all input features and
// outer window axes) are split into ranges of about 1 MiB of input and cotangent; the
// work-items of one range run one after another while it stays in cache, and a second kernel
// adds the ranges' partial results in order. Applies to f32 convolutions without groups or
// lhs dilation whose lhs batch axis, rhs output feature axis and output feature axis are
// innermost; emit_conv_kernel runs the others.
#include <algorithm>
#include <sstream>

#include "codegen/cl_types.h"
#include "codegen/conv_cpu_blocking.h"

namespace weft::opencl {
namespace {

// About this many bytes of input and cotangent per range of window rows.
constexpr std::int64_t kRangeBytes = std::int64_t{1} << 20;

}  // namespace

bool emit_conv_long_window_kernel(KernelContext& ctx, const FusionGroup& group,
                                  const std::string& name) {
  const Graph& g = ctx.graph();
  const Node& root = g.node(group.root);
  const Node& rhs = g.node(root.inputs[1]);
  const std::optional<CpuConvBlocking> blocking = cpu_conv_blocking(ctx, root);
  if (!blocking) return false;
  const Node& lhs = g.node(root.inputs[0]);
  const ConvAttrs& a = blocking->attrs;
  const std::size_t spatial = blocking->spatial;
  const std::vector<std::int64_t>&ls = blocking->ls, &rs = blocking->rs, &os = blocking->os;
  const int VW = blocking->VW, V = blocking->V;
  const std::int64_t O = blocking->O, W = blocking->W;
  if (!blocking->whole_vectors) return false;
  if (ls[a.lhs_spec[0]] != 1 || rs[a.rhs_spec[0]] != 1 || os[a.out_spec[1]] != 1) return false;
  const std::int64_t batch = root.shape[a.out_spec[0]];
  const std::int64_t C = rhs.shape[a.rhs_spec[1]];  // contracted input features
  if (batch == 0) return false;
  const int R = static_cast<int>(std::min<std::int64_t>(8, batch));
  const std::int64_t batch_blocks = (batch + R - 1) / R, col_blocks = O / W;
  std::int64_t out_positions = 1;
  for (std::size_t j = 0; j < spatial; ++j) out_positions *= root.shape[a.out_spec[2 + j]];
  const std::int64_t total = out_positions * batch_blocks * col_blocks;
  // Window rows: input features by every window axis but the last, which each row walks.
  const std::size_t last = spatial - 1;
  const std::int64_t row_len = rhs.shape[a.rhs_spec[2 + last]];
  std::int64_t rows = C;
  for (std::size_t j = 0; j < last; ++j) rows *= rhs.shape[a.rhs_spec[2 + j]];
  const std::int64_t row_bytes = row_len * static_cast<std::int64_t>(sizeof(float)) *
                                 (W * col_blocks + R * batch_blocks * a.window_strides[last]);
  const std::int64_t span =
      std::max<std::int64_t>(1, kRangeBytes / std::max<std::int64_t>(1, row_bytes));
  const std::int64_t splits =
      total >= 4096 ? 1 : std::min<std::int64_t>((rows + span - 1) / span, 64);
  const std::int64_t per_split = (rows + splits - 1) / splits;
  const bool wide = std::max({num_elements(lhs.shape), num_elements(rhs.shape),
                              splits * num_elements(root.shape)}) >= (std::int64_t{1} << 30);
  const std::string I = wide ? "long" : "int";
  const std::string TV = "float" + std::to_string(VW);
  ctx.wide_vector_calls |= VW == 16;
  auto S = [](std::int64_t v) { return std::to_string(v); };
  std::ostringstream& s = ctx.source;
  auto acc = [](int i, int v) { return "c" + std::to_string(i) + "_" + std::to_string(v); };

  const std::string kernel = splits > 1 ? name + "_partial" : name;
  s << "__kernel void " << kernel << "(__global const float* restrict lhs, "
    << "__global const float* restrict rhs, __global float* restrict y) {\n"
    << "  const " << I << " id = (" << I << ")get_global_id(0);\n"
    << "  if (id >= " << S(splits * total) << ") return;\n"
    << "  const " << I << " split = id / " << S(total) << ", gid = id % " << S(total) << ";\n"
    << "  const " << I << " col = gid % " << S(col_blocks) << ";\n"
    << "  const " << I << " b0 = ((gid / " << S(col_blocks) << ") % " << S(batch_blocks) << ") * "
    << R << ";\n"
    << "  " << I << " rest = gid / " << S(col_blocks * batch_blocks) << ";\n"
    << "  " << I << " out_at = split * " << S(num_elements(root.shape)) << " + col * " << S(W)
    << " + b0 * " << S(os[a.out_spec[0]]) << ";\n"
    << "  const " << I << " valid = min((" << I << ")" << R << ", (" << I << ")" << S(batch)
    << " - b0);\n";
  // The output's spatial position: s_j is where its window starts in the padded input.
  for (std::size_t j = spatial; j-- > 0;) {
    const std::int64_t size = root.shape[a.out_spec[2 + j]];
    s << "  const " << I << " o" << j << " = rest % " << S(size) << "; rest /= " << S(size) << ";\n"
      << "  out_at += o" << j << " * " << S(os[a.out_spec[2 + j]]) << ";\n"
      << "  const " << I << " s" << j << " = o" << j << " * " << S(a.window_strides[j]) << " - "
      << S(a.padding_low[j]) << ";\n";
  }
  for (int i = 0; i < R; ++i)
    for (int v = 0; v < V; ++v) s << "  " << TV << " " << acc(i, v) << " = (" << TV << ")(0);\n";
  // The last window axis: positions w with 0 <= s + w * dilation < size.
  const std::int64_t in_last = lhs.shape[a.lhs_spec[2 + last]];
  const std::int64_t dil = a.rhs_dilation[last];
  s << "  const " << I << " lo = s" << last << " >= 0 ? 0 : (-s" << last << " + " << S(dil - 1)
    << ") / " << S(dil) << ";\n"
    << "  const " << I << " hi = s" << last << " >= " << S(in_last) << " ? 0 : min((" << I << ")"
    << S(row_len) << ", (" << S(in_last - 1) << " - s" << last << ") / " << S(dil) << " + 1);\n"
    << "  const " << I << " first = split * " << S(per_split) << ", end = min(first + "
    << S(per_split) << ", (" << I << ")" << S(rows) << ");\n"
    << "  for (" << I << " r = first; r < end; ++r) {\n"
    << "    " << I << " q = r;\n"
    << "    " << I << " a_at = b0, b_at = col * " << S(W) << ";\n";
  // Outer window axes (last first), then the input feature.
  bool skip = false;
  for (std::size_t j = last; j-- > 0;) {
    const std::int64_t k = rhs.shape[a.rhs_spec[2 + j]];
    s << "    const " << I << " w" << j << " = q % " << S(k) << "; q /= " << S(k) << ";\n"
      << "    const " << I << " p" << j << " = s" << j << " + w" << j << " * "
      << S(a.rhs_dilation[j]) << ";\n"
      << "    if (p" << j << " < 0 || p" << j << " >= " << S(lhs.shape[a.lhs_spec[2 + j]])
      << ") continue;\n"
      << "    a_at += p" << j << " * " << S(ls[a.lhs_spec[2 + j]]) << ";\n"
      << "    b_at += w" << j << " * " << S(rs[a.rhs_spec[2 + j]]) << ";\n";
    skip = true;
  }
  (void)skip;
  s << "    a_at += q * " << S(ls[a.lhs_spec[1]]) << " + s" << last << " * "
    << S(ls[a.lhs_spec[2 + last]]) << ";\n"
    << "    b_at += q * " << S(rs[a.rhs_spec[1]]) << ";\n"
    << "    for (" << I << " w = lo; w < hi; ++w) {\n"
    << "      const __global float* ap = lhs + a_at + w * " << S(dil * ls[a.lhs_spec[2 + last]])
    << ";\n"
    << "      const __global float* bp = rhs + b_at + w * " << S(rs[a.rhs_spec[2 + last]]) << ";\n";
  for (int v = 0; v < V; ++v)
    s << "      const " << TV << " b" << v << " = vload" << VW << "(" << v << ", bp);\n";
  for (int i = 0; i < R; ++i) {
    // Past the batch's end the block reads its last valid entry, whose sum is never stored.
    const std::string index = i == 0 ? "0" : "min((" + I + ")" + S(i) + ", valid - 1)";
    s << "      { const " << TV << " av = (" << TV << ")(ap[" << index << "]);";
    for (int v = 0; v < V; ++v)
      s << " " << acc(i, v) << " = fma(av, b" << v << ", " << acc(i, v) << ");";
    s << " }\n";
  }
  s << "    }\n  }\n";
  for (int i = 0; i < R; ++i) {
    s << "  if (" << i << " < valid) {\n";
    for (int v = 0; v < V; ++v)
      s << "    vstore" << VW << "(" << acc(i, v) << ", 0, y + out_at + "
        << S(i * os[a.out_spec[0]] + v * VW) << ");\n";
    s << "  }\n";
  }
  s << "}\n\n";

  const int out_buffer = ctx.buffer_of.at(group.root);
  const int partials =
      splits > 1 ? ctx.add_temp(static_cast<std::size_t>(splits * num_elements(root.shape)) *
                                sizeof(float))
                 : out_buffer;
  LaunchPlan launch;
  launch.kernel = kernel;
  launch.args = {ctx.buffer_of.at(root.inputs[0]), ctx.buffer_of.at(root.inputs[1]), partials};
  launch.writes = {partials};
  size_blocked_launch(ctx, launch, splits * total);
  ctx.add_launch(std::move(launch));
  if (splits == 1) return true;

  // The ranges' partial results added in range order.
  const std::int64_t n = num_elements(root.shape);
  s << "__kernel void " << name << "(__global const float* restrict P, "
    << "__global float* restrict y) {\n"
    << "  const " << I << " at = (" << I << ")get_global_id(0);\n"
    << "  if (at >= " << S(n) << ") return;\n"
    << "  float sum = P[at];\n"
    << "  for (int k = 1; k < " << S(splits) << "; ++k) sum += P[k * " << S(n) << " + at];\n"
    << "  y[at] = sum;\n}\n\n";
  LaunchPlan sum;
  sum.kernel = name;
  sum.args = {partials, out_buffer};
  sum.writes = {out_buffer};
  sum.global_size = static_cast<std::size_t>(n);
  ctx.add_launch(std::move(sum));
  return true;
}

}  // namespace weft::opencl
