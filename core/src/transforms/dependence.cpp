#include "transforms/dependence.h"

#include <algorithm>

#include "ir/graph_evaluator.h"
#include "transforms/jvp_rules.h"

namespace weft::detail {

namespace {

// Whether a value may depend on a marked parameter (a struct: std::vector<bool> has no
// addressable elements for the evaluator's operand pointers).
struct Dependence {
  bool depends = false;
};

struct DependenceHooks {
  const std::vector<bool>& marked;
  DependenceKind kind;

  bool carries(const TensorType& t) const {
    return kind == DependenceKind::batch || has_tangent(t.dtype);
  }
  static bool any(OperandValues<Dependence> operands) {
    return std::ranges::any_of(operands, [](const Dependence* d) { return d->depends; });
  }

  Dependence on_parameter(std::size_t index, const Node& n) const {
    return {index < marked.size() && marked[index] && carries(n.type())};
  }
  Dependence on_value_node(ValueId, const Node& n, OperandValues<Dependence> operands) const {
    return {any(operands) && carries(n.type())};
  }
  std::vector<Dependence> on_multi_result_node(ValueId, const Node& n,
                                               OperandValues<Dependence> operands) const {
    // A host function's results carry no tangent; a control op passes a dependence to all.
    const bool depends = any(operands) && (!is_host_op(n.op) || kind == DependenceKind::batch);
    std::vector<Dependence> results;
    results.reserve(n.results.size());
    for (const TensorType& t : n.results) results.push_back({depends && carries(t)});
    return results;
  }
};

}  // namespace

std::vector<bool> dependent_outputs(const Graph& g, const std::vector<bool>& marked,
                                    DependenceKind kind) {
  DependenceHooks hooks{.marked = marked, .kind = kind};
  std::vector<bool> out;
  out.reserve(g.outputs.size());
  for (const Dependence& d : evaluate_graph<Dependence>(g, hooks)) out.push_back(d.depends);
  return out;
}

std::vector<bool> widen_carries(const Graph& body, std::vector<bool>& marked, std::size_t first,
                                std::size_t count, DependenceKind kind) {
  for (;;) {
    std::vector<bool> out = dependent_outputs(body, marked, kind);
    bool changed = false;
    for (std::size_t j = 0; j < count; ++j)
      if (out[j] && !marked[first + j]) marked[first + j] = changed = true;
    if (!changed) return out;
  }
}

}  // namespace weft::detail
