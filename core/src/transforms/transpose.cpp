// Runs a linear graph backwards: its non-linear nodes (functions of residuals only) forwards
// first, then each linear node's transpose rule (control nodes: transpose_control) from the
// outputs' cotangents to the inputs'.
#include "transforms/linearize.h"

#include <algorithm>

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

}  // namespace

std::vector<Tangent> transpose_graph(const Graph& g, const std::vector<bool>& linear_params,
                                     std::span<const Array> nonlinear_args,
                                     std::span<const Tangent> output_cotangents,
                                     const std::string& api, const std::source_location& loc) {
  const std::size_t count = g.nodes.size();
  std::vector<bool> linear(count, false);
  std::vector<std::optional<Array>> value(count);
  std::size_t next_arg = 0;
  for (std::size_t i = 0; i < g.params.size(); ++i) {
    const auto id = static_cast<std::size_t>(g.params[i]);
    if (linear_params[i])
      linear[id] = true;
    else
      value[id] = nonlinear_args[next_arg++];
  }
  // Forwards: the non-linear nodes (functions of the non-linear parameters) are evaluated; a
  // node with a linear operand is linear, and so are the results of a linear control node.
  std::vector<Array> results;  // of the last non-linear multi-result node
  for (std::size_t id = 0; id < count; ++id) {
    const Node& n = g.nodes[id];
    if (n.op == OpKind::Parameter) continue;
    if (n.op == OpKind::Result) {
      if (linear[static_cast<std::size_t>(n.inputs.at(0))])
        linear[id] = true;
      else
        value[id] = results.at(static_cast<std::size_t>(n.attrs.get_int("index")));
      continue;
    }
    bool depends = false;
    for (ValueId input : n.inputs) depends = depends || linear[static_cast<std::size_t>(input)];
    if (depends && is_host_op(n.op))
      throw TransformError(api + ": " + std::string(op_name(n.op)) + " at " + n.origin.describe() +
                           " is applied to a value being differentiated in the linear part of "
                           "the computation; it has no transpose");
    if (depends) {
      linear[id] = true;
      continue;
    }
    std::vector<Array> operands;
    for (ValueId input : n.inputs) operands.push_back(*value[static_cast<std::size_t>(input)]);
    std::vector<Array> applied = apply_node(g, n, operands, loc);
    if (is_multi_result(n.op))
      results = std::move(applied);
    else
      value[id] = std::move(applied.at(0));
  }

  // Backwards: each linear node's transpose, from its result's cotangent to its operands'.
  std::vector<Tangent> cotangent(count);
  for (std::size_t k = 0; k < g.outputs.size(); ++k) {
    const auto o = static_cast<std::size_t>(g.outputs[k]);
    if (linear[o]) cotangent[o] = sum(cotangent[o], output_cotangents[k], loc);
  }
  for (std::size_t id = count; id-- > 0;) {
    const Node& n = g.nodes[id];
    if (!linear[id] || n.op == OpKind::Parameter || n.op == OpKind::Result) continue;
    std::vector<std::optional<Array>> operands;
    std::vector<TensorType> types;
    std::vector<bool> operand_linear;
    for (ValueId input : n.inputs) {
      const auto in = static_cast<std::size_t>(input);
      operands.push_back(value[in]);
      types.push_back(g.nodes[in].type());
      operand_linear.push_back(linear[in]);
    }
    std::vector<Tangent> operand_cotangents;
    if (is_control(n.op)) {
      // Its results' cotangents sit on the Result nodes that follow it.
      std::vector<Tangent> result_cotangents(n.results.size());
      bool any = false;
      for (std::size_t r = id + 1; r < count && g.nodes[r].op == OpKind::Result &&
                                   g.nodes[r].inputs.at(0) == static_cast<ValueId>(id);
           ++r) {
        const auto k = static_cast<std::size_t>(g.nodes[r].attrs.get_int("index"));
        result_cotangents[k] = cotangent[r];
        any = any || cotangent[r].has_value();
      }
      if (!any) continue;
      operand_cotangents = transpose_control(g, n, result_cotangents, operands, operand_linear, api,
                                             origin_or(n, loc));
    } else {
      if (!cotangent[id]) continue;
      operand_cotangents = transpose_rule(n, *cotangent[id], operands, types, operand_linear, api,
                                          origin_or(n, loc));
    }
    for (std::size_t i = 0; i < n.inputs.size(); ++i) {
      const auto in = static_cast<std::size_t>(n.inputs[i]);
      if (operand_cotangents[i]) cotangent[in] = sum(cotangent[in], operand_cotangents[i], loc);
    }
  }
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
