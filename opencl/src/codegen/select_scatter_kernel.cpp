// select_and_scatter_add without atomics, in two launches: one work-item per window (source
// element) finds the operand position its window chooses, as the interpreter and XLA's
// select_and_scatter do (from the window's first position on, keeping the chosen element while
// kept >= candidate for ge, <= for le; padding holds the identity and, chosen, sends the source
// element nowhere), into a temporary buffer; then one work-item per operand element adds the
// source elements of the windows that cover it and chose it. The sums are deterministic: each
// element adds its windows in row-major order. f16 and bf16 accumulate in float and round once,
// when stored. Windows that do not overlap store their source element at their choice instead,
// into a result zeroed first.
#include "codegen/cl_types.h"
#include "codegen/kernel_context.h"
#include "codegen/window_loops.h"
#include "weft/ir/op_attrs.h"

namespace weft::opencl {
namespace {

std::vector<std::string> names(const char* prefix, std::size_t count) {
  std::vector<std::string> out;
  for (std::size_t d = 0; d < count; ++d) out.push_back(prefix + std::to_string(d));
  return out;
}

}  // namespace

void emit_select_scatter_kernel(KernelContext& ctx, const FusionGroup& group,
                                const std::string& name) {
  const Graph& g = ctx.graph();
  const Node& n = g.node(group.root);
  const Shape& windows = g.node(n.inputs[0]).shape;
  const std::int64_t count = num_elements(n.shape), window_count = num_elements(windows);
  if (count == 0) return;
  const DType t = n.dtype;
  const std::string T = cl_type(t), S = cl_storage_type(t);
  const SelectWindowAttrs a = SelectWindowAttrs::read(n.attrs);
  const WindowAttrs& win = a.window;
  const std::string I = window_index_type(n.shape, windows, win);
  auto lit = [&I](std::int64_t v) { return index_literal(v, I); };
  const std::string ident = a.chooses_max ? cl_lowest(t) : cl_highest(t);
  const std::size_t rank = n.shape.size();
  const std::vector<std::string> o = names("o", rank), p = names("p", rank);
  const int source = ctx.buffer_of.at(n.inputs[0]), x = ctx.buffer_of.at(n.inputs[1]);
  const int out = ctx.buffer_of.at(group.root);
  // Windows that never overlap (each stride at least its window, as a 2 x 2 pool with stride 2)
  // write their source element straight to the chosen position of a zeroed result.
  bool disjoint = true;
  for (std::size_t d = 0; d < rank; ++d)
    disjoint = disjoint && win.window_strides[d] >= win.window_dimensions[d];
  const int chosen =
      disjoint ? -1
               : ctx.add_temp(static_cast<std::size_t>(std::max<std::int64_t>(window_count, 1)) *
                              (I == "int" ? 4 : 8));
  std::ostringstream& s = ctx.source;
  if (disjoint) {
    s << "__kernel void " << name << "_zero(__global " << S << "* restrict out) {\n"
      << "  const " << I << " gid = (" << I << ")get_global_id(0);\n"
      << "  if (gid < " << lit(count) << ") " << cl_store(t, "out", "gid", "(" + T + ")0")
      << "\n}\n\n";
    LaunchPlan zero;
    zero.kernel = name + "_zero";
    zero.args = {out};
    zero.writes = {out};
    zero.global_size = static_cast<std::size_t>(count);
    ctx.add_launch(std::move(zero));
  }

  // Each window's choice: the operand's flat index, or -1 for padding.
  if (window_count > 0) {
    const WindowLoops w = window_loops(win, n.shape, o, I, "", "  ");
    const std::string& in = w.indent;
    s << "__kernel void " << name << "_choose(__global const " << S << "* restrict x, "
      << (disjoint ? "__global const " + S + "* restrict source, __global " + S + "* restrict out"
                   : "__global " + I + "* restrict chosen")
      << ") {\n"
      << "  const " << I << " gid = (" << I << ")get_global_id(0);\n"
      << "  if (gid >= " << lit(window_count) << ") return;\n"
      << unflatten_index("gid", windows, o, I, "  ") << "  " << T << " kept = " << ident << ";\n"
      << "  " << I << " pick = -1;\n"
      << "  int first = 1;\n"
      << w.open << in << "const " << T << " candidate = (" << w.inside << ") ? "
      << cl_load(t, "x", w.at) << " : " << ident << ";\n"
      << in << "const int take = first || !(kept " << (a.chooses_max ? ">=" : "<=")
      << " candidate);\n"
      << in << "kept = take ? candidate : kept;\n"
      << in << "pick = take ? ((" << w.inside << ") ? " << w.at << " : -1) : pick;\n"
      << in << "first = 0;\n"
      << w.close
      << (disjoint
              ? "  if (pick >= 0) " + cl_store(t, "out", "pick", cl_load(t, "source", "gid")) + "\n"
              : std::string("  chosen[gid] = pick;\n"))
      << "}\n\n";
    LaunchPlan choose;
    choose.kernel = name + "_choose";
    choose.args = disjoint ? std::vector<int>{x, source, out} : std::vector<int>{x, chosen};
    choose.writes = {disjoint ? out : chosen};
    choose.global_size = static_cast<std::size_t>(window_count);
    ctx.add_launch(std::move(choose));
  }

  if (disjoint) return;
  // Each operand element p: the windows o that cover it, o * stride <= p + low <= o * stride +
  // window - 1 on every axis, in row-major order; at most ceil(window / stride) per axis, a
  // fixed trip count that CPU compilers vectorize across work-items.
  s << "__kernel void " << name << "(__global const " << S << "* restrict source, __global const "
    << I << "* restrict chosen, __global " << S << "* restrict out) {\n"
    << "  const " << I << " gid = (" << I << ")get_global_id(0);\n"
    << "  if (gid >= " << lit(count) << ") return;\n"
    << unflatten_index("gid", n.shape, p, I, "  ") << "  " << T << " acc = (" << T << ")0;\n";
  std::string indent = "  ", covered;
  for (std::size_t d = 0; d < rank; ++d) {
    const std::string D = std::to_string(d), at = "at" + D, from = "first" + D, j = "j" + D;
    const std::int64_t size = win.window_dimensions[d], stride = win.window_strides[d];
    s << indent << "const " << I << " " << at << " = " << p[d] << " + " << lit(win.padding_low[d])
      << ";\n"
      << indent << "const " << I << " " << from << " = " << at << " < " << lit(size) << " ? 0 : ("
      << at << " - " << lit(size - 1) << " + " << lit(stride - 1) << ") / " << lit(stride) << ";\n"
      << indent << "for (" << I << " " << j << " = 0; " << j << " < "
      << lit((size + stride - 1) / stride) << "; ++" << j << ") {\n";
    indent += "  ";
    s << indent << "const " << I << " " << o[d] << " = " << from << " + " << j << ";\n";
    covered += (d ? " && " : "") + at + " >= 0 && " + o[d] + " * " + lit(stride) + " <= " + at +
               " && " + o[d] + " < " + lit(windows[d]);
  }
  if (rank == 0) covered = "1";
  s << indent << "const " << I << " w = " << flatten_index(o, windows, I) << ";\n"
    << indent << "if ((" << covered << ") && chosen[w] == gid) acc += " << cl_load(t, "source", "w")
    << ";\n";
  for (std::size_t d = rank; d-- > 0;) {
    indent.resize(indent.size() - 2);
    s << indent << "}\n";
  }
  s << "  " << cl_store(t, "out", "gid", "acc") << "\n}\n\n";
  LaunchPlan gather;
  gather.kernel = name;
  gather.args = {source, chosen, out};
  gather.writes = {out};
  gather.global_size = static_cast<std::size_t>(count);
  ctx.add_launch(std::move(gather));
}

}  // namespace weft::opencl
