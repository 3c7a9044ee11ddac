// The interpreter's driver: checks the inputs, evaluates every node in order and returns the
// outputs. Each op's semantics are in its definition (core/src/primitives/).
#include "weft/interp/interpreter.h"

#include <string>

#include "ir/graph_evaluator.h"
#include "primitives/primitive.h"
#include "value.h"

namespace weft {

namespace {

std::string type_string(DType dtype, const Shape& shape) {
  return std::string(dtype_name(dtype)) + shape_to_string(shape);
}

void check_inputs(const Graph& graph, std::span<const HostArray> inputs) {
  if (inputs.size() != graph.params.size())
    throw InvalidArgumentError("interpret: graph '" + graph.name + "' takes " +
                               std::to_string(graph.params.size()) + " parameter(s) but " +
                               std::to_string(inputs.size()) + " input(s) were given");
  for (std::size_t p = 0; p < inputs.size(); ++p) {
    const Node& param = graph.node(graph.params[p]);
    if (inputs[p].dtype() != param.dtype || inputs[p].shape() != param.shape)
      throw InvalidArgumentError("interpret: parameter " + std::to_string(p) + " of graph '" +
                                 graph.name + "' expects " + type_string(param.dtype, param.shape) +
                                 ", given " + type_string(inputs[p].dtype(), inputs[p].shape()));
  }
}

// A value op's semantics, from its definition (core/src/primitives/); multi-result ops are
// run_graph's.
interp::Value evaluate(const Node& node, interp::Operands operands) {
  if (const auto fn = prim::primitive(node.op).evaluate) return fn(node, operands);
  throw InvalidGraphError("interpret: no evaluator for " + std::string(op_name(node.op)));
}

using Callbacks = std::vector<std::shared_ptr<const HostCallback>>;

std::vector<interp::Value> run_graph(const Callbacks& callbacks, const Graph& graph,
                                     std::vector<interp::Value> params);

// The interpreter's hooks: each node's reference semantics on host values.
struct InterpreterHooks {
  const Callbacks& callbacks;
  std::vector<interp::Value>& params;

  interp::Value on_parameter(std::size_t index, const Node&) { return std::move(params.at(index)); }
  void release(interp::Value&& value) { interp::recycle(std::move(value)); }
  interp::Value on_value_node(ValueId, const Node& node, interp::Operands operands) {
    return evaluate(node, operands);
  }
  std::vector<interp::Value> on_multi_result_node(ValueId, const Node& node,
                                                  interp::Operands operands) {
    if (is_host_op(node.op)) return interp::eval_host(node, operands, callbacks);
    return interp::eval_control(node, operands,
                                [this](const Graph& region, std::vector<interp::Value> values) {
                                  return run_graph(callbacks, region, std::move(values));
                                });
  }
};

// Evaluates one graph (the function or a region) on its parameters' values; host_call nodes
// find their functions in `callbacks`, the function's table. Each intermediate is dropped after
// its last use, so long graphs over large arrays stay small.
std::vector<interp::Value> run_graph(const Callbacks& callbacks, const Graph& graph,
                                     std::vector<interp::Value> params) {
  InterpreterHooks hooks{.callbacks = callbacks, .params = params};
  return evaluate_graph<interp::Value>(graph, hooks, Retention::until_last_use);
}

}  // namespace

std::vector<HostArray> interpret(const Graph& graph, std::span<const HostArray> inputs) {
  // A malformed graph would index out of range below; reject it with the verifier's message.
  verify(graph);
  check_inputs(graph, inputs);
  const interp::RecyclingScope recycling;
  std::vector<interp::Value> params;
  params.reserve(inputs.size());
  for (const HostArray& input : inputs) params.push_back(interp::from_host(input));
  std::vector<HostArray> outputs;
  for (const interp::Value& v : run_graph(graph.callbacks, graph, std::move(params)))
    outputs.push_back(interp::to_host(v));
  return outputs;
}

}  // namespace weft
