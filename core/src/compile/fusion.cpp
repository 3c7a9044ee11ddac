#include "weft/compile/fusion.h"

#include <algorithm>
#include <set>

#include "compile/group_size_limit.h"

namespace weft {

const char* FusionGroup::kind_name(Kind kind) {
  switch (kind) {
    case Kind::Loop:
      return "loop";
    case Kind::Reduce:
      return "reduce";
    case Kind::Dot:
      return "dot";
    case Kind::Own:
      return "own";
  }
  return "?";
}
namespace {

// Duplicating a producer into several kernels is cheaper than a buffer round trip only while
// the producer is cheap; beyond this many weighted ops it gets its own buffer.
constexpr int kMaxDuplicatedCost = 8;
// A producer feeding a broadcast is recomputed for every broadcast copy; past this cost it
// is materialised at its own (smaller) size instead.
constexpr int kMaxBroadcastCost = 2;
// Multi-output fusion decisions per graph (each re-assigns the groups).
constexpr int kMaxSideOutputs = 32;

// The planner's working state: which nodes have buffers, and why.
struct Planner {
  const Graph& g;
  std::size_t n;
  std::vector<std::vector<ValueId>> users;
  // is_param: a buffer made outside this graph's kernels (a parameter, a control or host node
  // and its results, a token).
  std::vector<bool> is_param, is_root;
  std::vector<ValueId> alias_of;
  // Per node: the reduction root whose kernel computes it and writes its buffer, or -1.
  std::vector<ValueId> side_of;
  std::vector<std::string> why_buffer;       // per root
  std::vector<std::set<ValueId>> groups_of;  // per node: the roots of the kernels computing it

  explicit Planner(const Graph& graph)
      : g(graph),
        n(graph.nodes.size()),
        users(n),
        is_param(n, false),
        is_root(n, false),
        alias_of(n, -1),
        side_of(n, -1),
        why_buffer(n),
        groups_of(n) {
    for (std::size_t i = 0; i < n; ++i)
      for (ValueId in : g.nodes[i].inputs) users[in].push_back(static_cast<ValueId>(i));
    for (ValueId p : g.params) is_param[p] = true;
    for (std::size_t i = 0; i < n; ++i) {
      const OpKind op = g.nodes[i].op;
      if (is_multi_result(op) || op == OpKind::Result || op == OpKind::AfterAll) is_param[i] = true;
    }
  }

  void make_root(std::size_t v, std::string why) {
    if (is_root[v]) return;
    is_root[v] = true;
    why_buffer[v] = std::move(why);
  }

  // Outputs, reductions, dots and dot operands: buffers whatever the costs.
  void mark_required_roots() {
    // Reductions, dots and ops with kernels of their own always write buffers of their own.
    auto writes_buffer = [&](ValueId v) {
      const OpKind op = g.nodes[v].op;
      return is_param[v] || is_reduction(op) || op == OpKind::DotGeneral || op_info(op).own_kernel;
    };
    for (ValueId o : g.outputs) {
      if (is_param[o]) continue;
      const Node& out = g.nodes[o];
      if (out.op == OpKind::Reshape && writes_buffer(out.inputs[0])) {
        alias_of[o] = out.inputs[0];
      } else {
        make_root(o, "it is a graph output");
      }
    }
    for (std::size_t i = 0; i < n; ++i) {
      const Node& node = g.nodes[i];
      // A control step reads whole buffers (it passes them to its regions), a host step sends
      // them to the host.
      if (is_multi_result(node.op))
        for (ValueId in : node.inputs)
          if (!is_param[in])
            make_root(in, "it is an operand of a " + std::string(op_name(node.op)));
      if (is_reduction(node.op)) make_root(i, "it is a reduction (its own kernel)");
      if (node.op == OpKind::DotGeneral) make_root(i, "it is a dot_general (its own kernel)");
      // An op with a kernel of its own reads its operands from buffers (a scan or a sort reads
      // each element in several passes); a reshape of a buffer is a view of it.
      if (op_info(node.op).own_kernel) {
        make_root(i, "it is a " + std::string(op_name(node.op)) + " (its own kernel)");
        for (ValueId in : node.inputs) {
          if (is_param[in] || is_root[in] || alias_of[in] >= 0) continue;
          const Node& operand = g.nodes[in];
          if (operand.op == OpKind::Reshape &&
              (is_param[operand.inputs[0]] || is_root[operand.inputs[0]])) {
            alias_of[in] = operand.inputs[0];
          } else {
            make_root(in, "it is an operand of a " + std::string(op_name(node.op)) +
                              " (which runs in its own kernel)");
          }
        }
      }
      // A dot reads each operand element many times: operands must be buffers. A reshape of
      // a parameter or of another kernel's result already is one, viewed with another shape;
      // a reshape of anything else views its operand's buffer, written with the same elements
      // as a copy would be (several dots of one operand would otherwise copy it once each).
      if (node.op == OpKind::DotGeneral)
        for (ValueId in : node.inputs) {
          if (is_param[in] || is_root[in] || alias_of[in] >= 0) continue;
          const Node& operand = g.nodes[in];
          if (operand.op == OpKind::Reshape) {
            const ValueId viewed = operand.inputs[0];
            if (!is_param[viewed] && !is_root[viewed] && alias_of[viewed] < 0)
              make_root(viewed, "it is a dot_general operand (read many times per element)");
            alias_of[in] = viewed;
          } else {
            make_root(in, "it is a dot_general operand (read many times per element)");
          }
        }
    }
  }

  // Own-kernel ops of one family on the same operands and attributes (lu, lu_pivots,
  // lu_permutation) run as one kernel: the first of them writes the others, one of each op, as
  // side outputs.
  void share_own_kernels() {
    struct Shared {
      std::size_t root;
      std::vector<OpKind> ops;  // the root's and its side outputs'
    };
    std::vector<Shared> kernels;
    for (std::size_t i = 0; i < n; ++i) {
      const Node& node = g.nodes[i];
      const std::string_view family = op_info(node.op).own_kernel_family;
      if (family.empty() || !is_root[i]) continue;
      const auto shared = std::find_if(kernels.begin(), kernels.end(), [&](const Shared& k) {
        const Node& first = g.nodes[k.root];
        return op_info(first.op).own_kernel_family == family && first.inputs == node.inputs &&
               first.attrs == node.attrs &&
               std::find(k.ops.begin(), k.ops.end(), node.op) == k.ops.end();
      });
      if (shared == kernels.end()) {
        kernels.push_back({i, {node.op}});
        continue;
      }
      shared->ops.push_back(node.op);
      is_root[i] = false;
      side_of[i] = static_cast<ValueId>(shared->root);
    }
  }

  // Walks users before producers, deciding which kernels compute each node; makes a node a
  // root when copying it into several kernels, or once per broadcast element, costs too much.
  void assign_groups() {
    // Weighted op count of each node's fused producer tree, stopping at buffers.
    std::vector<int> cost(n, 0);
    for (std::size_t i = 0; i < n; ++i) {
      if (is_param[i] || alias_of[i] >= 0) continue;
      int c = op_info(g.nodes[i].op).fusion_cost;
      for (ValueId in : g.nodes[i].inputs)
        if (!is_param[in] && !is_root[in] && side_of[in] < 0) c += cost[in];
      cost[i] = std::min(c, 1 << 20);
    }
    for (std::size_t i = n; i-- > 0;) {
      if (is_param[i] || alias_of[i] >= 0) continue;
      if (is_root[i]) {
        groups_of[i] = {static_cast<ValueId>(i)};
        continue;
      }
      if (side_of[i] >= 0) {
        groups_of[i] = {side_of[i]};
        continue;
      }
      std::set<ValueId> groups;
      bool feeds_broadcast = false;
      for (ValueId u : users[i]) {
        if (is_root[u]) {
          groups.insert(u);
        } else if (side_of[u] >= 0) {
          groups.insert(side_of[u]);
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
        make_root(i, too_costly_to_copy
                         ? "it is used by " + std::to_string(groups.size()) +
                               " kernels and costs " + std::to_string(cost[i]) + " > " +
                               std::to_string(kMaxDuplicatedCost) + " to recompute in each"
                         : "it feeds a broadcast and costs " + std::to_string(cost[i]) + " > " +
                               std::to_string(kMaxBroadcastCost) +
                               " to recompute per broadcast element");
        groups_of[i] = {static_cast<ValueId>(i)};
      } else {
        groups_of[i] = std::move(groups);
      }
    }
  }

  std::vector<bool> has_buffer() const {
    std::vector<bool> has(n, false);
    for (std::size_t i = 0; i < n; ++i)
      has[i] = is_param[i] || is_root[i] || alias_of[i] >= 0 || side_of[i] >= 0;
    return has;
  }

  // Multi-output fusion. A producer computed both in a reduction's kernel and, again, in
  // later kernels becomes the reduction kernel's second output when it holds a transcendental
  // or a division (recomputing it costs more than writing and reading it back), the reduction
  // visits each of its elements (it reaches the reduced operand through elementwise ops of the
  // operand's shape), and every other kernel using it runs after the reduction. Chooses the
  // last such node (a costly node's costly producers then stop being shared) and returns
  // whether there was one; the groups must then be assigned again.
  bool choose_side_output() {
    std::vector<bool> costly(n, false);
    for (std::size_t i = 0; i < n; ++i) {
      if (is_param[i] || alias_of[i] >= 0 || is_root[i] || side_of[i] >= 0) continue;
      costly[i] = op_info(g.nodes[i].op).fusion_cost >= 4;
      for (ValueId in : g.nodes[i].inputs) costly[i] = costly[i] || costly[in];
    }
    for (std::size_t i = n; i-- > 0;) {
      if (!costly[i] || groups_of[i].size() < 2 || side_of[i] >= 0) continue;
      if (g.nodes[i].dtype == DType::Bool || g.nodes[i].dtype == DType::Token) continue;
      ValueId reduction = -1;
      for (ValueId root : groups_of[i])
        if (is_reduction(g.nodes[root].op)) reduction = reduction < 0 ? root : -2;
      if (reduction < 0) continue;
      bool later = true;
      for (ValueId root : groups_of[i]) later = later && (root == reduction || root > reduction);
      if (!later || !aligned_with_operand(static_cast<ValueId>(i), reduction)) continue;
      side_of[i] = reduction;
      return true;
    }
    return false;
  }

  // Whether `reduction`'s operand is `v` or reaches it through elementwise ops of its shape
  // that its kernel computes (so the kernel computes every element of v once).
  bool aligned_with_operand(ValueId v, ValueId reduction) const {
    const ValueId operand = g.nodes[reduction].inputs[0];
    const Shape& shape = g.nodes[operand].shape;
    if (g.nodes[v].shape != shape) return false;
    std::vector<ValueId> work{operand};
    std::set<ValueId> seen;
    while (!work.empty()) {
      const ValueId at = work.back();
      work.pop_back();
      if (at == v) return true;
      if (!seen.insert(at).second || is_param[at] || is_root[at] || alias_of[at] >= 0) continue;
      const Node& node = g.nodes[at];
      if (node.shape != shape || !is_elementwise(node.op)) continue;
      for (ValueId in : node.inputs) work.push_back(in);
    }
    return false;
  }
  // Control and host nodes have no buffer of their own (their results do) but, like buffers,
  // end every kernel's producer tree.
  std::vector<bool> has_buffer_for_plan() const {
    std::vector<bool> has = has_buffer();
    for (std::size_t i = 0; i < n; ++i)
      if (is_multi_result(g.nodes[i].op)) has[i] = false;
    return has;
  }
};

}  // namespace

FusionPlan plan_fusion_of_optimized(Graph graph, const FusionOptions& options) {
  FusionPlan plan;
  plan.graph = std::move(graph);
  const Graph& g = plan.graph;
  Planner planner(g);
  planner.mark_required_roots();
  planner.share_own_kernels();
  planner.assign_groups();
  if (options.max_kernel_ops > 0) {
    // Cutting only adds buffers, so assigning again only splits groups further.
    std::vector<bool> has_buffer = planner.has_buffer();
    if (detail::cut_oversized_groups(g, options.max_kernel_ops, options.reduction_body_copies,
                                     kMaxInlinedFactor, has_buffer, planner.is_root,
                                     planner.why_buffer) > 0)
      planner.assign_groups();
  }
  // Each choice can end the sharing of others; a bound keeps huge graphs linear.
  for (int chosen = 0; chosen < kMaxSideOutputs && planner.choose_side_output(); ++chosen)
    planner.assign_groups();
  plan.alias_of = planner.alias_of;
  plan.has_buffer = planner.has_buffer_for_plan();

  // Members of each root's kernel, in node order, gathered in one pass over the nodes.
  std::vector<int> group_index(g.nodes.size(), -1);
  for (std::size_t r = 0; r < g.nodes.size(); ++r) {
    if (!planner.is_root[r]) continue;
    group_index[r] = static_cast<int>(plan.groups.size());
    FusionGroup group;
    group.root = static_cast<ValueId>(r);
    const Node& root = g.nodes[r];
    group.kind = is_reduction(root.op)           ? FusionGroup::Kind::Reduce
                 : root.op == OpKind::DotGeneral ? FusionGroup::Kind::Dot
                 : op_info(root.op).own_kernel   ? FusionGroup::Kind::Own
                                                 : FusionGroup::Kind::Loop;
    group.why_buffer = planner.why_buffer[r];
    plan.groups.push_back(std::move(group));
  }
  for (std::size_t v = 0; v < g.nodes.size(); ++v) {
    if (planner.is_root[v]) {
      plan.groups[group_index[v]].members.push_back(static_cast<ValueId>(v));
    } else if (const ValueId computed_by = planner.side_of[v]; computed_by >= 0) {
      FusionGroup& group = plan.groups[group_index[computed_by]];
      group.members.push_back(static_cast<ValueId>(v));
      group.side_outputs.push_back(static_cast<ValueId>(v));
    } else if (!plan.has_buffer[v] && !is_multi_result(g.nodes[v].op)) {
      for (ValueId root : planner.groups_of[v])
        plan.groups[group_index[root]].members.push_back(static_cast<ValueId>(v));
    }
  }
  for (FusionGroup& group : plan.groups) {
    std::set<ValueId> seen;
    const int copies =
        group.kind == FusionGroup::Kind::Reduce ? std::max(options.reduction_body_copies, 1) : 1;
    for (ValueId m : group.members) {
      group.size += kernel_size_weight(g, g.nodes[m]) * (m == group.root ? 1 : copies);
      for (ValueId in : g.nodes[m].inputs)
        if (plan.has_buffer[in] && in != group.root && planner.side_of[in] != group.root &&
            seen.insert(in).second)
          group.inputs.push_back(in);
    }
  }
  return plan;
}

}  // namespace weft
