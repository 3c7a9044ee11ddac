// vmap through a value primitive: its definition's rule (core/src/primitives/).
#include "transforms/batching_rules.h"

#include <numeric>

#include "primitives/primitive.h"
#include "weft/ops.h"

namespace weft::detail {

Array with_batch_axis(const Array& value, std::int64_t batch_size,
                      const std::source_location& loc) {
  Shape shape{batch_size};
  shape.insert(shape.end(), value.shape().begin(), value.shape().end());
  lax::Axes dims(value.shape().size());
  std::iota(dims.begin(), dims.end(), 1);
  return lax::broadcast_in_dim(value, shape, dims, loc);
}

Batched batch_rule(const Node& n, std::span<const Batched> operands, std::int64_t batch_size,
                   const std::string& api, const std::source_location& loc) {
  const auto& rule = prim::primitive(n.op).batch;
  if (!rule.fn) prim::refuse_value_rule(rule.refusal, n, api, "batching");
  return rule.fn(n, operands, batch_size, api, loc);
}

}  // namespace weft::detail
