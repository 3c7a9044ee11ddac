// Cutting fused groups that would make kernels too large to compile in linear time (see
// kMaxKernelOps). Private to core/compile.
#pragma once

#include <string>
#include <vector>

#include "weft/ir/graph.h"

namespace weft::detail {

// The weight of node v's fused group if it were a root: kernel_size_weight summed over v and
// the producers it would compute, stopping at nodes with `has_buffer` set. Each node counts
// once however many paths reach it.
class GroupSizer {
 public:
  GroupSizer(const Graph& graph, const std::vector<bool>& has_buffer);
  int size_of(ValueId v);

 private:
  const Graph& graph_;
  const std::vector<bool>& has_buffer_;
  std::vector<int> visited_;  // stamp per node: visited in the walk with that stamp
  int stamp_ = 0;
  std::vector<ValueId> stack_;
};

// The weight of the code a kernel rooted at v would emit: a producer read at several different
// indices (through slices, pads, concatenations, ...) is emitted once per index, so a chain of
// such reads can emit far more code than its distinct nodes weigh (an associative scan's
// even/odd rounds: exponential in its depth). Counts (node, index path) pairs; stops counting
// past `cap`.
class InlinedSizer {
 public:
  InlinedSizer(const Graph& graph, const std::vector<bool>& has_buffer);
  long long size_of(ValueId v, long long cap);

 private:
  const Graph& graph_;
  const std::vector<bool>& has_buffer_;
};

// Marks cut points as buffers (in `has_buffer` and `is_root`, with a reason in `why_buffer`)
// until no node's fused group weighs more than `limit` (a reduction's `reduction_copies`
// times its group's weight): walking the graph in order, a node whose group would be too
// heavy has its heaviest fused inputs cut first. The same for groups whose emitted code
// (InlinedSizer) weighs more than `inlined_factor` times the limit. Returns the number of cuts.
int cut_oversized_groups(const Graph& graph, int limit, int reduction_copies, int inlined_factor,
                         std::vector<bool>& has_buffer, std::vector<bool>& is_root,
                         std::vector<std::string>& why_buffer);

}  // namespace weft::detail
