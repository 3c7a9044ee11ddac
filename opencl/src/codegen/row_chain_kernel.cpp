// A row chain: consecutive CPU kernels over the rows of one f32[..., C] (row reductions, row
// loops and per-row values, e.g. softmax's max, sum of exp and division, or layer norm's five
// kernels) run as one kernel, one work-item per row running each group's phase in turn. A
// later phase reads what an earlier one wrote for the same row, from L1, and the chain costs
// one launch instead of one per group. Every group keeps its buffers, so kernels after the
// chain read them as before.
//
// Correctness rests on each work-item reading only its own row of what the chain writes: a
// later phase may reach a chain buffer only through elementwise ops, reshapes and broadcasts
// that keep the leading (row) axes, which reads_own_row checks.
#include <algorithm>
#include <map>
#include <set>

#include "codegen/cl_types.h"
#include "codegen/kernel_context.h"
#include "codegen/row_phases.h"
#include "weft/ir/op_attrs.h"

namespace weft::opencl {
namespace {

bool starts_with(const Shape& shape, const Shape& leading) {
  return shape.size() >= leading.size() &&
         std::equal(leading.begin(), leading.end(), shape.begin());
}

// Whether every read that `start` (at an index of row `row`) makes of a buffer is_chain
// accepts, through the group's members, is at an index of the same row.
bool reads_own_row(const Graph& g, const FusionGroup& group, ValueId start, const Shape& leading,
                   const std::function<bool(ValueId)>& is_chain) {
  const std::set<ValueId> inputs(group.inputs.begin(), group.inputs.end());
  const std::set<ValueId> reaching = values_reaching(g, group, is_chain);
  auto reaches = [&](ValueId v) { return reaching.count(v) > 0; };
  std::vector<ValueId> work{start};
  std::set<ValueId> seen;
  while (!work.empty()) {
    const ValueId v = work.back();
    work.pop_back();
    if (!seen.insert(v).second || !reaches(v)) continue;
    const Node& n = g.node(v);
    if (!starts_with(n.shape, leading)) return false;
    if (inputs.count(v)) continue;  // a chain buffer read at this row
    const OpClass c = op_info(n.op).op_class;
    const bool elementwise = c == OpClass::Unary || c == OpClass::Binary || c == OpClass::Compare ||
                             c == OpClass::Select || c == OpClass::Convert;
    if (elementwise) {
      for (ValueId in : n.inputs) {
        if (g.node(in).shape != n.shape && reaches(in)) return false;
        work.push_back(in);
      }
      continue;
    }
    if (n.op == OpKind::Reshape) {
      work.push_back(n.inputs[0]);
      continue;
    }
    if (n.op == OpKind::BroadcastInDim) {
      const auto dims = BroadcastAttrs::read(n.attrs).dims;
      const Shape& in = g.node(n.inputs[0]).shape;
      if (!starts_with(in, leading)) return false;
      for (std::size_t j = 0; j < leading.size(); ++j)
        if (dims[j] != static_cast<std::int64_t>(j)) return false;
      work.push_back(n.inputs[0]);
      continue;
    }
    return false;
  }
  return true;
}

}  // namespace

std::size_t row_chain_length(const KernelContext& ctx,
                             const std::function<const FusionGroup*(std::size_t)>& group_at) {
  const FusionGroup* const head = group_at(0);
  if (ctx.caps.is_gpu || !head) return 0;
  const Graph& g = ctx.graph();
  const FusionGroup& first = *head;
  Shape row_shape;  // f32[..., C] of the chain
  if (row_reduce_phase_fits(ctx, first))
    row_shape = g.node(g.node(first.root).inputs[0]).shape;
  else if (row_loop_phase_fits(ctx, first))
    row_shape = g.node(first.root).shape;
  else
    return 0;
  const Shape leading(row_shape.begin(), row_shape.end() - 1);
  const std::int64_t rows = num_elements(leading);
  // Few long rows: each reduction's own two-stage kernel spreads a row over the device, which
  // one work-item per row cannot (reduce_kernel.cpp uses the same bound).
  if (rows < 2 || (rows < 64 && row_shape.back() >= 8192)) return 0;
  std::set<int> written;  // buffers the chain so far writes
  auto add_written = [&](const FusionGroup& group) {
    written.insert(ctx.buffer_of.at(group.root));
    for (ValueId side : group.side_outputs) written.insert(ctx.buffer_of.at(side));
  };
  auto is_chain = [&](ValueId v) { return written.count(ctx.buffer_of.at(v)) > 0; };
  add_written(first);
  std::size_t length = 1;
  for (const FusionGroup* next; (next = group_at(length)) != nullptr; ++length) {
    const FusionGroup& group = *next;
    const Node& root = g.node(group.root);
    ValueId start = group.root;
    if (row_reduce_phase_fits(ctx, group)) {
      start = root.inputs[0];
      if (g.node(start).shape != row_shape) break;
    } else if (row_loop_phase_fits(ctx, group)) {
      if (root.shape != row_shape) break;
    } else if (group.kind != FusionGroup::Kind::Loop || root.dtype != DType::F32 ||
               !starts_with(root.shape, leading) || num_elements(root.shape) != rows) {
      break;
    }
    // Only groups that use what the chain wrote join it, and only where they read their own row.
    if (std::none_of(group.inputs.begin(), group.inputs.end(), is_chain)) break;
    if (!reads_own_row(g, group, start, leading, is_chain)) break;
    add_written(group);
  }
  return length;
}

void emit_row_chain_kernel(KernelContext& ctx, const std::vector<const FusionGroup*>& groups,
                           const std::string& name) {
  const Graph& g = ctx.graph();
  std::string idx_t = "int";
  for (const FusionGroup* group : groups)
    if (index_type_for(ctx, *group) == "long") idx_t = "long";
  // One argument per buffer, named after it: a buffer an earlier phase writes and a later one
  // reads is one pointer, so `restrict` holds and the reads see the writes.
  std::map<int, ValueId> read, write;  // buffer -> a node it holds
  for (const FusionGroup* group : groups) {
    for (ValueId in : group->inputs) read.emplace(ctx.buffer_of.at(in), in);
    write.emplace(ctx.buffer_of.at(group->root), group->root);
    for (ValueId side : group->side_outputs) write.emplace(ctx.buffer_of.at(side), side);
  }
  auto arg = [&](ValueId v) { return "b" + std::to_string(ctx.buffer_of.at(v)); };
  LaunchPlan launch;
  launch.kernel = name;
  std::string params;
  for (const auto& [buffer, node] : read) {
    if (write.count(buffer)) continue;
    params += "__global const " + cl_storage_type(g.node(node).dtype) + "* restrict b" +
              std::to_string(buffer) + ", ";
    launch.args.push_back(buffer);
  }
  for (const auto& [buffer, node] : write) {
    params += "__global " + cl_storage_type(g.node(node).dtype) + "* restrict b" +
              std::to_string(buffer) + ", ";
    launch.args.push_back(buffer);
    launch.writes.push_back(buffer);
  }
  params.resize(params.size() - 2);

  const FusionGroup& first = *groups[0];
  const Node& first_root = g.node(first.root);
  const Shape& row_shape = first.kind == FusionGroup::Kind::Reduce
                               ? g.node(first_root.inputs[0]).shape
                               : first_root.shape;
  const std::int64_t rows = num_elements(row_shape) / row_shape.back();
  ctx.source << "__kernel void " << name << "(" << params << ") {\n  const " << idx_t << " row = ("
             << idx_t << ")get_global_id(0);\n  if (row >= " << rows << ") return;\n";
  for (const FusionGroup* group : groups) {
    PhaseArgs args;
    args.input = arg;
    for (ValueId side : group->side_outputs) args.side.push_back(arg(side));
    args.out = arg(group->root);
    const Node& root = g.node(group->root);
    ctx.source << "  // " << op_name(root.op) << " %" << group->root << "\n  {\n";
    if (row_reduce_phase_fits(ctx, *group))
      ctx.source << row_reduce_phase(ctx, *group, args, idx_t);
    else if (row_loop_phase_fits(ctx, *group))
      ctx.source << row_loop_phase(ctx, *group, args, idx_t);
    else
      ctx.source << per_row_phase(ctx, *group, args, idx_t);
    ctx.source << "  }\n";
  }
  ctx.source << "}\n\n";
  launch.local_size = std::min<std::size_t>(8, ctx.caps.max_work_group_size);
  launch.global_size = round_up(static_cast<std::size_t>(rows), launch.local_size);
  ctx.add_launch(std::move(launch));
}

}  // namespace weft::opencl
