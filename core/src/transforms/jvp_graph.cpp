#include "transforms/jvp_graph.h"

#include <algorithm>
#include <optional>

#include "ir/graph_evaluator.h"
#include "transforms/control_rules.h"
#include "transforms/staging.h"
#include "weft/error.h"
#include "weft/ir/host_callback.h"
#include "weft/ir/op_attrs.h"
#include "weft/trace/trace.h"

namespace weft::detail {

// The callback a host_call node names, for messages.
std::string describe_host_node(const Graph& g, const Node& n) {
  if (n.op == OpKind::HostCall && n.attrs.has(HostCallAttrs::kCallback)) {
    const auto slot = static_cast<std::size_t>(HostCallAttrs::callback(n.attrs));
    if (slot < g.callbacks.size() && g.callbacks[slot]) return g.callbacks[slot]->describe();
  }
  return std::string(op_name(n.op)) + " at " + n.origin.describe();
}

namespace {

// A node's primal value and its tangent (nullopt: zero).
struct Dual {
  Array primal;
  Tangent tangent;
};

// Stages each node's primal op (where `placement` says) and its tangent rule.
struct JvpHooks {
  const Graph& graph;
  std::span<const Array> primals;
  std::span<const Tangent> tangents;
  PrimalPlacement placement;
  const std::string& api;
  const std::source_location& loc;

  std::vector<Array> apply_primal(const Node& n, std::span<const Array> operands) const {
    if (placement == PrimalPlacement::here) return apply_node(graph, n, operands, loc);
    SuspendInnermostTrace outer;
    return apply_node(graph, n, operands, loc);
  }
  static bool perturbed(std::span<const Tangent> tangents) {
    return std::ranges::any_of(tangents, [](const Tangent& t) { return t.has_value(); });
  }
  static std::vector<Dual> unperturbed(std::vector<Array> results) {
    std::vector<Dual> out;
    out.reserve(results.size());
    for (Array& r : results) out.push_back({std::move(r), std::nullopt});
    return out;
  }

  Dual on_parameter(std::size_t index, const Node&) const {
    return {primals[index],
            has_tangent(primals[index].dtype()) ? tangents[index] : Tangent(std::nullopt)};
  }
  Dual on_value_node(ValueId, const Node& n, OperandValues<Dual> operands) const {
    const std::vector<Array> operand_primals = members_of(operands, &Dual::primal);
    const std::vector<Tangent> operand_tangents = members_of(operands, &Dual::tangent);
    const std::source_location where = origin_or(n, loc);
    Array z = apply_primal(n, operand_primals).at(0);
    Tangent t = perturbed(operand_tangents)
                    ? jvp_rule(n, operand_primals, operand_tangents, z, where)
                    : std::nullopt;
    return {std::move(z), std::move(t)};
  }
  std::vector<Dual> on_multi_result_node(ValueId, const Node& n,
                                         OperandValues<Dual> operands) const {
    const std::vector<Array> operand_primals = members_of(operands, &Dual::primal);
    const std::vector<Tangent> operand_tangents = members_of(operands, &Dual::tangent);
    const bool is_perturbed = perturbed(operand_tangents);
    const std::source_location where = origin_or(n, loc);
    // The host sees primal values, once. A host function's results have no derivative weft
    // could know: only an unperturbed call is allowed.
    if (is_host_op(n.op) && is_perturbed && !n.results.empty())
      throw TransformError(
          api + ": " + describe_host_node(graph, n) +
          " is not differentiable: weft cannot know the derivative of a host function's "
          "results. Define one with custom_jvp (or custom_vjp for grad), or stop the "
          "tangent before it (stop_gradient).");
    if (is_host_op(n.op) || !is_perturbed) return unperturbed(apply_primal(n, operand_primals));
    ControlTangents c =
        placement == PrimalPlacement::here
            ? jvp_control(graph, n, operand_primals, operand_tangents, api, where)
            : linearize_control(graph, n, operand_primals, operand_tangents, api, where);
    std::vector<Dual> results;
    results.reserve(c.results.size());
    for (std::size_t k = 0; k < c.results.size(); ++k)
      results.push_back({std::move(c.results[k]), std::move(c.tangents.at(k))});
    return results;
  }
};

}  // namespace

JvpValues jvp_graph(const Graph& g, std::span<const Array> primals,
                    std::span<const Tangent> tangents, PrimalPlacement placement,
                    const std::string& api, const std::source_location& loc) {
  JvpHooks hooks{.graph = g,
                 .primals = primals,
                 .tangents = tangents,
                 .placement = placement,
                 .api = api,
                 .loc = loc};
  JvpValues out;
  for (Dual& d : evaluate_graph<Dual>(g, hooks)) {
    out.primals.push_back(std::move(d.primal));
    out.tangents.push_back(std::move(d.tangent));
  }
  return out;
}

}  // namespace weft::detail
