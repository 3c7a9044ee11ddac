#include "transforms/dependence.h"

#include "transforms/jvp_rules.h"

namespace weft::detail {

std::vector<bool> dependent_outputs(const Graph& g, const std::vector<bool>& marked,
                                    DependenceKind kind) {
  const auto carries = [kind](const TensorType& t) {
    return kind == DependenceKind::batch || has_tangent(t.dtype);
  };
  std::vector<bool> depends(g.nodes.size(), false);
  for (std::size_t i = 0; i < g.params.size() && i < marked.size(); ++i) {
    const auto id = static_cast<std::size_t>(g.params[i]);
    depends[id] = marked[i] && carries(g.nodes[id].type());
  }
  std::vector<bool> multi_depends(g.nodes.size(), false);  // per multi-result node
  for (std::size_t id = 0; id < g.nodes.size(); ++id) {
    const Node& n = g.nodes[id];
    if (n.op == OpKind::Parameter) continue;
    if (n.op == OpKind::Result) {
      const auto owner = static_cast<std::size_t>(n.inputs.at(0));
      const Node& multi = g.nodes[owner];
      const auto k = static_cast<std::size_t>(n.attrs.get_int("index"));
      depends[id] = multi_depends[owner] && k < multi.results.size() && carries(multi.results[k]);
      continue;
    }
    bool any = false;
    for (ValueId input : n.inputs) any = any || depends[static_cast<std::size_t>(input)];
    if (is_host_op(n.op))
      multi_depends[id] = any && kind == DependenceKind::batch;
    else if (is_control(n.op))
      multi_depends[id] = any;
    else
      depends[id] = any && carries(n.type());
  }
  std::vector<bool> out;
  out.reserve(g.outputs.size());
  for (ValueId o : g.outputs) out.push_back(depends[static_cast<std::size_t>(o)]);
  return out;
}

std::vector<bool> widen_carries(const Graph& body, std::vector<bool>& marked, std::size_t first,
                                std::size_t count, DependenceKind kind) {
  for (;;) {
    std::vector<bool> out = dependent_outputs(body, marked, kind);
    bool changed = false;
    for (std::size_t j = 0; j < count; ++j)
      if (out[j] && !marked[first + j]) marked[first + j] = changed = true;
    if (!changed) return out;
  }
}

}  // namespace weft::detail
