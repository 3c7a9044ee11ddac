// Walking and rewriting graphs with the regions nested in them. Passes that work one graph
// at a time (DCE, canonicalisation, dot canonicalisation) are written for a flat graph and
// applied everywhere through rewrite_graphs; passes that need the nesting (verify, the
// printer, the interpreter) recurse through for_each_region.
#pragma once

#include <functional>

#include "weft/ir/graph.h"

namespace weft {

// Calls visit(graph, depth) on `graph` (depth 0) and on every region nested in it, each
// graph before its regions, regions in node order.
void for_each_graph(const Graph& graph, const std::function<void(const Graph&, int depth)>& visit);

// Calls visit(node_id, region_index, region) for each region of each node of `graph` (not
// recursively), in node order.
void for_each_region(
    const Graph& graph,
    const std::function<void(ValueId node, std::size_t index, const Graph&)>& visit);

// Rewrites `graph` bottom-up: the regions of its nodes first (recursively), then the graph
// itself, each by `rewrite`. Region signatures are the rewrite's responsibility to keep; the
// function's callback table is kept when `rewrite` drops it.
Graph rewrite_graphs(Graph graph, const std::function<Graph(Graph)>& rewrite);

// Total node count of `graph` and all its regions.
std::size_t total_nodes(const Graph& graph);

}  // namespace weft
