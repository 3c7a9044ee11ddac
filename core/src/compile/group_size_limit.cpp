#include "compile/group_size_limit.h"

#include <algorithm>

#include "weft/compile/fusion.h"

namespace weft {

int kernel_size_weight(const Graph& graph, const Node& node) {
  if (node.op == OpKind::Parameter || node.op == OpKind::Constant) return 0;
  // A broadcast of a scalar is the scalar's own literal or load, unchanged.
  if (node.op == OpKind::BroadcastInDim && graph.node(node.inputs[0]).shape.empty()) return 0;
  return op_info(node.op).math_call ? kMathCallWeight : 1;
}

namespace detail {

GroupSizer::GroupSizer(const Graph& graph, const std::vector<bool>& has_buffer)
    : graph_(graph), has_buffer_(has_buffer), visited_(graph.nodes.size(), -1) {}

int GroupSizer::size_of(ValueId v) {
  ++stamp_;
  int size = 0;
  stack_.assign(1, v);
  visited_[v] = stamp_;
  while (!stack_.empty()) {
    const Node& n = graph_.node(stack_.back());
    stack_.pop_back();
    size += kernel_size_weight(graph_, n);
    for (ValueId in : n.inputs)
      if (!has_buffer_[in] && visited_[in] != stamp_) {
        visited_[in] = stamp_;
        stack_.push_back(in);
      }
  }
  return size;
}

int cut_oversized_groups(const Graph& graph, int limit, int reduction_copies,
                         std::vector<bool>& has_buffer, std::vector<bool>& is_root,
                         std::vector<std::string>& why_buffer) {
  const std::size_t n = graph.nodes.size();
  GroupSizer sizer(graph, has_buffer);
  // An upper bound of each node's group weight (exact where it was measured): the sum over
  // fused inputs overcounts shared producers, so only a bound above the limit is measured.
  std::vector<long long> bound(n, 0);
  int cuts = 0;
  for (std::size_t i = 0; i < n; ++i) {
    if (has_buffer[i] && !is_root[i]) continue;  // parameters and aliases of buffers
    const Node& node = graph.nodes[i];
    const auto v = static_cast<ValueId>(i);
    auto estimate = [&] {
      long long b = kernel_size_weight(graph, node);
      for (ValueId in : node.inputs)
        if (!has_buffer[in]) b += bound[in];
      return b;
    };
    // A reduction kernel holds several copies of its fused producers (unrolled loops).
    const int node_limit = is_reduction(node.op) ? limit / std::max(reduction_copies, 1) : limit;
    bound[i] = estimate();
    if (bound[i] <= node_limit) continue;
    int size = sizer.size_of(v);
    while (size > node_limit) {
      // Cut the heaviest input still fused (each weighs at most `limit`, as it was handled
      // before this node), so the fewest buffers bring this group under the limit.
      ValueId heaviest = -1;
      for (ValueId in : node.inputs)
        if (!has_buffer[in] && (heaviest < 0 || bound[in] > bound[heaviest])) heaviest = in;
      if (heaviest < 0) break;  // only this node is left: a single op cannot be cut
      has_buffer[heaviest] = true;
      is_root[heaviest] = true;
      why_buffer[heaviest] =
          "fusing it into " + std::string(op_name(node.op)) + " %" + std::to_string(i) +
          " would make a kernel larger than " + std::to_string(limit) +
          " (the kernel size limit, kMaxKernelOps" +
          (node_limit < limit ? "; a reduction kernel holds " + std::to_string(reduction_copies) +
                                    " copies of the ops fused into it)"
                              : ")");
      ++cuts;
      size = sizer.size_of(v);
    }
    bound[i] = size;
  }
  return cuts;
}

}  // namespace detail
}  // namespace weft
