// jvp: evaluates a traced function's graph on (primal, tangent) pairs, staging each node's
// primal op and its tangent rule into the current context.
#include "weft/transforms/jvp.h"

#include <optional>

#include "trace/array_impl.h"
#include "transforms/jvp_rules.h"
#include "transforms/staging.h"
#include "weft/error.h"
#include "weft/ir/host_callback.h"

namespace weft {

namespace detail {

namespace {

struct JvpValues {
  std::vector<Array> primals;
  std::vector<Tangent> tangents;
};

// The callback a host_call node names, for messages.
std::string describe_host_node(const Graph& g, const Node& n) {
  if (n.op == OpKind::HostCall && n.attrs.has("callback")) {
    const auto slot = static_cast<std::size_t>(n.attrs.get_int("callback"));
    if (slot < g.callbacks.size() && g.callbacks[slot]) return g.callbacks[slot]->describe();
  }
  return std::string(op_name(n.op)) + " at " + n.origin.describe();
}

JvpValues jvp_graph(const Graph& g, std::span<const Array> primals,
                    std::span<const Tangent> tangents, const std::source_location& loc) {
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
              "jvp: " + describe_host_node(g, n) +
              " is not differentiable: weft cannot know the derivative of a host function's "
              "results. Define one with custom_jvp (or custom_vjp for grad), or stop the "
              "tangent before it (stop_gradient).");
        results = apply_node(g, n, operands, loc);
        result_tangents.assign(results.size(), std::nullopt);
        break;
      case OpClass::Control:
        if (perturbed)
          throw TransformError("jvp: " + std::string(op_name(n.op)) + " at " + n.origin.describe() +
                               " has no forward-mode rule yet; differentiate outside the loop "
                               "or branch for now");
        results = apply_node(g, n, operands, loc);
        result_tangents.assign(results.size(), std::nullopt);
        break;
      default: {
        Array z = apply_node(g, n, operands, loc).at(0);
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

void check_tangents(const std::vector<Array>& primals, const std::vector<Array>& tangents,
                    const std::source_location& loc) {
  if (primals.size() != tangents.size())
    throw InvalidArgumentError("jvp at " + describe_location(loc) + ": " +
                               std::to_string(primals.size()) + " primals but " +
                               std::to_string(tangents.size()) +
                               " tangents; give one tangent per primal");
  for (std::size_t i = 0; i < primals.size(); ++i) {
    const Array& p = primals[i];
    const Array& t = tangents[i];
    if (!p.valid() || !t.valid())
      throw InvalidArgumentError("jvp at " + describe_location(loc) + ": " +
                                 (p.valid() ? "tangent " : "primal ") + std::to_string(i) +
                                 " is an empty Array");
    if (p.shape() != t.shape())
      throw ShapeError("jvp at " + describe_location(loc) + ": tangent " + std::to_string(i) +
                       " has shape " + shape_to_string(t.shape()) + " but its primal has " +
                       shape_to_string(p.shape()) + "; a tangent has its primal's shape");
    if (p.dtype() != t.dtype())
      throw DTypeError("jvp at " + describe_location(loc) + ": tangent " + std::to_string(i) +
                       " is " + std::string(dtype_name(t.dtype())) + " but its primal is " +
                       std::string(dtype_name(p.dtype())) + "; a tangent has its primal's dtype");
  }
}

}  // namespace

}  // namespace detail

JvpResult jvp(const ArrayFunction& f, const std::vector<Array>& primals,
              const std::vector<Array>& tangents, std::source_location loc) {
  detail::check_tangents(primals, tangents, loc);
  std::size_t outputs = 0;
  const std::vector<Array> flat = detail::stage_or_run("jvp", loc, [&] {
    const detail::TracedRegion traced = detail::trace_for_transform("jvp", f, primals, loc);
    std::vector<Array> all_primals = primals;
    std::vector<detail::Tangent> all_tangents(tangents.begin(), tangents.end());
    for (const Array& c : traced.captured) {  // closed-over values: constants
      all_primals.push_back(c);
      all_tangents.push_back(std::nullopt);
    }
    detail::JvpValues values = detail::jvp_graph(traced.graph, all_primals, all_tangents, loc);
    outputs = values.primals.size();
    std::vector<Array> out = values.primals;
    for (std::size_t k = 0; k < outputs; ++k)
      out.push_back(values.tangents[k] ? *values.tangents[k]
                                       : detail::zeros_like_value(values.primals[k], loc));
    return out;
  });
  JvpResult result;
  result.primals_out.assign(flat.begin(), flat.begin() + static_cast<std::ptrdiff_t>(outputs));
  result.tangents_out.assign(flat.begin() + static_cast<std::ptrdiff_t>(outputs), flat.end());
  return result;
}

std::pair<Array, Array> jvp(const std::function<Array(const Array&)>& f, const Array& primal,
                            const Array& tangent, std::source_location loc) {
  JvpResult r = jvp([&](const std::vector<Array>& x) { return std::vector<Array>{f(x.at(0))}; },
                    {primal}, {tangent}, loc);
  return {r.primals_out.at(0), r.tangents_out.at(0)};
}

}  // namespace weft
