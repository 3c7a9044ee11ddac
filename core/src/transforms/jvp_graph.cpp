#include "transforms/jvp_graph.h"

#include <optional>

#include "transforms/control_rules.h"
#include "transforms/staging.h"
#include "weft/error.h"
#include "weft/ir/host_callback.h"
#include "weft/trace/trace.h"

namespace weft::detail {

// The callback a host_call node names, for messages.
std::string describe_host_node(const Graph& g, const Node& n) {
  if (n.op == OpKind::HostCall && n.attrs.has("callback")) {
    const auto slot = static_cast<std::size_t>(n.attrs.get_int("callback"));
    if (slot < g.callbacks.size() && g.callbacks[slot]) return g.callbacks[slot]->describe();
  }
  return std::string(op_name(n.op)) + " at " + n.origin.describe();
}

JvpValues jvp_graph(const Graph& g, std::span<const Array> primals,
                    std::span<const Tangent> tangents, PrimalPlacement placement,
                    const std::string& api, const std::source_location& loc) {
  auto apply_primal = [&](const Node& n, std::span<const Array> operands) {
    if (placement == PrimalPlacement::here) return apply_node(g, n, operands, loc);
    SuspendInnermostTrace outer;
    return apply_node(g, n, operands, loc);
  };
  std::vector<std::optional<Array>> value(g.nodes.size());
  std::vector<Tangent> tangent(g.nodes.size());
  for (std::size_t i = 0; i < g.params.size(); ++i) {
    const auto id = static_cast<std::size_t>(g.params[i]);
    value[id] = primals[i];
    if (has_tangent(primals[i].dtype())) tangent[id] = tangents[i];
  }
  std::vector<Array> results;  // of the last multi-result node, read by its Result nodes
  std::vector<Tangent> result_tangents;
  for (std::size_t id = 0; id < g.nodes.size(); ++id) {
    const Node& n = g.nodes[id];
    if (n.op == OpKind::Parameter) continue;
    if (n.op == OpKind::Result) {
      const auto k = static_cast<std::size_t>(n.attrs.get_int("index"));
      value[id] = results.at(k);
      tangent[id] = result_tangents.at(k);
      continue;
    }
    std::vector<Array> operands;
    std::vector<Tangent> operand_tangents;
    operands.reserve(n.inputs.size());
    for (ValueId input : n.inputs) {
      operands.push_back(*value[static_cast<std::size_t>(input)]);
      operand_tangents.push_back(tangent[static_cast<std::size_t>(input)]);
    }
    bool perturbed = false;
    for (const Tangent& t : operand_tangents) perturbed = perturbed || t.has_value();
    const std::source_location where = origin_or(n, loc);
    switch (op_info(n.op).op_class) {
      case OpClass::Host:
        // The host sees primal values, once. A host function's results have no derivative
        // weft could know: only an unperturbed call is allowed.
        if (perturbed && !n.results.empty())
          throw TransformError(
              api + ": " + describe_host_node(g, n) +
              " is not differentiable: weft cannot know the derivative of a host function's "
              "results. Define one with custom_jvp (or custom_vjp for grad), or stop the "
              "tangent before it (stop_gradient).");
        results = apply_primal(n, operands);
        result_tangents.assign(results.size(), std::nullopt);
        break;
      case OpClass::Control: {
        if (!perturbed) {
          results = apply_primal(n, operands);
          result_tangents.assign(results.size(), std::nullopt);
          break;
        }
        ControlTangents c = placement == PrimalPlacement::here
                                ? jvp_control(g, n, operands, operand_tangents, api, where)
                                : linearize_control(g, n, operands, operand_tangents, api, where);
        results = std::move(c.results);
        result_tangents = std::move(c.tangents);
        break;
      }
      default: {
        Array z = apply_primal(n, operands).at(0);
        tangent[id] = perturbed ? jvp_rule(n, operands, operand_tangents, z, where) : std::nullopt;
        value[id] = std::move(z);
      }
    }
  }
  JvpValues out;
  for (ValueId o : g.outputs) {
    out.primals.push_back(*value[static_cast<std::size_t>(o)]);
    out.tangents.push_back(tangent[static_cast<std::size_t>(o)]);
  }
  return out;
}

}  // namespace weft::detail
