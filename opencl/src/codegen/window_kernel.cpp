// reduce_window_sum/max/min and select_and_gather_add: one work-item per result element, looping
// over its window in row-major order (codegen/window_loops.h) and skipping padding and
// base-dilation holes (they hold the identity), as the interpreter and XLA. f16 and bf16
// accumulate in float and round once, when stored.
#include "codegen/cl_types.h"
#include "codegen/kernel_context.h"
#include "codegen/window_loops.h"
#include "weft/ir/op_attrs.h"

namespace weft::opencl {
namespace {

// `acc` combined with `v` by the reduction of `op` in dtype `t`: integer sums wrap (through an
// unsigned type at least as wide as uint), float extremes keep a NaN.
std::string combined(OpKind op, DType t, const std::string& acc, const std::string& v) {
  const std::string T = cl_type(t);
  if (op == OpKind::ReduceWindowSum) {
    if (is_float(t)) return acc + " + " + v;
    const std::string U = dtype_size(t) == 8 ? "ulong" : "uint";
    return "(" + T + ")((" + U + ")" + acc + " + (" + U + ")" + v + ")";
  }
  const bool is_max = op == OpKind::ReduceWindowMax;
  if (!is_float(t)) return std::string(is_max ? "max(" : "min(") + acc + ", " + v + ")";
  return "((isnan(" + acc + ") || isnan(" + v + ")) ? (" + acc + " + " + v +
         ") : " + (is_max ? "fmax(" : "fmin(") + acc + ", " + v + "))";
}

std::string identity(OpKind op, DType t) {
  if (op == OpKind::ReduceWindowMax) return cl_lowest(t);
  if (op == OpKind::ReduceWindowMin) return cl_highest(t);
  return "((" + cl_type(t) + ")0)";
}

std::vector<std::string> names(const char* prefix, std::size_t count) {
  std::vector<std::string> out;
  for (std::size_t d = 0; d < count; ++d) out.push_back(prefix + std::to_string(d));
  return out;
}

}  // namespace

void emit_window_kernel(KernelContext& ctx, const FusionGroup& group, const std::string& name) {
  const Graph& g = ctx.graph();
  const Node& n = g.node(group.root);
  const bool gathers = n.op == OpKind::SelectAndGatherAdd;
  const Node& x = g.node(n.inputs[gathers ? 1 : 0]);
  const std::int64_t count = num_elements(n.shape);
  if (count == 0) return;
  const DType t = n.dtype;
  const std::string T = cl_type(t), S = cl_storage_type(t);
  const std::vector<std::string> o = names("o", n.shape.size());
  const WindowAttrs window = WindowAttrs::read(n.attrs);
  const std::string I = window_index_type(x.shape, n.shape, window);
  std::ostringstream& s = ctx.source;
  s << "__kernel void " << name << "(";
  if (gathers) s << "__global const " << S << "* restrict tangents, ";
  s << "__global const " << S << "* restrict x, __global " << S << "* restrict out) {\n"
    << "  const " << I << " gid = (" << I << ")get_global_id(0);\n"
    << "  if (gid >= " << index_literal(count, I) << ") return;\n"
    << unflatten_index("gid", n.shape, o, I, "  ");
  if (gathers) {
    // The fold of JAX's (operand, tangent) reduce_window: keep while kept >= candidate (ge) or
    // kept <= candidate (le).
    const bool chooses_max = SelectWindowAttrs::read(n.attrs).chooses_max;
    const std::string ident = chooses_max ? cl_lowest(t) : cl_highest(t);
    const WindowLoops w = window_loops(window, x.shape, o, I, "", "  ");
    const std::string& in = w.indent;
    s << "  " << T << " kept = " << ident << ", tangent = (" << T << ")0;\n"
      << w.open << in << "if (" << w.inside << ") {\n"
      << in << "  const " << T << " candidate = " << cl_load(t, "x", w.at) << ";\n"
      << in << "  if (!(kept " << (chooses_max ? ">=" : "<=") << " candidate)) {\n"
      << in << "    kept = candidate;\n"
      << in << "    tangent = " << cl_load(t, "tangents", w.at) << ";\n"
      << in << "  }\n"
      << in << "}\n"
      << w.close << "  " << cl_store(t, "out", "gid", "tangent") << "\n}\n\n";
  } else {
    const WindowLoops w = window_loops(window, x.shape, o, I, "", "  ");
    const std::string& in = w.indent;
    s << "  " << T << " acc = " << identity(n.op, t) << ";\n"
      << w.open << in << "if (" << w.inside << ") {\n"
      << in << "  const " << T << " v = " << cl_load(t, "x", w.at) << ";\n"
      << in << "  acc = " << combined(n.op, t, "acc", "v") << ";\n"
      << in << "}\n"
      << w.close << "  " << cl_store(t, "out", "gid", "acc") << "\n}\n\n";
  }
  LaunchPlan launch;
  launch.kernel = name;
  if (gathers) launch.args.push_back(ctx.buffer_of.at(n.inputs[0]));
  launch.args.push_back(ctx.buffer_of.at(gathers ? n.inputs[1] : n.inputs[0]));
  launch.args.push_back(ctx.buffer_of.at(group.root));
  launch.writes = {ctx.buffer_of.at(group.root)};
  launch.global_size = static_cast<std::size_t>(count);
  ctx.add_launch(std::move(launch));
}

}  // namespace weft::opencl
