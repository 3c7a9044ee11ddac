// The interpreter's driver: checks the inputs, evaluates every node in order and returns the
// outputs. The per-op semantics live beside it, one file per op class.
#include "weft/interp/interpreter.h"

#include <string>

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

interp::Value evaluate(const Node& node, interp::Operands operands) {
  using namespace interp;
  // Migration to core/src/primitives/: a definition's evaluator wins over the switch below.
  if (auto fn = prim::primitive(node.op).evaluate) return fn(node, operands);
  switch (op_info(node.op).op_class) {
    case OpClass::Layout:
      return eval_layout(node, operands);
    case OpClass::Reduce:
      return eval_reduce(node, operands);
    case OpClass::Dot:
      return eval_dot(node, operands);
    case OpClass::Token:
      return eval_after_all(node);
    case OpClass::Result:
    case OpClass::Control:
    case OpClass::Host:
      break;  // run_graph handles them
    case OpClass::Leaf:
    case OpClass::Unary:
    case OpClass::Binary:
    case OpClass::Compare:
    case OpClass::Select:
    case OpClass::Convert:
      break;  // their definitions give their evaluators
  }
  throw InvalidGraphError("interpret: no evaluator for " + std::string(op_name(node.op)));
}

using Callbacks = std::vector<std::shared_ptr<const HostCallback>>;

// Evaluates one graph (the function or a region) on its parameters' values; host_call nodes
// find their functions in `callbacks`, the function's table.
std::vector<interp::Value> run_graph(const Callbacks& callbacks, const Graph& graph,
                                     std::vector<interp::Value> params) {
  std::vector<interp::Value> values(graph.nodes.size());
  // Drop each intermediate after its last use, so long graphs over large arrays stay small.
  std::vector<int> uses = count_uses(graph);
  std::vector<const interp::Value*> operands;
  std::vector<interp::Value> results;  // of the last control node, until its Result nodes
  for (std::size_t id = 0; id < graph.nodes.size(); ++id) {
    const Node& node = graph.nodes[id];
    if (node.op == OpKind::Parameter) {
      values[id] = std::move(params.at(static_cast<std::size_t>(node.attrs.get_int("index"))));
      continue;
    }
    if (node.op == OpKind::Result) {
      values[id] = std::move(results.at(static_cast<std::size_t>(node.attrs.get_int("index"))));
      continue;
    }
    operands.clear();
    for (ValueId in : node.inputs) operands.push_back(&values[in]);
    if (is_control(node.op)) {
      results = interp::eval_control(
          node, operands, [&callbacks](const Graph& region, std::vector<interp::Value> values) {
            return run_graph(callbacks, region, std::move(values));
          });
    } else if (is_host_op(node.op)) {
      results = interp::eval_host(node, operands, callbacks);
    } else {
      values[id] = evaluate(node, operands);
    }
    for (ValueId in : node.inputs)
      if (--uses[in] == 0) values[in] = interp::Value{};
  }
  std::vector<interp::Value> outputs;
  outputs.reserve(graph.outputs.size());
  for (ValueId o : graph.outputs) outputs.push_back(values[o]);
  return outputs;
}

}  // namespace

std::vector<HostArray> interpret(const Graph& graph, std::span<const HostArray> inputs) {
  // A malformed graph would index out of range below; reject it with the verifier's message.
  verify(graph);
  check_inputs(graph, inputs);
  std::vector<interp::Value> params;
  params.reserve(inputs.size());
  for (const HostArray& input : inputs) params.push_back(interp::from_host(input));
  std::vector<HostArray> outputs;
  for (const interp::Value& v : run_graph(graph.callbacks, graph, std::move(params)))
    outputs.push_back(interp::to_host(v));
  return outputs;
}

}  // namespace weft
