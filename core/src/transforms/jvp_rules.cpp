// Forward mode through a value primitive: its definition's rule (core/src/primitives/).
#include "transforms/jvp_rules.h"

#include "primitives/primitive.h"
#include "weft/ops.h"

namespace weft::detail {

bool has_tangent(DType dtype) {
  return is_float(dtype);
}

Array zeros_like_value(const Array& like, const std::source_location& loc) {
  const Array zero = lax::constant(0, like.dtype(), loc);
  if (like.shape().empty()) return zero;
  return lax::broadcast_in_dim(zero, like.shape(), {}, loc);
}

Tangent jvp_rule(const Node& n, std::span<const Array> primals, std::span<const Tangent> tangents,
                 const Array& result, const std::source_location& loc) {
  if (!has_tangent(n.dtype)) return std::nullopt;
  bool any = false;
  for (const Tangent& t : tangents) any = any || t.has_value();
  if (!any) return std::nullopt;
  const auto& rule = prim::primitive(n.op).jvp;
  if (!rule.fn) prim::refuse_value_rule(rule.refusal, n, "jvp", "forward-mode");
  return rule.fn(n, primals, tangents, result, loc);
}

}  // namespace weft::detail
