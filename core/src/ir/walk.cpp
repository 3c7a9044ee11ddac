#include "weft/ir/walk.h"

namespace weft {
namespace {

void visit_nested(const Graph& graph, int depth,
                  const std::function<void(const Graph&, int)>& visit) {
  visit(graph, depth);
  for (const Node& n : graph.nodes)
    for (const Graph& region : n.regions) visit_nested(region, depth + 1, visit);
}

}  // namespace

void for_each_graph(const Graph& graph, const std::function<void(const Graph&, int depth)>& visit) {
  visit_nested(graph, 0, visit);
}

void for_each_region(
    const Graph& graph,
    const std::function<void(ValueId node, std::size_t index, const Graph&)>& visit) {
  for (std::size_t i = 0; i < graph.nodes.size(); ++i)
    for (std::size_t r = 0; r < graph.nodes[i].regions.size(); ++r)
      visit(static_cast<ValueId>(i), r, graph.nodes[i].regions[r]);
}

Graph rewrite_graphs(Graph graph, const std::function<Graph(Graph)>& rewrite) {
  for (Node& n : graph.nodes)
    for (Graph& region : n.regions) region = rewrite_graphs(std::move(region), rewrite);
  // Flat passes build new graphs; the callback table stays with the function.
  std::vector<std::shared_ptr<const HostCallback>> callbacks = graph.callbacks;
  Graph out = rewrite(std::move(graph));
  if (out.callbacks.empty()) out.callbacks = std::move(callbacks);
  return out;
}

std::size_t total_nodes(const Graph& graph) {
  std::size_t count = 0;
  for_each_graph(graph, [&](const Graph& g, int) { count += g.nodes.size(); });
  return count;
}

}  // namespace weft
