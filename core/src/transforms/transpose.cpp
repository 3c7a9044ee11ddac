// Runs a linear graph backwards: its non-linear nodes (functions of residuals only) forwards
// first, then each linear node's transpose rule (control nodes: transpose_control) from the
// outputs' cotangents to the inputs'.
#include "transforms/linearize.h"

#include <algorithm>

#include "ir/graph_evaluator.h"
#include "transforms/control_rules.h"
#include "transforms/staging.h"
#include "transforms/transpose_rules.h"
#include "weft/error.h"
#include "weft/ops.h"

namespace weft::detail {

namespace {

Tangent sum(Tangent a, const Tangent& b, const std::source_location& loc) {
  if (!a) return b;
  if (!b) return a;
  return lax::add(*a, *b, loc);
}

// Forwards, a node is linear (a function of a linear parameter: its value unknown) or has a
// value, computed from the non-linear parameters.
struct ForwardValue {
  std::optional<Array> value;
  bool linear = false;
};

bool any_linear(OperandValues<ForwardValue> operands) {
  return std::ranges::any_of(operands, [](const ForwardValue* o) { return o->linear; });
}

// Forwards: the non-linear nodes are evaluated; a node with a linear operand is linear, and so
// are the results of a linear control node.
struct NonlinearPartHooks {
  const Graph& graph;
  const std::vector<bool>& linear_params;
  std::span<const Array> nonlinear_args;
  const std::string& api;
  const std::source_location& loc;
  std::size_t next_arg = 0;

  static std::vector<Array> values_of(OperandValues<ForwardValue> operands) {
    std::vector<Array> values;
    for (const ForwardValue* o : operands) values.push_back(*o->value);
    return values;
  }

  ForwardValue on_parameter(std::size_t index, const Node&) {
    if (linear_params[index]) return {std::nullopt, true};
    return {nonlinear_args[next_arg++], false};
  }
  ForwardValue on_value_node(ValueId, const Node& n, OperandValues<ForwardValue> operands) const {
    if (any_linear(operands)) return {std::nullopt, true};
    return {apply_node(graph, n, values_of(operands), loc).at(0), false};
  }
  std::vector<ForwardValue> on_multi_result_node(ValueId, const Node& n,
                                                 OperandValues<ForwardValue> operands) const {
    if (any_linear(operands)) {
      if (is_host_op(n.op))
        throw TransformError(api + ": " + std::string(op_name(n.op)) + " at " +
                             n.origin.describe() +
                             " is applied to a value being differentiated in the linear part of "
                             "the computation; it has no transpose");
      return std::vector<ForwardValue>(n.results.size(), ForwardValue{std::nullopt, true});
    }
    std::vector<ForwardValue> results;
    for (Array& a : apply_node(graph, n, values_of(operands), loc))
      results.push_back({std::move(a), false});
    return results;
  }
};

// Backwards: each linear node's transpose, from its result's cotangent to its operands'.
struct CotangentHooks {
  const Graph& graph;
  const GraphEvaluator<ForwardValue>& forward;
  const std::string& api;
  const std::source_location& loc;

  struct Operands {
    std::vector<std::optional<Array>> values;
    std::vector<TensorType> types;
    std::vector<bool> linear;
  };
  Operands operands_of(const Node& n) const {
    Operands operands;
    for (ValueId input : n.inputs) {
      operands.values.push_back(forward.value(input).value);
      operands.types.push_back(graph.node(input).type());
      operands.linear.push_back(forward.value(input).linear);
    }
    return operands;
  }

  std::vector<Tangent> on_value_node(ValueId id, const Node& n, const Tangent& cotangent) const {
    if (!forward.value(id).linear || !cotangent) return {};
    const Operands operands = operands_of(n);
    return transpose_rule(n, *cotangent, operands.values, operands.types, operands.linear, api,
                          origin_or(n, loc));
  }
  std::vector<Tangent> on_multi_result_node(ValueId, const Node& n,
                                            std::span<const Tangent> result_cotangents) const {
    const Operands operands = operands_of(n);
    const bool linear = std::ranges::find(operands.linear, true) != operands.linear.end();
    const bool any =
        std::ranges::any_of(result_cotangents, [](const Tangent& t) { return t.has_value(); });
    if (!linear || !any) return {};
    return transpose_control(graph, n, result_cotangents, operands.values, operands.linear, api,
                             origin_or(n, loc));
  }
  void accumulate(Tangent& into, const Tangent& operand_cotangent) const {
    if (operand_cotangent) into = sum(into, operand_cotangent, loc);
  }
};

}  // namespace

std::vector<Tangent> transpose_graph(const Graph& g, const std::vector<bool>& linear_params,
                                     std::span<const Array> nonlinear_args,
                                     std::span<const Tangent> output_cotangents,
                                     const std::string& api, const std::source_location& loc) {
  NonlinearPartHooks nonlinear_hooks{.graph = g,
                                     .linear_params = linear_params,
                                     .nonlinear_args = nonlinear_args,
                                     .api = api,
                                     .loc = loc};
  GraphEvaluator<ForwardValue> forward(g, nonlinear_hooks);
  forward.run(nonlinear_hooks);

  std::vector<Tangent> cotangent(g.nodes.size());
  for (std::size_t k = 0; k < g.outputs.size(); ++k) {
    const ValueId o = g.outputs[k];
    if (forward.value(o).linear)
      cotangent[static_cast<std::size_t>(o)] =
          sum(cotangent[static_cast<std::size_t>(o)], output_cotangents[k], loc);
  }
  CotangentHooks cotangent_hooks{.graph = g, .forward = forward, .api = api, .loc = loc};
  cotangent = propagate_backwards(g, std::move(cotangent), cotangent_hooks);
  std::vector<Tangent> out;
  for (std::size_t i = 0; i < g.params.size(); ++i)
    if (linear_params[i]) out.push_back(cotangent[static_cast<std::size_t>(g.params[i])]);
  return out;
}

std::vector<Tangent> transpose_graph(const Linearized& linearized,
                                     std::span<const Tangent> output_cotangents,
                                     const std::string& api, const std::source_location& loc) {
  std::vector<bool> linear_params(linearized.linear.params.size(), false);
  std::fill(linear_params.begin(),
            linear_params.begin() + static_cast<std::ptrdiff_t>(linearized.tangent_params), true);
  return transpose_graph(linearized.linear, linear_params, linearized.residuals, output_cotangents,
                         api, loc);
}

}  // namespace weft::detail
