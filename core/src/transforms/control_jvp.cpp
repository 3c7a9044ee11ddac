// Forward mode through a control op: its definition's rule (core/src/primitives/).
#include "primitives/primitive.h"
#include "transforms/control_rules.h"
#include "weft/error.h"

namespace weft::detail {

ControlTangents jvp_control(const Graph& g, const Node& n, std::span<const Array> operands,
                            std::span<const Tangent> tangents, const std::string& api,
                            const std::source_location& loc) {
  const auto& rule = prim::primitive(n.op).control_jvp;
  if (rule.fn) return rule.fn(g, n, operands, tangents, api, loc);
  if (!rule.refusal.empty()) refuse(rule.refusal, n, api);
  throw TransformError(api + ": " + std::string(op_name(n.op)) + " at " + n.origin.describe() +
                       " has no forward-mode rule");
}

}  // namespace weft::detail
