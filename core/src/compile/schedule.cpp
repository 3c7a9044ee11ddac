#include "weft/compile/schedule.h"

#include <algorithm>

#include "primitives/primitive.h"
#include "weft/error.h"
#include "weft/ir/effects.h"
#include "weft/ir/op_attrs.h"

namespace weft {
namespace {

ScheduleStep::Kind control_kind(const Node& n, const FusionOptions& options) {
  if (is_transformation_only(n.op))
    throw InvalidGraphError("schedule: " + std::string(op_name(n.op)) + " at " +
                            n.origin.describe() +
                            " cannot be compiled: it exists only while a transformation traces a "
                            "function; call the function, or transform it");
  switch (prim::primitive(n.op).control_flow) {
    case prim::ControlFlow::counted_loop:
      return options.loops_in_one_kernel && is_elementwise_loop(n, options.max_kernel_ops)
                 ? ScheduleStep::Kind::LoopKernel
                 : ScheduleStep::Kind::Loop;
    case prim::ControlFlow::conditional_loop:
      return ScheduleStep::Kind::While;
    case prim::ControlFlow::branch:
      return ScheduleStep::Kind::Cond;
    case prim::ControlFlow::none:
      break;
  }
  throw InvalidGraphError("schedule: " + std::string(op_name(n.op)) +
                          " states no control flow in its definition (a bug in weft)");
}

}  // namespace

ScheduleBlock fuse_blocks(Graph graph, const FusionOptions& options) {
  ScheduleBlock block;
  block.fusion = plan_fusion_of_optimized(std::move(graph), options);
  const Graph& g = block.fusion.graph;
  // Control steps now, in node order, for their regions' blocks to live in; order_steps adds
  // the kernel, host and join steps.
  for (std::size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& n = g.nodes[i];
    if (is_host_op(n.op) || n.op == OpKind::AfterAll || !is_control(n.op)) continue;
    ScheduleStep step;
    step.kind = control_kind(n, options);
    step.node = static_cast<ValueId>(i);
    for (const Graph& region : n.regions) step.regions.push_back(fuse_blocks(region, options));
    block.steps.push_back(std::move(step));
  }
  return block;
}

void order_steps(ScheduleBlock& block) {
  const Graph& g = block.fusion.graph;
  // Steps in node order: a kernel at its root, a control step at its node. Every value a
  // step reads is a parameter or was produced by a step at an earlier node.
  std::vector<std::pair<ValueId, ScheduleStep>> steps;
  for (std::size_t i = 0; i < block.fusion.groups.size(); ++i) {
    ScheduleStep step;
    step.kind = ScheduleStep::Kind::Kernel;
    step.group = static_cast<int>(i);
    steps.emplace_back(block.fusion.groups[i].root, std::move(step));
  }
  std::size_t next_control = 0;
  for (std::size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& n = g.nodes[i];
    if (is_host_op(n.op) || n.op == OpKind::AfterAll) {
      ScheduleStep step;
      step.kind = n.op == OpKind::AfterAll ? ScheduleStep::Kind::Join : ScheduleStep::Kind::Host;
      step.node = static_cast<ValueId>(i);
      steps.emplace_back(static_cast<ValueId>(i), std::move(step));
      continue;
    }
    if (!is_control(n.op)) continue;
    ScheduleStep& step = block.steps.at(next_control++);
    for (ScheduleBlock& region : step.regions) order_steps(region);
    steps.emplace_back(static_cast<ValueId>(i), std::move(step));
  }
  std::stable_sort(steps.begin(), steps.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  block.steps.clear();
  for (auto& [at, step] : steps) block.steps.push_back(std::move(step));
}

bool is_elementwise_loop(const Node& scan, int max_body_ops) {
  if (prim::primitive(scan.op).control_flow != prim::ControlFlow::counted_loop ||
      scan.regions.size() != 1)
    return false;
  const ScanAttrs attrs = ScanAttrs::read(scan.attrs);
  const auto carries = static_cast<std::size_t>(attrs.carries);
  if (carries == 0 || attrs.xs != 0 || scan.results.size() != carries) return false;
  const Graph& body = scan.regions[0];
  if (max_body_ops > 0 && body.nodes.size() > static_cast<std::size_t>(max_body_ops)) return false;
  // Parameters: the iteration, the carries, then captured values.
  const Shape& shape = body.node(body.params.at(1)).shape;
  for (std::size_t p = 1; p < body.params.size(); ++p) {
    const Shape& s = body.node(body.params[p]).shape;
    if (s != shape && (p <= carries || !s.empty())) return false;
  }
  for (const Node& n : body.nodes) {
    const bool own_shape = n.shape == shape, scalar = n.shape.empty();
    switch (n.op) {
      case OpKind::Parameter:
      case OpKind::Constant:
        continue;
      case OpKind::Iota:
        if (!own_shape) return false;
        continue;
      case OpKind::BroadcastInDim:
        if (!own_shape || !body.node(n.inputs[0]).shape.empty()) return false;
        continue;
      default:
        if (!is_elementwise(n.op) || !(own_shape || scalar)) return false;
    }
  }
  return true;
}

int count_kernel_steps(const ScheduleBlock& block) {
  int count = 0;
  for (const ScheduleStep& step : block.steps) {
    if (step.kind == ScheduleStep::Kind::Kernel || step.kind == ScheduleStep::Kind::LoopKernel) {
      ++count;
      continue;
    }
    for (const ScheduleBlock& region : step.regions) count += count_kernel_steps(region);
  }
  return count;
}

const char* step_kind_name(ScheduleStep::Kind kind) {
  switch (kind) {
    case ScheduleStep::Kind::Kernel:
      return "kernel";
    case ScheduleStep::Kind::Loop:
      return "loop";
    case ScheduleStep::Kind::LoopKernel:
      return "loop-kernel";
    case ScheduleStep::Kind::While:
      return "while";
    case ScheduleStep::Kind::Cond:
      return "cond";
    case ScheduleStep::Kind::Host:
      return "host";
    case ScheduleStep::Kind::Join:
      return "join";
  }
  return "?";
}

}  // namespace weft
