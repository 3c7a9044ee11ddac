#include "compile/group_size_limit.h"

#include <algorithm>
#include <cstdint>
#include <unordered_set>

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

InlinedSizer::InlinedSizer(const Graph& graph, const std::vector<bool>& has_buffer)
    : graph_(graph), has_buffer_(has_buffer) {}

long long InlinedSizer::size_of(ValueId v, long long cap) {
  // A state is a node and the path of index-changing reads that reached it (hashed); an
  // element-wise op reads its operands at its own index, so it keeps the path.
  struct State {
    ValueId node;
    std::uint64_t path;
  };
  auto key = [](const State& s) {
    return (s.path * 0x9E3779B97F4A7C15ULL) ^ static_cast<std::uint64_t>(s.node);
  };
  std::unordered_set<std::uint64_t> seen;
  std::vector<State> stack{{v, 0}};
  seen.insert(key(stack.back()));
  long long size = 0;
  while (!stack.empty() && size <= cap) {
    const State at = stack.back();
    stack.pop_back();
    const Node& n = graph_.node(at.node);
    size += kernel_size_weight(graph_, n);
    const bool same_index = is_elementwise(n.op);
    for (std::size_t k = 0; k < n.inputs.size(); ++k) {
      const ValueId in = n.inputs[k];
      if (has_buffer_[in]) continue;
      std::uint64_t path = at.path;
      if (graph_.node(in).shape.empty()) {
        path = 0;  // a scalar reads the same element from anywhere
      } else if (!same_index) {
        path = (path + 1) * 0x100000001B3ULL ^
               (static_cast<std::uint64_t>(at.node) << 8 | static_cast<std::uint64_t>(k));
      }
      const State next{in, path};
      if (seen.insert(key(next)).second) stack.push_back(next);
    }
  }
  return size;
}

int cut_oversized_groups(const Graph& graph, int limit, int reduction_copies, int inlined_factor,
                         std::vector<bool>& has_buffer, std::vector<bool>& is_root,
                         std::vector<std::string>& why_buffer) {
  const std::size_t n = graph.nodes.size();
  GroupSizer sizer(graph, has_buffer);
  InlinedSizer inlined(graph, has_buffer);
  // Every path through the fused producers, an upper bound of the emitted code's weight.
  std::vector<long long> paths(n, 0);
  const long long inlined_limit = static_cast<long long>(limit) * inlined_factor;
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
  // Then the emitted code: a producer read at many indices is cut into a buffer read instead.
  for (std::size_t i = 0; i < n; ++i) {
    if (has_buffer[i] && !is_root[i]) continue;
    const Node& node = graph.nodes[i];
    const auto v = static_cast<ValueId>(i);
    auto estimate = [&] {
      long long p = kernel_size_weight(graph, node);
      for (ValueId in : node.inputs)
        if (!has_buffer[in]) p = std::min(p + paths[in], 1LL << 40);
      return p;
    };
    paths[i] = estimate();
    if (paths[i] <= inlined_limit) continue;
    long long size = inlined.size_of(v, inlined_limit);
    while (size > inlined_limit) {
      ValueId heaviest = -1;
      for (ValueId in : node.inputs)
        if (!has_buffer[in] && (heaviest < 0 || paths[in] > paths[heaviest])) heaviest = in;
      if (heaviest < 0) break;
      has_buffer[heaviest] = true;
      is_root[heaviest] = true;
      why_buffer[heaviest] = "fusing it into " + std::string(op_name(node.op)) + " %" +
                             std::to_string(i) + " would emit more than " +
                             std::to_string(inlined_limit) +
                             " ops of code (it is read at many different indices; the kernel "
                             "size limit, kMaxKernelOps x " +
                             std::to_string(inlined_factor) + ")";
      ++cuts;
      size = inlined.size_of(v, inlined_limit);
    }
    paths[i] = estimate();
  }
  return cuts;
}

}  // namespace detail
}  // namespace weft
