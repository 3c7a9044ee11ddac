// custom_vjp: a function with its own reverse-mode rules. linearize calls fwd in the primal part
// and stages a custom_lin, whose transpose calls bwd, in the linear part; forward mode is
// refused, as in JAX; vmap batches fwd and bwd with the body.
#include "primitives/custom_attrs.h"
#include "primitives/custom_function.h"
#include "primitives/families.h"
#include "weft/error.h"
#include "weft/ops.h"
#include "weft/trace/trace.h"
#include "weft/transforms/vmap.h"

namespace weft::prim {

namespace {

using detail::Batched;
using detail::ControlTangents;
using detail::Tangent;

ControlTangents jvp_custom_vjp(const Graph&, const Node& n, std::span<const Array>,
                               std::span<const Tangent>, const std::string& api,
                               const std::source_location&) {
  throw TransformError(api + ": the " + rules_of(n, api).describe +
                       " function defines reverse-mode rules only; forward mode (jvp, jacfwd) "
                       "needs custom_jvp, as in JAX");
}

ControlTangents linearize_custom_vjp(const Graph&, const Node& n, std::span<const Array> operands,
                                     std::span<const Tangent> tangents, const std::string& api,
                                     const std::source_location& loc) {
  const CustomRules& rules = rules_of(n, api);
  check_closure(n, tangents, api);
  const std::size_t inputs = inputs_of(n);
  const std::vector<Array> primals = leading(operands, inputs);
  CustomVjpForward forward;
  {
    detail::SuspendInnermostTrace outer;
    forward = rules.fwd(primals);
  }
  check_types(forward.outputs, n.results, "fwd of the " + rules.describe + " function", api);
  auto lin = std::make_shared<CustomRules>();
  lin->describe = rules.describe;
  lin->bwd = rules.bwd;
  lin->inputs = detail::value_types(primals);
  lin->outputs = n.results;
  std::vector<Array> ops;
  for (std::size_t i = 0; i < inputs; ++i)
    if (detail::has_tangent(primals[i].dtype()))
      ops.push_back(detail::instantiate(tangents[i], lin->inputs[i], loc));
  const std::size_t tangent_operands = ops.size();
  for (const Array& r : forward.residuals) {
    if (!r.valid())
      throw TransformError(api + ": fwd of the " + rules.describe +
                           " function returned an empty residual");
    ops.push_back(r);
  }
  std::vector<TensorType> results;
  for (const TensorType& t : n.results)
    if (detail::has_tangent(t.dtype)) results.push_back(t);
  const std::vector<Array> lin_out = detail::bind_control(
      OpKind::CustomLin, ops, CustomLinAttrs{static_cast<std::int64_t>(tangent_operands)}.write(),
      {}, results, api, loc, std::move(lin));
  std::vector<Array> all_tangents;
  std::size_t next = 0;
  for (const TensorType& t : n.results)
    all_tangents.push_back(detail::has_tangent(t.dtype) ? lin_out[next++] : Array());
  return from_rule_outputs(n, std::move(forward.outputs), std::move(all_tangents));
}

// fwd batched over the arguments (outputs and residuals batched); bwd over everything, an
// unbatched argument's cotangent summed over the batch.
std::vector<Batched> batch_custom_vjp(const Graph& g, const Node& n,
                                      std::span<const Batched> operands, std::int64_t batch_size,
                                      const std::string& api, const std::source_location& loc) {
  const std::vector<std::optional<int>> in_axes = argument_axes(n, operands, inputs_of(n), api);
  const CustomRules& rules = rules_of(n, api);
  auto batched = std::make_shared<CustomRules>(rules);
  const std::size_t outputs = n.results.size();
  const ArrayFunction fwd = vmap(
      [rule = rules.fwd](const std::vector<Array>& a) {
        CustomVjpForward f = rule(a);
        std::vector<Array> out = f.outputs;
        out.insert(out.end(), f.residuals.begin(), f.residuals.end());
        return out;
      },
      {.in_axes = in_axes, .out_axes = {}}, loc);
  batched->fwd = [fwd, outputs](const std::vector<Array>& a) {
    const std::vector<Array> out = fwd(a);
    return CustomVjpForward{
        leading(out, outputs),
        std::vector<Array>(out.begin() + static_cast<std::ptrdiff_t>(outputs), out.end())};
  };
  batched->bwd = [rule = rules.bwd, in_axes, loc](const std::vector<Array>& residuals,
                                                  const std::vector<Array>& cotangents) {
    const std::size_t nr = residuals.size();
    std::vector<Array> args = residuals;
    args.insert(args.end(), cotangents.begin(), cotangents.end());
    std::vector<Array> cts = vmap(
        [rule, nr](const std::vector<Array>& a) {
          return rule(leading(a, nr),
                      std::vector<Array>(a.begin() + static_cast<std::ptrdiff_t>(nr), a.end()));
        },
        {}, loc)(args);
    for (std::size_t i = 0; i < cts.size() && i < in_axes.size(); ++i)
      if (!in_axes[i]) cts[i] = lax::reduce_sum(cts[i], {0}, loc);
    return cts;
  };
  return batch_custom_function(g, n, operands, batch_size, std::move(batched), n.attrs, api, loc);
}

}  // namespace

void define_custom_vjp_primitive(Definitions& defs) {
  Primitive p =
      jax_names(transformation_only(row(OpKind::CustomVjp, "custom_vjp", OpClass::Control, -1)),
                "custom_vjp_call");
  p.control_jvp.fn = jvp_custom_vjp;
  p.control_linearize.fn = linearize_custom_vjp;
  p.control_transpose = none<ControlTransposeRule>(kCustomFunctionHasNoTranspose);
  p.control_batch.fn = batch_custom_vjp;
  p.regions = {1, 1, nullptr, body_signature<OpKind::CustomVjp, true>};
  p.evaluate_control = evaluate_body;
  p.count_attrs = kInputsCount;
  defs.add(std::move(p));
}

}  // namespace weft::prim
