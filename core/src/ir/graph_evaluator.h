// The one walker for everything that evaluates a graph node by node: the interpreter, staging
// a graph into the current trace, and the transformations (jvp, linearize, vmap, transpose,
// pmap, the dependence analysis). It binds the parameters, hands each node its operands'
// values, projects a multi-result node's results onto the Result nodes that follow it (see
// weft/ir/graph.h) and collects the outputs; what a node means is up to the hooks, as each
// trace's process_primitive is in JAX's eval_jaxpr.
//
// Forward hooks, for a value type V (default-constructible; an unset value is V{}):
//   V on_parameter(std::size_t index, const Node& parameter);
//   V on_value_node(ValueId id, const Node& node, OperandValues<V> operands);
//   std::vector<V> on_multi_result_node(ValueId id, const Node& node, OperandValues<V> operands);
// Backward hooks (propagate_backwards), for a cotangent type C:
//   std::vector<C> on_value_node(ValueId id, const Node& node, const C& cotangent);
//   std::vector<C> on_multi_result_node(ValueId id, const Node& node,
//                                       std::span<const C> result_cotangents);
//   void accumulate(C& into, const C& operand_cotangent);
#pragma once

#include <concepts>
#include <cstddef>
#include <span>
#include <vector>

#include "weft/ir/graph.h"
#include "weft/ir/op_attrs.h"

namespace weft {

// The values of a node's operands, in operand order: pointers into the evaluator's table, so
// large values (the interpreter's) are not copied.
template <class V>
using OperandValues = std::span<const V* const>;

// Copies of the operands' values, for rules that take them as a span of values.
template <class V>
std::vector<V> copies_of(OperandValues<V> operands) {
  std::vector<V> out;
  out.reserve(operands.size());
  for (const V* v : operands) out.push_back(*v);
  return out;
}

// One member of each operand's value, e.g. the primals of (primal, tangent) pairs.
template <class V, class M>
std::vector<M> members_of(OperandValues<V> operands, M V::*member) {
  std::vector<M> out;
  out.reserve(operands.size());
  for (const V* v : operands) out.push_back(v->*member);
  return out;
}

template <class Hooks, class V>
concept ForwardWalkHooks = requires(Hooks& hooks, std::size_t index, ValueId id, const Node& node,
                                    OperandValues<V> operands) {
  { hooks.on_parameter(index, node) } -> std::convertible_to<V>;
  { hooks.on_value_node(id, node, operands) } -> std::convertible_to<V>;
  { hooks.on_multi_result_node(id, node, operands) } -> std::convertible_to<std::vector<V>>;
};

template <class Hooks, class C>
concept BackwardWalkHooks = requires(Hooks& hooks, ValueId id, const Node& node, const C& cotangent,
                                     std::span<const C> result_cotangents, C& into) {
  { hooks.on_value_node(id, node, cotangent) } -> std::convertible_to<std::vector<C>>;
  {
    hooks.on_multi_result_node(id, node, result_cotangents)
    } -> std::convertible_to<std::vector<C>>;
  hooks.accumulate(into, cotangent);
};

enum class Retention {
  all_values,      // every value stays readable after the walk (transpose reads them)
  until_last_use,  // a value is dropped after its last user, so long graphs stay small
};

// The values of one graph's nodes, filled in node order by run(). A multi-result node's own
// slot stays V{}: its values are its Result nodes'.
template <class V>
class GraphEvaluator {
 public:
  // Binds each parameter, in index order, to hooks.on_parameter.
  template <ForwardWalkHooks<V> Hooks>
  GraphEvaluator(const Graph& graph, Hooks& hooks, Retention retention = Retention::all_values)
      : graph_(graph), values_(graph.nodes.size()), retention_(retention) {
    if (retention_ == Retention::until_last_use) uses_ = count_uses(graph);
    for (std::size_t i = 0; i < graph.params.size(); ++i) {
      const auto id = static_cast<std::size_t>(graph.params[i]);
      values_[id] = hooks.on_parameter(i, graph.nodes[id]);
    }
  }

  // Evaluates the nodes [begin, end) (all of them by default); a caller may run a graph in
  // pieces (pmap runs it in segments between collectives).
  template <ForwardWalkHooks<V> Hooks>
  void run(Hooks& hooks) {
    run(hooks, 0, graph_.nodes.size());
  }
  template <ForwardWalkHooks<V> Hooks>
  void run(Hooks& hooks, std::size_t begin, std::size_t end) {
    std::vector<const V*> operands;
    for (std::size_t id = begin; id < end; ++id) {
      const Node& n = graph_.nodes[id];
      if (n.op == OpKind::Parameter) continue;
      if (n.op == OpKind::Result) {
        values_[id] =
            std::move(results_.at(static_cast<std::size_t>(IndexAttrs::read(n.attrs).index)));
        continue;
      }
      operands.clear();
      for (ValueId input : n.inputs) operands.push_back(&values_[static_cast<std::size_t>(input)]);
      const auto node_id = static_cast<ValueId>(id);
      if (is_multi_result(n.op))
        results_ = hooks.on_multi_result_node(node_id, n, OperandValues<V>(operands));
      else
        values_[id] = hooks.on_value_node(node_id, n, OperandValues<V>(operands));
      if (retention_ == Retention::until_last_use)
        for (ValueId input : n.inputs)
          if (--uses_[static_cast<std::size_t>(input)] == 0) {
            V& dropped = values_[static_cast<std::size_t>(input)];
            // Hooks may take the storage back (the interpreter reuses large blocks).
            if constexpr (requires { hooks.release(std::move(dropped)); })
              hooks.release(std::move(dropped));
            dropped = V{};
          }
    }
  }

  V& value(ValueId id) { return values_[static_cast<std::size_t>(id)]; }
  const V& value(ValueId id) const { return values_[static_cast<std::size_t>(id)]; }

  std::vector<V> outputs() const {
    std::vector<V> out;
    out.reserve(graph_.outputs.size());
    for (ValueId o : graph_.outputs) out.push_back(values_[static_cast<std::size_t>(o)]);
    return out;
  }

 private:
  const Graph& graph_;
  std::vector<V> values_;
  std::vector<V> results_;  // of the last multi-result node, until its Result nodes read them
  Retention retention_;
  std::vector<int> uses_;  // until_last_use: the users each value has left
};

// Evaluates `graph` with `hooks` and returns its outputs' values.
template <class V, ForwardWalkHooks<V> Hooks>
std::vector<V> evaluate_graph(const Graph& graph, Hooks& hooks,
                              Retention retention = Retention::all_values) {
  GraphEvaluator<V> evaluator(graph, hooks, retention);
  evaluator.run(hooks);
  return evaluator.outputs();
}

// The reverse walk: the nodes last to first (parameters and Result nodes skipped), each given
// the cotangent of its value, or a multi-result node those of its Result nodes; the operand
// cotangents a hook returns (one per operand, or none) are accumulated onto its inputs'.
// `cotangents` holds one per node, seeded at the outputs; returns them all.
template <class C, BackwardWalkHooks<C> Hooks>
std::vector<C> propagate_backwards(const Graph& graph, std::vector<C> cotangents, Hooks& hooks) {
  const std::size_t count = graph.nodes.size();
  for (std::size_t id = count; id-- > 0;) {
    const Node& n = graph.nodes[id];
    if (n.op == OpKind::Parameter || n.op == OpKind::Result) continue;
    const auto node_id = static_cast<ValueId>(id);
    std::vector<C> operand_cotangents;
    if (is_multi_result(n.op)) {
      std::vector<C> result_cotangents(n.results.size());
      for (std::size_t r = id + 1; r < count && graph.nodes[r].op == OpKind::Result &&
                                   graph.nodes[r].inputs.at(0) == node_id;
           ++r)
        result_cotangents.at(
            static_cast<std::size_t>(IndexAttrs::read(graph.nodes[r].attrs).index)) = cotangents[r];
      operand_cotangents =
          hooks.on_multi_result_node(node_id, n, std::span<const C>(result_cotangents));
    } else {
      operand_cotangents = hooks.on_value_node(node_id, n, cotangents[id]);
    }
    if (operand_cotangents.empty()) continue;
    for (std::size_t i = 0; i < n.inputs.size(); ++i)
      hooks.accumulate(cotangents[static_cast<std::size_t>(n.inputs[i])], operand_cotangents.at(i));
  }
  return cotangents;
}

}  // namespace weft
