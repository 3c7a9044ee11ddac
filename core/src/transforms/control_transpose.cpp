// Reverse mode's second half through the linear control ops that linearize_control makes: the
// definition's rule (core/src/primitives/).
#include "primitives/primitive.h"
#include "transforms/control_rules.h"
#include "weft/error.h"

namespace weft::detail {

std::vector<Tangent> transpose_control(const Graph& g, const Node& n,
                                       std::span<const Tangent> result_cotangents,
                                       std::span<const std::optional<Array>> operands,
                                       const std::vector<bool>& linear, const std::string& api,
                                       const std::source_location& loc) {
  const auto& rule = prim::primitive(n.op).control_transpose;
  if (rule.fn) return rule.fn(g, n, result_cotangents, operands, linear, api, loc);
  if (!rule.refusal.empty()) refuse(rule.refusal, n, api);
  throw TransformError(api + ": " + std::string(op_name(n.op)) + " at " + n.origin.describe() +
                       " is applied to a value being differentiated in the linear part of "
                       "the computation; it has no transpose");
}

}  // namespace weft::detail
