#include "weft/compile/schedule.h"

#include <algorithm>

namespace weft {
namespace {

ScheduleStep::Kind control_kind(OpKind op) {
  switch (op) {
    case OpKind::Scan:
      return ScheduleStep::Kind::Loop;
    case OpKind::While:
      return ScheduleStep::Kind::While;
    default:
      return ScheduleStep::Kind::Cond;
  }
}

ScheduleBlock lower_block(Graph graph, const FusionOptions& options) {
  ScheduleBlock block;
  block.fusion = plan_fusion_of_optimized(std::move(graph), options);
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
  for (std::size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& n = g.nodes[i];
    if (!is_control(n.op)) continue;
    ScheduleStep step;
    step.kind = control_kind(n.op);
    step.node = static_cast<ValueId>(i);
    for (const Graph& region : n.regions) step.regions.push_back(lower_block(region, options));
    steps.emplace_back(static_cast<ValueId>(i), std::move(step));
  }
  std::stable_sort(steps.begin(), steps.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  for (auto& [at, step] : steps) block.steps.push_back(std::move(step));
  return block;
}

}  // namespace

ScheduleBlock lower_to_schedule(const Graph& graph, const FusionOptions& options) {
  verify(graph);
  Graph optimized = canonicalize_dots(eliminate_dead_code(graph));
  return lower_block(std::move(optimized), options);
}

int count_kernel_steps(const ScheduleBlock& block) {
  int count = 0;
  for (const ScheduleStep& step : block.steps) {
    if (step.kind == ScheduleStep::Kind::Kernel) ++count;
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
    case ScheduleStep::Kind::While:
      return "while";
    case ScheduleStep::Kind::Cond:
      return "cond";
  }
  return "?";
}

}  // namespace weft
