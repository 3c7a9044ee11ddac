// What running a graph on the reference interpreter would cost, so that a device can run a
// program's first calls there while its kernels build (tiered execution, docs/runtime.md).
#pragma once

#include <string>

#include "weft/ir/graph.h"

namespace weft {

struct InterpretationEstimate {
  // False when the interpreter cannot run the graph where a device could: a host_call (its
  // callback runs on the device's receiver threads, with their nesting rules) or a pmap
  // collective. `why_not` then names the op and its source line.
  bool possible = true;
  std::string why_not;
  // The work, in element operations (one elementwise step of the interpreter, some 12 ns):
  // an elementwise op's elements, a reduction's inputs, a dot's or convolution's multiply-adds
  // (cheaper each), a sort's n log n, a fixed cost per node, loop bodies times their trip
  // counts (a while loop's is unknown: kAssumedWhileTrips).
  double element_ops = 0;
  bool has_while = false;  // the estimate assumed a while loop's trip count
};

inline constexpr double kAssumedWhileTrips = 100;

InterpretationEstimate estimate_interpretation(const Graph& graph);

}  // namespace weft
