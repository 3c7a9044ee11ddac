// Fusion planning: partitions a graph into kernels. Elementwise ops, broadcasts, iota,
// select, converts and layout ops fuse into their consumer (each kernel computes its output
// element by element and pulls operands through index arithmetic); reductions fuse their
// producers; dot_general is its own kernel. Buffers exist only at group boundaries.
#pragma once

#include <vector>

#include "weft/ir/graph.h"

namespace weft {

struct FusionGroup {
  enum class Kind { Loop, Reduce, Dot };
  Kind kind = Kind::Loop;
  ValueId root = -1;             // the node the kernel writes to its buffer
  std::vector<ValueId> members;  // nodes computed inside the kernel, topological, root last
  std::vector<ValueId> inputs;   // buffers read: parameters or roots of earlier groups
};

struct FusionPlan {
  Graph graph;                      // the optimised graph the groups refer to
  std::vector<FusionGroup> groups;  // in dependency order
  std::vector<bool> has_buffer;     // per node: a parameter, a group root or an alias
  // Per node: the node whose buffer it shares (a row-major reshape of a buffer is a view, not
  // a copy), or -1.
  std::vector<ValueId> alias_of;
};

// Removes nodes that no output depends on (effects, when they arrive, are never removed).
Graph eliminate_dead_code(const Graph& graph);

// Rewrites every dot_general into the canonical batched form [B,M,K] x [B,K,N] -> [B,M,N]
// (lhs_batch=rhs_batch=[0], lhs_contracting=[2], rhs_contracting=[1]) surrounded by
// transposes and reshapes, so codegen needs only one dot kernel.
Graph canonicalize_dots(const Graph& graph);
bool is_canonical_dot(const Node& node);

// DCE, dot canonicalisation, then grouping.
FusionPlan plan_fusion(const Graph& graph);

}  // namespace weft
