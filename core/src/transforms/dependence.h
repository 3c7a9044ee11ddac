// Which outputs of a graph depend on some of its parameters, without evaluating it: the
// control-flow rules need it before they trace anything (which loop carries get tangents or a
// batch axis, which branch outputs do).
#pragma once

#include <vector>

#include "weft/ir/graph.h"

namespace weft::detail {

enum class DependenceKind {
  tangent,  // only float values carry tangents; host functions' results never do
  batch,    // any value; a host op given a batched operand returns batched results
};

// For each output of g: whether it may depend on a parameter marked in `marked` (one flag per
// parameter). An over-approximation: a control op passes a dependence to all its results.
std::vector<bool> dependent_outputs(const Graph& g, const std::vector<bool>& marked,
                                    DependenceKind kind);

// For a loop body whose carries are parameters [first, first + count) and outputs [0, count):
// widens the carries' flags in `marked` (one per parameter) until the body maps them onto
// themselves (a carry whose next value depends on a marked value is marked from the first
// iteration on). Returns the body's output flags at that fixpoint.
std::vector<bool> widen_carries(const Graph& body, std::vector<bool>& marked, std::size_t first,
                                std::size_t count, DependenceKind kind);

}  // namespace weft::detail
