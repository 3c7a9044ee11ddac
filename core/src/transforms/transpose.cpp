// Runs a linear graph backwards: its non-linear nodes (functions of residuals only) forwards
// first, then each linear node's transpose rule from the outputs' cotangents to the inputs'.
#include "transforms/linearize.h"

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

std::vector<Tangent> transpose_graph(const Linearized& linearized,
                                     std::span<const Tangent> output_cotangents,
                                     const std::string& api, const std::source_location& loc) {
  const Graph& g = linearized.linear;
  const std::size_t count = g.nodes.size();
  std::vector<bool> linear(count, false);
  std::vector<std::optional<Array>> value(count);
  for (std::size_t i = 0; i < g.params.size(); ++i) {
    const auto id = static_cast<std::size_t>(g.params[i]);
    if (i < linearized.tangent_params)
      linear[id] = true;
    else
      value[id] = linearized.residuals.at(i - linearized.tangent_params);
  }
  std::vector<Array> results;  // of the last multi-result node
  for (std::size_t id = 0; id < count; ++id) {
    const Node& n = g.nodes[id];
    if (n.op == OpKind::Parameter) continue;
    if (n.op == OpKind::Result) {
      if (!results.empty())
        value[id] = results.at(static_cast<std::size_t>(n.attrs.get_int("index")));
      continue;
    }
    bool depends = false;
    for (ValueId input : n.inputs) depends = depends || linear[static_cast<std::size_t>(input)];
    const OpClass op_class = op_info(n.op).op_class;
    const bool multi = op_class == OpClass::Control || op_class == OpClass::Host;
    if (depends && multi)
      throw TransformError(api + ": " + std::string(op_name(n.op)) + " at " + n.origin.describe() +
                           " is applied to a value being differentiated; reverse mode through it "
                           "is not supported yet");
    if (depends) {
      linear[id] = true;
      continue;
    }
    std::vector<Array> operands;
    for (ValueId input : n.inputs) operands.push_back(*value[static_cast<std::size_t>(input)]);
    std::vector<Array> applied = apply_node(g, n, operands, loc);
    if (multi) {
      results = std::move(applied);
    } else {
      results.clear();
      value[id] = std::move(applied.at(0));
    }
  }

  std::vector<Tangent> cotangent(count);
  for (std::size_t k = 0; k < g.outputs.size(); ++k) {
    const auto o = static_cast<std::size_t>(g.outputs[k]);
    if (linear[o]) cotangent[o] = sum(cotangent[o], output_cotangents[k], loc);
  }
  for (std::size_t id = count; id-- > 0;) {
    const Node& n = g.nodes[id];
    if (!linear[id] || !cotangent[id] || n.op == OpKind::Parameter) continue;
    std::vector<std::optional<Array>> operands;
    std::vector<TensorType> types;
    std::vector<bool> operand_linear;
    for (ValueId input : n.inputs) {
      const auto in = static_cast<std::size_t>(input);
      operands.push_back(value[in]);
      types.push_back(g.nodes[in].type());
      operand_linear.push_back(linear[in]);
    }
    const std::vector<Tangent> operand_cotangents =
        transpose_rule(n, *cotangent[id], operands, types, operand_linear, api, origin_or(n, loc));
    for (std::size_t i = 0; i < n.inputs.size(); ++i) {
      const auto in = static_cast<std::size_t>(n.inputs[i]);
      if (operand_cotangents[i]) cotangent[in] = sum(cotangent[in], operand_cotangents[i], loc);
    }
  }
  std::vector<Tangent> out;
  for (std::size_t i = 0; i < linearized.tangent_params; ++i)
    out.push_back(cotangent[static_cast<std::size_t>(g.params[i])]);
  return out;
}

}  // namespace weft::detail
