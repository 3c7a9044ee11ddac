// custom_lin: the linear part of a custom_vjp function, staged by its linearize rule. Its only
// rule is its transpose, which calls bwd on the residuals fwd returned.
#include "ir/region_checks.h"
#include "primitives/custom_attrs.h"
#include "primitives/custom_function.h"
#include "primitives/families.h"
#include "transforms/staging.h"
#include "weft/error.h"

namespace weft::prim {

namespace {

using detail::Tangent;

std::vector<Tangent> transpose_custom_lin(const Graph&, const Node& n,
                                          std::span<const Tangent> result_cotangents,
                                          std::span<const std::optional<Array>> operands,
                                          const std::vector<bool>& linear, const std::string& api,
                                          const std::source_location& loc) {
  const CustomRules& rules = rules_of(n, api);
  const auto tangent_operands = static_cast<std::size_t>(CustomLinAttrs::read(n.attrs).tangents);
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
    if (!detail::has_tangent(t.dtype)) {
      cotangents.push_back(detail::zeros_of(t, loc));
      continue;
    }
    cotangents.push_back(detail::instantiate(result_cotangents[next++], t, loc));
  }
  const std::vector<Array> input_cts = rules.bwd(residuals, cotangents);
  check_types(input_cts, rules.inputs, "bwd of the " + rules.describe + " function", api);
  std::vector<Tangent> out(operands.size());
  next = 0;
  for (std::size_t i = 0; i < rules.inputs.size(); ++i) {
    if (!detail::has_tangent(rules.inputs[i].dtype)) continue;
    if (linear[next]) out[next] = input_cts[i];
    ++next;
  }
  return out;
}

std::vector<RegionSignature> no_body(std::span<const TensorType> operands, const Attrs& attrs,
                                     std::span<const TensorType>, std::size_t num_regions) {
  region_checks::count_attr(OpKind::CustomLin, attrs, CustomLinAttrs::kTangents, operands.size());
  region_checks::expect_regions(OpKind::CustomLin, num_regions, 0);
  return {};
}

std::vector<interp::Value> evaluate_custom_lin(const Node&, interp::Operands,
                                               const interp::RunGraph&) {
  throw InvalidGraphError(
      "interpret: custom_lin has no body: the linear part of a custom_vjp function only has a "
      "transpose; differentiate with grad or vjp instead of evaluating it");
}

constexpr CountAttr kTangentsCount[] = {{CustomLinAttrs::kTangents, "a count of operands"}};

}  // namespace

void define_custom_lin_primitive(Definitions& defs) {
  Primitive p = transformation_only(row(OpKind::CustomLin, "custom_lin", OpClass::Control, -1));
  p.control_jvp = none<ControlJvpRule>(
      "the linear part of a custom_vjp function has no forward-mode rule; it is only transposed");
  p.control_linearize = none<ControlJvpRule>(
      "the linear part of a custom_vjp function has no reverse-mode rule; it is only transposed");
  p.control_transpose.fn = transpose_custom_lin;
  p.regions = {0, 0, nullptr, no_body};
  p.evaluate_control = evaluate_custom_lin;
  p.count_attrs = kTangentsCount;
  p.control_batch = none<ControlBatchRule>(
      "the linear part of a custom_vjp function cannot be batched (a bug in weft: it should only "
      "be transposed)");
  defs.add(std::move(p));
}

}  // namespace weft::prim
