#include "weft/compile/fusion.h"
#include "weft/ir/effects.h"
#include "weft/ir/walk.h"

namespace weft {
namespace {

Graph eliminate_dead_code_flat(Graph graph) {
  const std::size_t count = graph.nodes.size();
  std::vector<bool> live(count, false);
  for (ValueId o : graph.outputs) live[o] = true;
  for (ValueId p : graph.params) live[p] = true;  // parameters define the calling convention
  for (std::size_t i = count; i-- > 0;) {
    const Node& n = graph.nodes[i];
    // An effect always runs. A multi-result node lives while any of its results does, and
    // then keeps all of them: the results sit right after it and its regions return every one.
    if (is_multi_result(n.op)) {
      live[i] = live[i] || has_effect(n);
      for (std::size_t k = 0; k < n.results.size() && !live[i]; ++k) live[i] = live[i + 1 + k];
    }
    if (!live[i]) continue;
    if (is_multi_result(n.op))
      for (std::size_t k = 0; k < n.results.size(); ++k) live[i + 1 + k] = true;
    for (ValueId in : n.inputs) live[in] = true;
  }
  Graph out;
  out.name = std::move(graph.name);
  std::vector<ValueId> remap(count, -1);
  for (std::size_t i = 0; i < count; ++i) {
    if (!live[i]) continue;
    Node& n = graph.nodes[i];
    for (auto& in : n.inputs) in = remap[in];
    remap[i] = out.add(std::move(n));
  }
  for (ValueId p : graph.params) out.params.push_back(remap[p]);
  for (ValueId o : graph.outputs) out.outputs.push_back(remap[o]);
  return out;
}

}  // namespace

Graph eliminate_dead_code(const Graph& graph) {
  return rewrite_graphs(graph, eliminate_dead_code_flat);
}

}  // namespace weft
