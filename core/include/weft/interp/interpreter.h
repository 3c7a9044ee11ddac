// The reference interpreter: evaluates a Graph on the host, one node at a time, with the exact
// semantics the OpenCL code generator implements. Slow and simple on purpose: it is the oracle
// every device result is tested against.
#pragma once

#include <span>
#include <vector>

#include "weft/host_array.h"
#include "weft/ir/graph.h"

namespace weft {

// Runs `graph` on `inputs` (one per parameter, matching its dtype and shape) and returns the
// values of graph.outputs in order. Throws InvalidArgumentError for a wrong input count, dtype
// or shape, and InvalidGraphError for a graph that fails verify().
std::vector<HostArray> interpret(const Graph& graph, std::span<const HostArray> inputs);

}  // namespace weft
