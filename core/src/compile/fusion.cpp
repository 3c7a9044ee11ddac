#include "weft/compile/fusion.h"

#include <algorithm>
#include <set>

namespace weft {
namespace {

// Duplicating a producer into several kernels is cheaper than a buffer round trip only while
// the producer is cheap; beyond this many weighted ops it gets its own buffer.
constexpr int kMaxDuplicatedCost = 8;
// A producer feeding a broadcast is recomputed for every broadcast copy; past this cost it
// is materialised at its own (smaller) size instead.
constexpr int kMaxBroadcastCost = 2;

int op_cost(OpKind op) {
  switch (op_info(op).op_class) {
    case OpClass::Leaf:
    case OpClass::Layout:
    case OpClass::Convert:
    case OpClass::Select:
      return 0;
    case OpClass::Unary:
      return op == OpKind::Neg || op == OpKind::Abs || op == OpKind::Not ? 1 : 4;
    case OpClass::Binary:
      return op == OpKind::Pow || op == OpKind::Atan2 || op == OpKind::Div || op == OpKind::Rem ? 4
                                                                                                : 1;
    default:
      return 1;
  }
}

}  // namespace

FusionPlan plan_fusion(const Graph& input) {
  FusionPlan plan;
  plan.graph = canonicalize_dots(eliminate_dead_code(input));
  const Graph& g = plan.graph;
  const std::size_t n = g.nodes.size();

  std::vector<std::vector<ValueId>> users(n);
  for (std::size_t i = 0; i < n; ++i)
    for (ValueId in : g.nodes[i].inputs) users[in].push_back(static_cast<ValueId>(i));
  std::vector<bool> is_param(n, false), is_root(n, false);
  plan.alias_of.assign(n, -1);
  for (ValueId p : g.params) is_param[p] = true;
  // Reductions and dots always write buffers of their own.
  auto writes_buffer = [&](ValueId v) {
    return is_param[v] || is_reduction(g.nodes[v].op) || g.nodes[v].op == OpKind::DotGeneral;
  };
  for (ValueId o : g.outputs) {
    if (is_param[o]) continue;
    const Node& out = g.nodes[o];
    if (out.op == OpKind::Reshape && writes_buffer(out.inputs[0])) {
      plan.alias_of[o] = out.inputs[0];
    } else {
      is_root[o] = true;
    }
  }
  for (std::size_t i = 0; i < n; ++i) {
    const Node& node = g.nodes[i];
    if (is_reduction(node.op) || node.op == OpKind::DotGeneral) is_root[i] = true;
    // A dot reads each operand element many times: operands must be buffers. A reshape of a
    // parameter or of another kernel's result already is one, viewed with another shape.
    if (node.op == OpKind::DotGeneral)
      for (ValueId in : node.inputs) {
        if (is_param[in] || is_root[in]) continue;
        const Node& operand = g.nodes[in];
        const bool view = operand.op == OpKind::Reshape &&
                          (is_param[operand.inputs[0]] || is_root[operand.inputs[0]]);
        if (view) {
          plan.alias_of[in] = operand.inputs[0];
        } else {
          is_root[in] = true;
        }
      }
  }

  // Weighted op count of each node's fused producer tree, stopping at buffers.
  std::vector<int> cost(n, 0);
  for (std::size_t i = 0; i < n; ++i) {
    if (is_param[i] || plan.alias_of[i] >= 0) continue;
    int c = op_cost(g.nodes[i].op);
    for (ValueId in : g.nodes[i].inputs)
      if (!is_param[in] && !is_root[in]) c += cost[in];
    cost[i] = std::min(c, 1 << 20);
  }

  // Walk users before producers, deciding which kernels compute each node.
  std::vector<std::set<ValueId>> groups_of(n);
  for (std::size_t i = n; i-- > 0;) {
    if (is_param[i] || plan.alias_of[i] >= 0) continue;
    if (is_root[i]) {
      groups_of[i] = {static_cast<ValueId>(i)};
      continue;
    }
    std::set<ValueId> groups;
    bool feeds_broadcast = false;
    for (ValueId u : users[i]) {
      if (is_root[u]) {
        groups.insert(u);
      } else {
        groups.insert(groups_of[u].begin(), groups_of[u].end());
      }
      const Node& user = g.nodes[u];
      if (user.op == OpKind::BroadcastInDim &&
          num_elements(user.shape) > num_elements(g.nodes[i].shape))
        feeds_broadcast = true;
    }
    const bool too_costly_to_copy = groups.size() > 1 && cost[i] > kMaxDuplicatedCost;
    const bool too_costly_to_broadcast = feeds_broadcast && cost[i] > kMaxBroadcastCost;
    if (too_costly_to_copy || too_costly_to_broadcast) {
      is_root[i] = true;
      groups_of[i] = {static_cast<ValueId>(i)};
    } else {
      groups_of[i] = std::move(groups);
    }
  }

  plan.has_buffer.assign(n, false);
  for (std::size_t i = 0; i < n; ++i)
    plan.has_buffer[i] = is_param[i] || is_root[i] || plan.alias_of[i] >= 0;
  for (std::size_t r = 0; r < n; ++r) {
    if (!is_root[r]) continue;
    FusionGroup group;
    group.root = static_cast<ValueId>(r);
    const Node& root = g.nodes[r];
    group.kind = is_reduction(root.op)           ? FusionGroup::Kind::Reduce
                 : root.op == OpKind::DotGeneral ? FusionGroup::Kind::Dot
                                                 : FusionGroup::Kind::Loop;
    for (std::size_t v = 0; v <= r; ++v)
      if (v == r || (!plan.has_buffer[v] && groups_of[v].count(group.root)))
        group.members.push_back(static_cast<ValueId>(v));
    for (ValueId m : group.members)
      for (ValueId in : g.nodes[m].inputs)
        if (plan.has_buffer[in] && in != group.root &&
            std::find(group.inputs.begin(), group.inputs.end(), in) == group.inputs.end())
          group.inputs.push_back(in);
    plan.groups.push_back(std::move(group));
  }
  return plan;
}

}  // namespace weft
