// Reverse mode's transpose of a linear value primitive: its definition's rule
// (core/src/primitives/).
#include "transforms/transpose_rules.h"

#include "primitives/primitive.h"

namespace weft::detail {

std::vector<Tangent> transpose_rule(const Node& n, const Array& ct,
                                    std::span<const std::optional<Array>> values,
                                    std::span<const TensorType> types,
                                    const std::vector<bool>& linear, const std::string& api,
                                    const std::source_location& loc) {
  const auto& rule = prim::primitive(n.op).transpose;
  if (!rule.fn) prim::refuse_value_rule(rule.refusal, n, api, "transpose");
  return rule.fn(n, ct, values, types, linear, api, loc);
}

}  // namespace weft::detail
