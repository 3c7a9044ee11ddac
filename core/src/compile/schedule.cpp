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

namespace {
void run_dot_consumers_after_their_dots(ScheduleBlock& block);
}  // namespace

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
  run_dot_consumers_after_their_dots(block);
}

namespace {

// A loop kernel reading a dot's result, whose other operands are ready by the end of the dot,
// runs right after the dot (node order may put other dots between them, as in a backward pass
// where a weight gradient's accumulation follows all of a step's dots): the code generator can
// then compute it inside the dot kernel, as the dot's epilogue, and the result is read while in
// cache.
void run_dot_consumers_after_their_dots(ScheduleBlock& block) {
  const FusionPlan& plan = block.fusion;
  const Graph& g = plan.graph;
  // The step producing each value (-1: ready before any step, as parameters are).
  std::vector<int> produced_by(g.nodes.size(), -1);
  auto buffer_of = [&](ValueId v) {
    while (plan.alias_of[static_cast<std::size_t>(v)] >= 0)
      v = plan.alias_of[static_cast<std::size_t>(v)];
    return v;
  };
  auto record = [&](std::size_t s) {
    const ScheduleStep& step = block.steps[s];
    if (step.kind == ScheduleStep::Kind::Kernel) {
      const FusionGroup& group = plan.groups[static_cast<std::size_t>(step.group)];
      produced_by[static_cast<std::size_t>(group.root)] = static_cast<int>(s);
      for (ValueId side : group.side_outputs)
        produced_by[static_cast<std::size_t>(side)] = static_cast<int>(s);
    } else if (step.node >= 0) {
      produced_by[static_cast<std::size_t>(step.node)] = static_cast<int>(s);
      for (std::size_t i = static_cast<std::size_t>(step.node) + 1;
           i < g.nodes.size() && g.nodes[i].op == OpKind::Result; ++i)
        produced_by[i] = static_cast<int>(s);
    }
  };
  for (std::size_t s = 0; s < block.steps.size(); ++s) record(s);
  for (std::size_t d = 0; d + 1 < block.steps.size(); ++d) {
    if (block.steps[d].kind != ScheduleStep::Kind::Kernel) continue;
    const FusionGroup& dot = plan.groups[static_cast<std::size_t>(block.steps[d].group)];
    if (dot.kind != FusionGroup::Kind::Dot) continue;
    for (std::size_t c = d + 1; c < block.steps.size(); ++c) {
      if (block.steps[c].kind != ScheduleStep::Kind::Kernel) continue;
      const FusionGroup& consumer = plan.groups[static_cast<std::size_t>(block.steps[c].group)];
      if (consumer.kind != FusionGroup::Kind::Loop) continue;
      bool reads_dot = false, ready = true;
      for (ValueId in : consumer.inputs) {
        const ValueId buffer = buffer_of(in);
        reads_dot = reads_dot || buffer == dot.root;
        ready = ready && produced_by[static_cast<std::size_t>(buffer)] <= static_cast<int>(d);
      }
      if (!reads_dot) continue;
      if (ready && c > d + 1) {
        ScheduleStep moved = std::move(block.steps[c]);
        block.steps.erase(block.steps.begin() + static_cast<std::ptrdiff_t>(c));
        block.steps.insert(block.steps.begin() + static_cast<std::ptrdiff_t>(d + 1),
                           std::move(moved));
        for (std::size_t s = d + 1; s <= c; ++s) record(s);  // the steps that moved
      }
      break;  // the first kernel reading the dot: moved or not, the dot has its candidate
    }
  }
}

}  // namespace

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
