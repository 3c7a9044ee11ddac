// custom_jvp: a function with its own forward-mode rule. jvp calls the rule; linearize traces
// it and partially evaluates it (the ops without a tangent go to the primal part); vmap batches
// the body and the rule together.
#include "ir/graph_evaluator.h"
#include "primitives/custom_function.h"
#include "primitives/families.h"
#include "transforms/staging.h"
#include "weft/error.h"
#include "weft/trace/trace.h"
#include "weft/transforms/vmap.h"

namespace weft::prim {

namespace {

using detail::Batched;
using detail::ControlTangents;
using detail::Tangent;

ControlTangents jvp_custom_jvp(const Graph&, const Node& n, std::span<const Array> operands,
                               std::span<const Tangent> tangents, const std::string& api,
                               const std::source_location& loc) {
  const CustomRules& rules = rules_of(n, api);
  check_closure(n, tangents, api);
  const std::vector<Array> primals = leading(operands, inputs_of(n));
  JvpResult r = rules.jvp(primals, argument_tangents(primals, tangents, loc));
  check_types(r.primals_out, n.results, "the rule of the " + rules.describe + " function", api);
  check_types(r.tangents_out, n.results,
              "the rule of the " + rules.describe + " function (its tangents)", api);
  return from_rule_outputs(n, std::move(r.primals_out), std::move(r.tangents_out));
}

// The rule traced, then partially evaluated: the ops that do not depend on a tangent go to the
// primal part (the enclosing trace), the others to the linear part.

// A value of the traced rule, and whether it is known without the tangents (its ops then go to
// the primal part, out of the innermost trace).
struct PartlyKnown {
  std::optional<Array> value;
  bool known = true;
};

// Partial evaluation of the traced rule: its parameters are the primals, their tangents and
// what the rule closes over; an op all of whose operands are known is staged one trace out.
struct RuleHooks {
  const Graph& rule;
  std::span<const Array> primals;
  const std::vector<Array>& arg_tangents;
  const std::vector<Array>& captured;
  std::size_t inputs;
  const std::source_location& loc;

  PartlyKnown on_parameter(std::size_t i, const Node&) {
    if (i < inputs) return {primals[i], true};
    if (i < 2 * inputs) return {arg_tangents[i - inputs], false};
    return {captured[i - 2 * inputs], true};
  }
  std::vector<PartlyKnown> apply(const Node& m, OperandValues<PartlyKnown> operands) {
    std::vector<Array> ops;
    bool all_known = true;
    for (const PartlyKnown* v : operands) {
      ops.push_back(*v->value);
      all_known = all_known && v->known;
    }
    std::vector<Array> applied;
    if (all_known) {
      detail::SuspendInnermostTrace outer;
      applied = detail::apply_node(rule, m, ops, loc);
    } else {
      applied = detail::apply_node(rule, m, ops, loc);
    }
    std::vector<PartlyKnown> out;
    for (Array& a : applied) out.push_back({std::move(a), all_known});
    return out;
  }
  PartlyKnown on_value_node(ValueId, const Node& m, OperandValues<PartlyKnown> operands) {
    return std::move(apply(m, operands).at(0));
  }
  std::vector<PartlyKnown> on_multi_result_node(ValueId, const Node& m,
                                                OperandValues<PartlyKnown> operands) {
    return apply(m, operands);
  }
};
ControlTangents linearize_custom_jvp(const Graph&, const Node& n, std::span<const Array> operands,
                                     std::span<const Tangent> tangents, const std::string& api,
                                     const std::source_location& loc) {
  const CustomRules& rules = rules_of(n, api);
  check_closure(n, tangents, api);
  const std::size_t inputs = inputs_of(n);
  const std::vector<Array> primals = leading(operands, inputs);
  const std::vector<TensorType> types = [&] {
    const std::vector<TensorType> primal_types = detail::value_types(primals);
    std::vector<TensorType> t = primal_types;
    t.insert(t.end(), primal_types.begin(), primal_types.end());
    return t;
  }();
  const detail::TracedRegion rule = detail::trace_region(
      {.name = "jvp",
       .function = "the rule of the " + rules.describe + " function",
       .api = api,
       .loc = loc},
      types, [&](const std::vector<Array>& params) {
        const std::vector<Array> p = leading(params, inputs);
        const std::vector<Array> t(params.begin() + static_cast<std::ptrdiff_t>(inputs),
                                   params.end());
        JvpResult r = rules.jvp(p, t);
        check_types(r.primals_out, n.results, "the rule of the " + rules.describe + " function",
                    api);
        check_types(r.tangents_out, n.results,
                    "the rule of the " + rules.describe + " function (its tangents)", api);
        std::vector<Array> out = r.primals_out;
        out.insert(out.end(), r.tangents_out.begin(), r.tangents_out.end());
        return out;
      });
  const Graph& rg = rule.graph;
  const std::vector<Array> arg_tangents = argument_tangents(primals, tangents, loc);
  RuleHooks hooks{rg, primals, arg_tangents, rule.captured, inputs, loc};
  const std::vector<PartlyKnown> values = evaluate_graph<PartlyKnown>(rg, hooks);
  std::vector<Array> outputs, out_tangents;
  for (std::size_t k = 0; k < values.size(); ++k) {
    if (k < n.results.size()) {
      if (!values[k].known)
        throw TransformError(api + ": the rule of the " + rules.describe +
                             " function computes its output " + std::to_string(k) +
                             " from the tangents; a rule's outputs are f's values");
      outputs.push_back(*values[k].value);
    } else {
      out_tangents.push_back(*values[k].value);
    }
  }
  return from_rule_outputs(n, std::move(outputs), std::move(out_tangents));
}

// The body and the rule batched together: the rule over the primals and, alike, their
// tangents.
std::vector<Batched> batch_custom_jvp(const Graph& g, const Node& n,
                                      std::span<const Batched> operands, std::int64_t batch_size,
                                      const std::string& api, const std::source_location& loc) {
  const std::size_t inputs = inputs_of(n);
  const std::vector<std::optional<int>> in_axes = argument_axes(n, operands, inputs, api);
  const CustomRules& rules = rules_of(n, api);
  auto batched = std::make_shared<CustomRules>(rules);
  const std::size_t outputs = n.results.size();
  std::vector<std::optional<int>> axes = in_axes;
  axes.insert(axes.end(), in_axes.begin(), in_axes.end());
  const ArrayFunction flat = vmap(
      [rule = rules.jvp, inputs](const std::vector<Array>& a) {
        JvpResult r =
            rule(leading(a, inputs),
                 std::vector<Array>(a.begin() + static_cast<std::ptrdiff_t>(inputs), a.end()));
        std::vector<Array> out = r.primals_out;
        out.insert(out.end(), r.tangents_out.begin(), r.tangents_out.end());
        return out;
      },
      {.in_axes = axes, .out_axes = {}}, loc);
  batched->jvp = [flat, outputs](const std::vector<Array>& p, const std::vector<Array>& t) {
    std::vector<Array> args = p;
    args.insert(args.end(), t.begin(), t.end());
    const std::vector<Array> out = flat(args);
    return JvpResult{
        leading(out, outputs),
        std::vector<Array>(out.begin() + static_cast<std::ptrdiff_t>(outputs), out.end())};
  };
  return batch_custom_function(g, n, operands, batch_size, std::move(batched), n.attrs, api, loc);
}

}  // namespace

void define_custom_jvp_primitive(Definitions& defs) {
  Primitive p =
      jax_names(transformation_only(row(OpKind::CustomJvp, "custom_jvp", OpClass::Control, -1)),
                "custom_jvp_call");
  p.control_jvp.fn = jvp_custom_jvp;
  p.control_linearize.fn = linearize_custom_jvp;
  p.control_transpose = none<ControlTransposeRule>(kCustomFunctionHasNoTranspose);
  p.control_batch.fn = batch_custom_jvp;
  p.regions = {1, 1, nullptr, body_signature<OpKind::CustomJvp, true>};
  p.evaluate_control = evaluate_body;
  p.count_attrs = kInputsCount;
  defs.add(std::move(p));
}

}  // namespace weft::prim
