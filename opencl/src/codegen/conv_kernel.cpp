// conv_general_dilated (ConvAttrs, weft/ir/op_attrs.h) as a direct convolution: one work-item
// per output element, the window's positions in nested loops whose bounds, strides, dilations
// and padding are compile-time constants, the group's input features innermost. Positions that
// fall into the padding or between dilated lhs elements are skipped, not read. Work-items run
// along the output's row-major order, so with the feature axis last (NHWC) neighbouring
// work-items read neighbouring filter elements and one lhs element: the layout CPU devices
// vectorise across work-items.
#include <sstream>

#include "codegen/cl_types.h"
#include "codegen/kernel_context.h"
#include "weft/ir/op_attrs.h"
#include "weft/shape.h"

namespace weft::opencl {
namespace {

// What the products are summed in: f16 and bf16 in float, integers in the unsigned type of
// their width (wrapping as the interpreter's), other floats in their own type.
std::string accumulator_type(DType t) {
  switch (t) {
    case DType::F16:
    case DType::BF16:
    case DType::F32:
      return "float";
    case DType::F64:
      return "double";
    case DType::I64:
    case DType::U64:
      return "ulong";
    default:
      return "uint";
  }
}

}  // namespace

void emit_conv_kernel(KernelContext& ctx, const FusionGroup& group, const std::string& name) {
  const Graph& g = ctx.graph();
  const Node& root = g.node(group.root);
  const Node& lhs = g.node(root.inputs[0]);
  const Node& rhs = g.node(root.inputs[1]);
  const std::int64_t total = num_elements(root.shape);
  if (total == 0) return;
  if (emit_conv_blocked_kernel(ctx, group, name)) return;
  if (emit_conv_long_window_kernel(ctx, group, name)) return;
  const ConvAttrs a = ConvAttrs::read(root.attrs);
  const std::size_t spatial = a.spatial_rank();
  const DType t = root.dtype;
  const std::string acc_t = accumulator_type(t);
  const bool integer = !is_float(t);
  const std::vector<std::int64_t> ls = row_major_strides(lhs.shape);
  const std::vector<std::int64_t> rs = row_major_strides(rhs.shape);
  const std::vector<std::int64_t> os = row_major_strides(root.shape);
  const std::int64_t batch = lhs.shape[a.lhs_spec[0]];
  const std::int64_t out_features = rhs.shape[a.rhs_spec[0]];
  const std::int64_t in_features = rhs.shape[a.rhs_spec[1]];
  const std::int64_t per_group = out_features / a.feature_group_count;
  const std::int64_t per_batch_group = out_features / a.batch_group_count;
  const std::int64_t batch_group_size = batch / a.batch_group_count;
  const bool wide = std::max({num_elements(lhs.shape), num_elements(rhs.shape), total}) >=
                    (std::int64_t{1} << 31);
  const std::string I = wide ? "long" : "int";
  auto S = [](std::int64_t v) { return std::to_string(v); };

  std::ostringstream& s = ctx.source;
  s << "__kernel void " << name << "(__global const " << cl_storage_type(lhs.dtype)
    << "* restrict lhs, __global const " << cl_storage_type(rhs.dtype)
    << "* restrict rhs, __global " << cl_storage_type(t) << "* restrict y) {\n"
    << "  const " << I << " at = (" << I << ")get_global_id(0);\n"
    << "  if (at >= " << S(total) << ") return;\n";
  // The output's batch, feature and spatial positions.
  auto coordinate = [&](std::int64_t axis) {
    const std::string q = os[axis] == 1 ? "at" : "at / " + S(os[axis]);
    return axis == 0 ? q : "(" + q + ") % " + S(root.shape[axis]);
  };
  s << "  const " << I << " o = " << coordinate(a.out_spec[1]) << ";\n"
    << "  const " << I << " n = (o / " << S(per_batch_group) << ") * " << S(batch_group_size)
    << " + " << coordinate(a.out_spec[0]) << ";\n"
    << "  " << I << " lhs_at = n * " << S(ls[a.lhs_spec[0]]) << " + (o / " << S(per_group) << ") * "
    << S(in_features * ls[a.lhs_spec[1]]) << ";\n"
    << "  " << I << " rhs_at = o * " << S(rs[a.rhs_spec[0]]) << ";\n";
  for (std::size_t i = 0; i < spatial; ++i)
    s << "  const " << I << " s" << i << " = " << coordinate(a.out_spec[2 + i]) << " * "
      << S(a.window_strides[i]) << " - " << S(a.padding_low[i]) << ";\n";
  s << "  " << acc_t << " acc = 0;\n";
  std::string indent = "  ";
  for (std::size_t i = 0; i < spatial; ++i) {
    const std::string w = "w" + std::to_string(i), p = "p" + std::to_string(i);
    const std::int64_t window = rhs.shape[a.rhs_spec[2 + i]];
    const std::int64_t in = lhs.shape[a.lhs_spec[2 + i]];
    s << indent << "for (int " << w << " = 0; " << w << " < " << S(window) << "; ++" << w
      << ") {\n";
    indent += "  ";
    s << indent << I << " " << p << " = s" << i << " + " << w << " * " << S(a.rhs_dilation[i])
      << ";\n";
    if (a.lhs_dilation[i] > 1) {
      s << indent << "if (" << p << " < 0 || " << p << " % " << S(a.lhs_dilation[i])
        << " != 0) continue;\n"
        << indent << p << " /= " << S(a.lhs_dilation[i]) << ";\n";
      s << indent << "if (" << p << " >= " << S(in) << ") continue;\n";
    } else {
      s << indent << "if (" << p << " < 0 || " << p << " >= " << S(in) << ") continue;\n";
    }
  }
  std::string lhs_index = "lhs_at", rhs_index = "rhs_at";
  for (std::size_t i = 0; i < spatial; ++i) {
    lhs_index += " + p" + std::to_string(i) + " * " + S(ls[a.lhs_spec[2 + i]]);
    rhs_index += " + w" + std::to_string(i) + " * " + S(rs[a.rhs_spec[2 + i]]);
  }
  s << indent << "const " << I << " l0 = " << lhs_index << ", r0 = " << rhs_index << ";\n"
    << indent << "for (int c = 0; c < " << S(in_features) << "; ++c) {\n";
  const std::string l = cl_load(lhs.dtype, "lhs", "l0 + c * " + S(ls[a.lhs_spec[1]]));
  const std::string r = cl_load(rhs.dtype, "rhs", "r0 + c * " + S(rs[a.rhs_spec[1]]));
  if (integer)
    s << indent << "  acc += (" << acc_t << ")" << l << " * (" << acc_t << ")" << r << ";\n";
  else
    s << indent << "  acc += " << l << " * " << r << ";\n";
  s << indent << "}\n";
  for (std::size_t i = 0; i < spatial; ++i) {
    indent.resize(indent.size() - 2);
    s << indent << "}\n";
  }
  const std::string value = "(" + cl_type(t) + ")acc";
  s << "  " << cl_store(t, "y", "at", cl_round_to_dtype(t, value)) << "\n}\n\n";

  LaunchPlan launch;
  launch.kernel = name;
  launch.args = {ctx.buffer_of.at(root.inputs[0]), ctx.buffer_of.at(root.inputs[1]),
                 ctx.buffer_of.at(group.root)};
  launch.writes = {ctx.buffer_of.at(group.root)};
  launch.global_size = static_cast<std::size_t>(total);
  ctx.add_launch(std::move(launch));
}

}  // namespace weft::opencl
