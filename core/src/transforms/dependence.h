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

}  // namespace weft::detail
