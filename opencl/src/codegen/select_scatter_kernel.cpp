// select_and_scatter_add without atomics: one work-item per operand element gathers the source
// elements of the windows that cover it and chose it, each window choosing as the interpreter
// and XLA's select_and_scatter do (from its first position on, keeping the chosen element while
// kept >= candidate for ge, <= for le; padding holds the identity). The sums are exact and the
// same on every run: each element adds its windows in row-major order. f16 and bf16 accumulate
// in float and round once, when stored.
#include "codegen/cl_types.h"
#include "codegen/kernel_context.h"
#include "codegen/window_loops.h"
#include "weft/ir/op_attrs.h"

namespace weft::opencl {

void emit_select_scatter_kernel(KernelContext& ctx, const FusionGroup& group,
                                const std::string& name) {
  const Graph& g = ctx.graph();
  const Node& n = g.node(group.root);
  const Shape& windows = g.node(n.inputs[0]).shape;
  const std::int64_t count = num_elements(n.shape);
  if (count == 0) return;
  const DType t = n.dtype;
  const std::string T = cl_type(t), S = cl_storage_type(t);
  const SelectWindowAttrs a = SelectWindowAttrs::read(n.attrs);
  const WindowAttrs& win = a.window;
  const std::string ident = a.chooses_max ? cl_lowest(t) : cl_highest(t);
  const std::size_t rank = n.shape.size();
  std::vector<std::string> p, o;
  for (std::size_t d = 0; d < rank; ++d) {
    p.push_back("p" + std::to_string(d));
    o.push_back("o" + std::to_string(d));
  }
  std::ostringstream& s = ctx.source;
  s << "__kernel void " << name << "(__global const " << S << "* restrict source, __global const "
    << S << "* restrict x, __global " << S << "* restrict out) {\n"
    << "  const long gid = get_global_id(0);\n"
    << "  if (gid >= " << window_long(count) << ") return;\n"
    << unflatten_index("gid", n.shape, p, "  ") << "  " << T << " acc = (" << T << ")0;\n";
  // The windows o that hold p, at position k: o * stride + k - low == p.
  std::string indent = "  ", close;
  std::vector<std::string> k;
  for (std::size_t d = 0; d < rank; ++d) {
    k.push_back("k" + std::to_string(d));
    const std::string q = "q" + std::to_string(d);
    s << indent << "for (long " << k[d] << " = 0; " << k[d] << " < "
      << window_long(win.window_dimensions[d]) << "; ++" << k[d] << ") {\n";
    indent += "  ";
    s << indent << "const long " << q << " = " << p[d] << " + " << window_long(win.padding_low[d])
      << " - " << k[d] << ";\n"
      << indent << "if (" << q << " < 0 || " << q << " % " << window_long(win.window_strides[d])
      << " != 0) continue;\n"
      << indent << "const long " << o[d] << " = " << q << " / "
      << window_long(win.window_strides[d]) << ";\n"
      << indent << "if (" << o[d] << " >= " << window_long(windows[d]) << ") continue;\n";
  }
  // Which position window o chooses.
  const WindowLoops w = window_loops(win, n.shape, o, "c", indent);
  const std::string& in = w.indent;
  const char* keeps = a.chooses_max ? ">=" : "<=";
  s << indent << T << " kept = " << ident << ";\n"
    << indent << "long chosen = -1;\n"
    << w.open << in << "const " << T << " candidate = (" << w.inside << ") ? "
    << cl_load(t, "x", w.at) << " : " << ident << ";\n"
    << in << "if (chosen < 0 || !(kept " << keeps << " candidate)) {\n"
    << in << "  kept = candidate;\n"
    << in << "  chosen = " << w.offset << ";\n"
    << in << "}\n"
    << w.close << indent << "if (chosen == " << flatten_index(k, Shape(win.window_dimensions))
    << ") acc += " << cl_load(t, "source", flatten_index(o, windows)) << ";\n";
  for (std::size_t d = rank; d-- > 0;) {
    indent.resize(indent.size() - 2);
    s << indent << "}\n";
  }
  s << "  " << cl_store(t, "out", "gid", "acc") << "\n}\n\n";
  LaunchPlan launch;
  launch.kernel = name;
  launch.args = {ctx.buffer_of.at(n.inputs[0]), ctx.buffer_of.at(n.inputs[1]),
                 ctx.buffer_of.at(group.root)};
  launch.writes = {ctx.buffer_of.at(group.root)};
  launch.global_size = static_cast<std::size_t>(count);
  ctx.add_launch(std::move(launch));
}

}  // namespace weft::opencl
