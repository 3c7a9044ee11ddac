// vmap through a control op: its definition's rule (core/src/primitives/).
#include "primitives/primitive.h"
#include "transforms/control_rules.h"
#include "weft/error.h"

namespace weft::detail {

std::vector<Batched> batch_control(const Graph& g, const Node& n, std::span<const Batched> operands,
                                   std::int64_t batch_size, const std::string& api,
                                   const std::source_location& loc) {
  const auto& rule = prim::primitive(n.op).control_batch;
  if (rule.fn) return rule.fn(g, n, operands, batch_size, api, loc);
  if (!rule.refusal.empty()) refuse(rule.refusal, n, api);
  throw TransformError(api + ": " + std::string(op_name(n.op)) + " at " + n.origin.describe() +
                       " has no batching rule");
}

}  // namespace weft::detail
