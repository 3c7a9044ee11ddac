#include "weft/compile/fusion.h"

namespace weft {

Graph eliminate_dead_code(const Graph& graph) {
  std::vector<bool> live(graph.nodes.size(), false);
  for (ValueId o : graph.outputs) live[o] = true;
  for (ValueId p : graph.params) live[p] = true;  // parameters define the calling convention
  for (std::size_t i = graph.nodes.size(); i-- > 0;)
    if (live[i])
      for (ValueId in : graph.nodes[i].inputs) live[in] = true;
  Graph out;
  out.name = graph.name;
  std::vector<ValueId> remap(graph.nodes.size(), -1);
  for (std::size_t i = 0; i < graph.nodes.size(); ++i) {
    if (!live[i]) continue;
    Node n = graph.nodes[i];
    for (auto& in : n.inputs) in = remap[in];
    remap[i] = out.add(std::move(n));
  }
  for (ValueId p : graph.params) out.params.push_back(remap[p]);
  for (ValueId o : graph.outputs) out.outputs.push_back(remap[o]);
  return out;
}

}  // namespace weft
