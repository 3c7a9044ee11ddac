#include <algorithm>

#include "codegen/cl_types.h"
#include "codegen/expr_emitter.h"
#include "codegen/kernel_context.h"

namespace weft::opencl {

std::size_t round_up(std::size_t n, std::size_t multiple) {
  return (n + multiple - 1) / multiple * multiple;
}

std::string index_type_for(const KernelContext& ctx, const FusionGroup& group) {
  std::int64_t largest = 0;
  for (ValueId m : group.members) largest = std::max(largest, num_elements(ctx.graph().node(m).shape));
  for (ValueId in : group.inputs) largest = std::max(largest, num_elements(ctx.graph().node(in).shape));
  // Margin for intermediate products such as row*stride + column.
  return largest < (std::int64_t{1} << 30) ? "int" : "long";
}

std::string input_params(const KernelContext& ctx, const FusionGroup& group,
                         std::vector<int>& args) {
  std::string s;
  for (std::size_t i = 0; i < group.inputs.size(); ++i) {
    const Node& n = ctx.graph().node(group.inputs[i]);
    s += "__global const " + cl_storage_type(n.dtype) + "* restrict a" + std::to_string(i) + ", ";
    args.push_back(ctx.buffer_of.at(group.inputs[i]));
  }
  return s;
}

void emit_loop_kernel(KernelContext& ctx, const FusionGroup& group, const std::string& name) {
  const Node& root = ctx.graph().node(group.root);
  const std::int64_t n = num_elements(root.shape);
  const std::string idx_t = index_type_for(ctx, group);
  LaunchPlan launch;
  launch.kernel = name;
  std::string params = input_params(ctx, group, launch.args);
  const int out = ctx.buffer_of.at(group.root);
  launch.args.push_back(out);
  launch.writes.push_back(out);

  ExprEmitter emit(
      ctx.graph(),
      [&](ValueId v) -> std::string {
        for (std::size_t i = 0; i < group.inputs.size(); ++i)
          if (group.inputs[i] == v) return "a" + std::to_string(i);
        return "";
      },
      idx_t);
  Index idx{"gid", {}, root.shape};
  std::string value = emit.value(group.root, idx);
  std::string store = root.dtype == DType::Bool ? "(uchar)(" + value + ")" : value;

  ctx.source << "__kernel void " << name << "(" << params << "__global "
             << cl_storage_type(root.dtype) << "* restrict out) {\n"
             << "  const " << idx_t << " gid = (" << idx_t << ")get_global_id(0);\n"
             << "  if (gid >= " << n << ") return;\n"
             << emit.take_code() << "  out[gid] = " << store << ";\n}\n\n";

  launch.local_size = std::min<std::size_t>(256, ctx.caps.max_work_group_size);
  launch.global_size = round_up(static_cast<std::size_t>(n), launch.local_size);
  ctx.program.launches.push_back(std::move(launch));
}

}  // namespace weft::opencl
