// The rules of custom_call: custom_jvp calls its rule (partially evaluated under linearize),
// custom_vjp calls fwd in the primal part and stages a custom_lin whose transpose is bwd,
// checkpoint recomputes its body in the linear part. Under vmap the body and the rules are
// batched together.
#include "trace/array_impl.h"
#include "transforms/control_rules.h"
#include "transforms/custom_rules.h"
#include "transforms/jvp_graph.h"
#include "transforms/staging.h"
#include "weft/error.h"
#include "weft/ops.h"
#include "weft/transforms/vmap.h"

namespace weft::detail {

namespace {

const CustomRules& rules_of(const Node& n, const std::string& api) {
  if (n.attrs.get_string("kind") == "collective")
    throw TransformError(api + ": " + n.attrs.get_string("collective") + " at " +
                         n.origin.describe() + " (over the pmap axis '" +
                         n.attrs.get_string("axis_name") + "') is under " + api +
                         "; it has no rules of that kind");
  if (!n.custom)
    throw TransformError(api + ": custom_call at " + n.origin.describe() +
                         " has no rules (a graph parsed from text cannot be transformed through "
                         "a custom_call)");
  return *n.custom;
}

std::size_t inputs_of(const Node& n) {
  return static_cast<std::size_t>(n.attrs.get_int("inputs"));
}

// A value the function closes over must not be differentiated: its rules do not see it.
void check_closure(const Node& n, std::span<const Tangent> tangents, const std::string& api) {
  for (std::size_t i = inputs_of(n); i < tangents.size(); ++i)
    if (tangents[i])
      throw TransformError(api + ": the " + rules_of(n, api).describe +
                           " function closes over a value being differentiated; its rules "
                           "cannot see it. Pass it as an argument instead");
}

void check_types(const std::vector<Array>& got, std::span<const TensorType> want,
                 const std::string& what, const std::string& api) {
  if (got.size() != want.size())
    throw TransformError(api + ": " + what + " returned " + std::to_string(got.size()) +
                         " arrays; expected " + std::to_string(want.size()));
  for (std::size_t k = 0; k < got.size(); ++k)
    if (!got[k].valid() || got[k].dtype() != want[k].dtype || got[k].shape() != want[k].shape)
      throw TransformError(api + ": " + what + " returned " +
                           (got[k].valid() ? type_to_string({got[k].dtype(), got[k].shape()})
                                           : std::string("an empty Array")) +
                           " as array " + std::to_string(k) + "; expected " +
                           type_to_string(want[k]));
}

std::vector<TensorType> input_types(std::span<const Array> operands, std::size_t count) {
  return value_types(operands.subspan(0, count));
}

// The rule's tangents: one per argument, zeros where none.
std::vector<Array> argument_tangents(std::span<const Array> primals,
                                     std::span<const Tangent> tangents,
                                     const std::source_location& loc) {
  std::vector<Array> out;
  for (std::size_t i = 0; i < primals.size(); ++i)
    out.push_back(instantiate(tangents[i], {primals[i].dtype(), primals[i].shape()}, loc));
  return out;
}

ControlTangents from_rule_outputs(const Node& n, std::vector<Array> outputs,
                                  std::vector<Array> tangents) {
  ControlTangents r;
  r.results = std::move(outputs);
  for (std::size_t k = 0; k < n.results.size(); ++k)
    r.tangents.push_back(has_tangent(n.results[k].dtype) ? Tangent(std::move(tangents[k]))
                                                         : std::nullopt);
  return r;
}

// The collectives that are linear (psum, pmean, all_gather) applied to a tangent or a
// cotangent; pmax has no rule here.
Array linear_collective(const Node& n, const Array& x, const std::string& api,
                        const std::source_location& loc) {
  const std::string which = n.attrs.get_string("collective");
  if (which != "psum" && which != "pmean" && which != "all_gather")
    throw TransformError(api + ": " + which + " at " + n.origin.describe() +
                         " has no derivative rule under " + api +
                         " (psum, pmean and all_gather have)");
  const TensorType type = n.results.at(0);
  return stage_collective(which, {x}, type, n.attrs.get_string("axis_name"), loc);
}

// Forward mode through a collective: the same collective of the tangent.
ControlTangents jvp_collective(const Node& n, std::span<const Array> operands,
                               std::span<const Tangent> tangents, bool primal_outside,
                               const std::string& api, const std::source_location& loc) {
  const std::string which = n.attrs.get_string("collective");
  const std::string axis = n.attrs.get_string("axis_name");
  std::vector<Array> ops(operands.begin(), operands.end());
  Array primal;
  if (primal_outside) {
    SuspendInnermostTrace outer;
    primal = stage_collective(which, ops, n.results.at(0), axis, loc);
  } else {
    primal = stage_collective(which, ops, n.results.at(0), axis, loc);
  }
  ControlTangents r;
  r.results.push_back(primal);
  r.tangents.push_back(tangents.empty() || !tangents[0]
                           ? std::nullopt
                           : Tangent(linear_collective(n, *tangents[0], api, loc)));
  return r;
}

}  // namespace

ControlTangents jvp_custom(const Graph& g, const Node& n, std::span<const Array> operands,
                           std::span<const Tangent> tangents, const std::string& api,
                           const std::source_location& loc) {
  const std::string kind = n.attrs.get_string("kind");
  if (kind == "collective") return jvp_collective(n, operands, tangents, false, api, loc);
  if (kind == "checkpoint") {
    JvpValues v =
        jvp_graph(region_of(g, n, 0), operands, tangents, PrimalPlacement::here, api, loc);
    return {std::move(v.primals), std::move(v.tangents)};
  }
  const CustomRules& rules = rules_of(n, api);
  if (kind == "custom_vjp")
    throw TransformError(api + ": the " + rules.describe +
                         " function defines reverse-mode rules only; forward mode (jvp, jacfwd) "
                         "needs custom_jvp, as in JAX");
  if (kind != "custom_jvp")
    throw TransformError(api + ": " + kind + " at " + n.origin.describe() +
                         " has no forward-mode rule");
  check_closure(n, tangents, api);
  const std::size_t inputs = inputs_of(n);
  const std::vector<Array> primals(operands.begin(),
                                   operands.begin() + static_cast<std::ptrdiff_t>(inputs));
  JvpResult r = rules.jvp(primals, argument_tangents(primals, tangents, loc));
  check_types(r.primals_out, n.results, "the rule of the " + rules.describe + " function", api);
  check_types(r.tangents_out, n.results,
              "the rule of the " + rules.describe + " function (its tangents)", api);
  return from_rule_outputs(n, std::move(r.primals_out), std::move(r.tangents_out));
}

ControlTangents linearize_custom(const Graph& g, const Node& n, std::span<const Array> operands,
                                 std::span<const Tangent> tangents, const std::string& api,
                                 const std::source_location& loc) {
  const std::string kind = n.attrs.get_string("kind");
  if (kind == "collective") return jvp_collective(n, operands, tangents, true, api, loc);
  if (kind == "checkpoint") {
    // The primal part computes the outputs; the linear part recomputes the body's values from
    // its operands (residuals) instead of storing them.
    const Graph body = region_of(g, n, 0);
    std::vector<Array> outputs;
    {
      SuspendInnermostTrace outer;
      outputs = eval_graph(body, operands, loc);
    }
    JvpValues v = jvp_graph(body, operands, tangents, PrimalPlacement::here, api, loc);
    return {std::move(outputs), std::move(v.tangents)};
  }
  const CustomRules& rules = rules_of(n, api);
  check_closure(n, tangents, api);
  const std::size_t inputs = inputs_of(n);
  const std::vector<Array> primals(operands.begin(),
                                   operands.begin() + static_cast<std::ptrdiff_t>(inputs));
  if (kind == "custom_vjp") {
    CustomVjpForward forward;
    {
      SuspendInnermostTrace outer;
      forward = rules.fwd(primals);
    }
    check_types(forward.outputs, n.results, "fwd of the " + rules.describe + " function", api);
    auto lin = std::make_shared<CustomRules>();
    lin->describe = rules.describe;
    lin->bwd = rules.bwd;
    lin->inputs = input_types(operands, inputs);
    lin->outputs = n.results;
    std::vector<Array> ops;
    for (std::size_t i = 0; i < inputs; ++i)
      if (has_tangent(primals[i].dtype()))
        ops.push_back(instantiate(tangents[i], lin->inputs[i], loc));
    const std::size_t tangent_operands = ops.size();
    for (const Array& r : forward.residuals) {
      if (!r.valid())
        throw TransformError(api + ": fwd of the " + rules.describe +
                             " function returned an empty residual");
      ops.push_back(r);
    }
    std::vector<TensorType> results;
    for (const TensorType& t : n.results)
      if (has_tangent(t.dtype)) results.push_back(t);
    Attrs attrs;
    attrs.set("kind", std::string("custom_lin"));
    attrs.set("tangents", static_cast<std::int64_t>(tangent_operands));
    const std::vector<Array> lin_out =
        bind_control(OpKind::CustomCall, ops, attrs, {}, results, api, loc, std::move(lin));
    std::vector<Array> all_tangents;
    std::size_t next = 0;
    for (const TensorType& t : n.results)
      all_tangents.push_back(has_tangent(t.dtype) ? lin_out[next++] : Array());
    return from_rule_outputs(n, std::move(forward.outputs), std::move(all_tangents));
  }
  if (kind != "custom_jvp")
    throw TransformError(api + ": " + kind + " at " + n.origin.describe() +
                         " has no reverse-mode rule");
  // custom_jvp: the rule traced, then partially evaluated: the ops that do not depend on a
  // tangent go to the primal part (the enclosing trace), the others to the linear part.
  const std::vector<TensorType> types = [&] {
    const std::vector<TensorType> primal_types = input_types(operands, inputs);
    std::vector<TensorType> t = primal_types;
    t.insert(t.end(), primal_types.begin(), primal_types.end());
    return t;
  }();
  const TracedRegion rule = trace_region(
      {.name = "jvp",
       .function = "the rule of the " + rules.describe + " function",
       .api = api,
       .loc = loc},
      types, [&](const std::vector<Array>& params) {
        const std::vector<Array> p(params.begin(),
                                   params.begin() + static_cast<std::ptrdiff_t>(inputs));
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
  std::vector<std::optional<Array>> value(rg.nodes.size());
  std::vector<bool> known(rg.nodes.size(), true);
  const std::vector<Array> arg_tangents = argument_tangents(primals, tangents, loc);
  for (std::size_t i = 0; i < rg.params.size(); ++i) {
    const auto id = static_cast<std::size_t>(rg.params[i]);
    if (i < inputs) {
      value[id] = primals[i];
    } else if (i < 2 * inputs) {
      value[id] = arg_tangents[i - inputs];
      known[id] = false;
    } else {
      value[id] = rule.captured[i - 2 * inputs];
    }
  }
  std::vector<Array> results;
  bool results_known = true;
  for (std::size_t id = 0; id < rg.nodes.size(); ++id) {
    const Node& m = rg.nodes[id];
    if (m.op == OpKind::Parameter) continue;
    if (m.op == OpKind::Result) {
      value[id] = results.at(static_cast<std::size_t>(m.attrs.get_int("index")));
      known[id] = results_known;
      continue;
    }
    std::vector<Array> ops;
    bool all_known = true;
    for (ValueId input : m.inputs) {
      ops.push_back(*value[static_cast<std::size_t>(input)]);
      all_known = all_known && known[static_cast<std::size_t>(input)];
    }
    std::vector<Array> applied;
    if (all_known) {
      SuspendInnermostTrace outer;
      applied = apply_node(rg, m, ops, loc);
    } else {
      applied = apply_node(rg, m, ops, loc);
    }
    if (is_multi_result(m.op)) {
      results = std::move(applied);
      results_known = all_known;
    } else {
      value[id] = std::move(applied.at(0));
      known[id] = all_known;
    }
  }
  std::vector<Array> outputs, out_tangents;
  for (std::size_t k = 0; k < rg.outputs.size(); ++k) {
    const auto o = static_cast<std::size_t>(rg.outputs[k]);
    if (k < n.results.size()) {
      if (!known[o])
        throw TransformError(api + ": the rule of the " + rules.describe +
                             " function computes its output " + std::to_string(k) +
                             " from the tangents; a rule's outputs are f's values");
      outputs.push_back(*value[o]);
    } else {
      out_tangents.push_back(*value[o]);
    }
  }
  return from_rule_outputs(n, std::move(outputs), std::move(out_tangents));
}

std::vector<Tangent> transpose_custom(const Node& n, std::span<const Tangent> result_cotangents,
                                      std::span<const std::optional<Array>> operands,
                                      const std::vector<bool>& linear, const std::string& api,
                                      const std::source_location& loc) {
  const std::string kind = n.attrs.get_string("kind");
  if (kind == "collective") {
    // psum and pmean are their own transposes across the devices; all_gather's is the sum of
    // every device's cotangent row for this device.
    const std::string which = n.attrs.get_string("collective");
    std::vector<Tangent> out(operands.size());
    if (!result_cotangents[0] || operands.empty() || !linear[0]) return out;
    const std::string axis = n.attrs.get_string("axis_name");
    const Array& ct = *result_cotangents[0];
    if (which == "all_gather") {
      const Array summed = stage_collective("psum", {ct}, {ct.dtype(), ct.shape()}, axis, loc);
      const Array index = stage_collective("axis_index", {}, {DType::I32, {}}, axis, loc);
      std::vector<Array> starts{index};
      Shape sizes = ct.shape();
      sizes[0] = 1;
      for (std::size_t d = 1; d < sizes.size(); ++d) starts.push_back(Array::scalar_int(0));
      const Array row = lax::dynamic_slice(summed, starts, sizes, loc);
      out[0] = lax::reshape(row, Shape(ct.shape().begin() + 1, ct.shape().end()), loc);
    } else {
      out[0] = linear_collective(n, ct, api, loc);
    }
    return out;
  }
  if (kind != "custom_lin")
    throw TransformError(api + ": " + kind + " at " + n.origin.describe() +
                         " is applied to a value being differentiated in the linear part of the "
                         "computation; it has no transpose");
  const CustomRules& rules = rules_of(n, api);
  const auto tangent_operands = static_cast<std::size_t>(n.attrs.get_int("tangents"));
  std::vector<Array> residuals;
  for (std::size_t i = tangent_operands; i < operands.size(); ++i) {
    if (linear[i] || !operands[i])
      throw TransformError(api + ": the residuals of the " + rules.describe +
                           " function depend on a value being differentiated (a bug in weft)");
    residuals.push_back(*operands[i]);
  }
  // bwd takes a cotangent per output (zeros for outputs without one).
  std::vector<Array> cotangents;
  std::size_t next = 0;
  for (const TensorType& t : rules.outputs) {
    if (!has_tangent(t.dtype)) {
      cotangents.push_back(zeros_of(t, loc));
      continue;
    }
    cotangents.push_back(instantiate(result_cotangents[next++], t, loc));
  }
  const std::vector<Array> input_cts = rules.bwd(residuals, cotangents);
  check_types(input_cts, rules.inputs, "bwd of the " + rules.describe + " function", api);
  std::vector<Tangent> out(operands.size());
  next = 0;
  for (std::size_t i = 0; i < rules.inputs.size(); ++i) {
    if (!has_tangent(rules.inputs[i].dtype)) continue;
    if (linear[next]) out[next] = input_cts[i];
    ++next;
  }
  return out;
}

std::vector<Batched> batch_custom(const Graph& g, const Node& n, std::span<const Batched> operands,
                                  std::int64_t batch_size, const std::string& api,
                                  const std::source_location& loc) {
  const std::string kind = n.attrs.get_string("kind");
  if (kind == "collective")
    throw TransformError(api + ": " + n.attrs.get_string("collective") + " at " +
                         n.origin.describe() + " (over the pmap axis '" +
                         n.attrs.get_string("axis_name") +
                         "') is under vmap inside the pmapped function; not supported yet");
  if (kind == "custom_lin")
    throw TransformError(api +
                         ": the linear part of a custom_vjp function cannot be batched "
                         "(a bug in weft: it should only be transposed)");
  const std::size_t inputs = kind == "checkpoint" ? operands.size() : inputs_of(n);
  std::vector<std::optional<int>> in_axes;
  std::vector<Array> ops;
  for (std::size_t i = 0; i < operands.size(); ++i) {
    if (i >= inputs && operands[i].batched)
      throw TransformError(api + ": the " + rules_of(n, api).describe +
                           " function closes over a batched value; its rules cannot see it. "
                           "Pass it as an argument instead");
    ops.push_back(operands[i].value);
    if (i < inputs) in_axes.push_back(operands[i].batched ? std::optional<int>(0) : std::nullopt);
  }
  // The body batched, every output with the batch axis in front.
  const Graph body = region_of(g, n, 0);
  TracedRegion batched_body = trace_region(
      transformed_region(n, 0, api, loc), value_types(ops), [&](const std::vector<Array>& params) {
        std::vector<Batched> in;
        for (std::size_t i = 0; i < params.size(); ++i)
          in.push_back({params[i], operands[i].batched});
        std::vector<Array> out;
        for (const Batched& b : vmap_graph(body, in, batch_size, loc))
          out.push_back(b.batched ? b.value : with_batch_axis(b.value, batch_size, loc));
        return out;
      });
  std::vector<TensorType> results;
  for (TensorType t : n.results) {
    t.shape.insert(t.shape.begin(), batch_size);
    results.push_back(std::move(t));
  }
  std::shared_ptr<const CustomRules> batched_rules = n.custom;
  if (kind != "checkpoint") {
    const CustomRules& rules = rules_of(n, api);
    auto b = std::make_shared<CustomRules>(rules);
    const std::size_t outputs = n.results.size();
    if (kind == "custom_jvp") {
      // The rule batched over the primals and, alike, their tangents.
      std::vector<std::optional<int>> axes = in_axes;
      axes.insert(axes.end(), in_axes.begin(), in_axes.end());
      const ArrayFunction flat = vmap(
          [rule = rules.jvp, inputs](const std::vector<Array>& a) {
            JvpResult r =
                rule(std::vector<Array>(a.begin(), a.begin() + static_cast<std::ptrdiff_t>(inputs)),
                     std::vector<Array>(a.begin() + static_cast<std::ptrdiff_t>(inputs), a.end()));
            std::vector<Array> out = r.primals_out;
            out.insert(out.end(), r.tangents_out.begin(), r.tangents_out.end());
            return out;
          },
          {.in_axes = axes, .out_axes = {}}, loc);
      b->jvp = [flat, outputs](const std::vector<Array>& p, const std::vector<Array>& t) {
        std::vector<Array> args = p;
        args.insert(args.end(), t.begin(), t.end());
        const std::vector<Array> out = flat(args);
        return JvpResult{
            std::vector<Array>(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(outputs)),
            std::vector<Array>(out.begin() + static_cast<std::ptrdiff_t>(outputs), out.end())};
      };
    } else {
      // fwd batched over the arguments (outputs and residuals batched); bwd over everything,
      // an unbatched argument's cotangent summed over the batch.
      const ArrayFunction fwd = vmap(
          [rule = rules.fwd](const std::vector<Array>& a) {
            CustomVjpForward f = rule(a);
            std::vector<Array> out = f.outputs;
            out.insert(out.end(), f.residuals.begin(), f.residuals.end());
            return out;
          },
          {.in_axes = in_axes, .out_axes = {}}, loc);
      b->fwd = [fwd, outputs](const std::vector<Array>& a) {
        const std::vector<Array> out = fwd(a);
        return CustomVjpForward{
            std::vector<Array>(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(outputs)),
            std::vector<Array>(out.begin() + static_cast<std::ptrdiff_t>(outputs), out.end())};
      };
      b->bwd = [rule = rules.bwd, in_axes, loc](const std::vector<Array>& residuals,
                                                const std::vector<Array>& cotangents) {
        const std::size_t nr = residuals.size();
        std::vector<Array> args = residuals;
        args.insert(args.end(), cotangents.begin(), cotangents.end());
        std::vector<Array> cts = vmap(
            [rule, nr](const std::vector<Array>& a) {
              return rule(
                  std::vector<Array>(a.begin(), a.begin() + static_cast<std::ptrdiff_t>(nr)),
                  std::vector<Array>(a.begin() + static_cast<std::ptrdiff_t>(nr), a.end()));
            },
            {}, loc)(args);
        for (std::size_t i = 0; i < cts.size() && i < in_axes.size(); ++i)
          if (!in_axes[i]) cts[i] = lax::reduce_sum(cts[i], {0}, loc);
        return cts;
      };
    }
    batched_rules = std::move(b);
  }
  std::vector<Graph> regions;
  regions.push_back(std::move(batched_body.graph));
  std::vector<Array> all_ops = ops;
  all_ops.insert(all_ops.end(), batched_body.captured.begin(), batched_body.captured.end());
  Attrs attrs = n.attrs;
  if (kind == "checkpoint") attrs.set("inputs", static_cast<std::int64_t>(all_ops.size()));
  const std::vector<Array> out = stage_custom_call(all_ops, attrs, std::move(regions), results,
                                                   std::move(batched_rules), api, loc);
  std::vector<Batched> batched;
  for (const Array& a : out) batched.push_back({a, true});
  return batched;
}

}  // namespace weft::detail
