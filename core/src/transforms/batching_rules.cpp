#include "transforms/batching_rules.h"

#include <algorithm>
#include <numeric>
#include <vector>

#include "primitives/primitive.h"
#include "weft/control_flow.h"
#include "weft/error.h"
#include "weft/ops.h"
#include "weft/trace/trace.h"

namespace weft::detail {

namespace {

using namespace lax;

Shape with_leading(std::int64_t size, const Shape& shape) {
  Shape out{size};
  out.insert(out.end(), shape.begin(), shape.end());
  return out;
}

Array batched_value(const Batched& b, std::int64_t batch_size, const std::source_location& loc) {
  return b.batched ? b.value : with_batch_axis(b.value, batch_size, loc);
}

[[noreturn]] void unsupported(const Node& n, const std::string& api, const std::string& what) {
  throw TransformError(api + ": " + std::string(op_name(n.op)) + " at " + n.origin.describe() +
                       " " + what);
}

}  // namespace

Array with_batch_axis(const Array& value, std::int64_t batch_size,
                      const std::source_location& loc) {
  Axes dims(value.shape().size());
  std::iota(dims.begin(), dims.end(), 1);
  return broadcast_in_dim(value, with_leading(batch_size, value.shape()), dims, loc);
}

Batched batch_rule(const Node& n, std::span<const Batched> operands, std::int64_t batch_size,
                   const std::string& api, const std::source_location& loc) {
  // Migration to core/src/primitives/: a definition's rule wins over the switch below.
  const auto& rule = prim::primitive(n.op).batch;
  if (rule.fn) return rule.fn(n, operands, batch_size, api, loc);
  if (!rule.refusal.empty())
    throw TransformError(api + ": " + std::string(rule.refusal) + " (" +
                         std::string(op_name(n.op)) + " at " + n.origin.describe() + ")");
  const TensorType result{n.dtype, with_leading(batch_size, n.shape)};
  auto all_batched = [&] {
    std::vector<Array> out;
    for (const Batched& b : operands) out.push_back(batched_value(b, batch_size, loc));
    return out;
  };
  Attrs attrs = n.attrs;
  switch (op_info(n.op).op_class) {
    case OpClass::Unary:
    case OpClass::Convert:
    case OpClass::Binary:
    case OpClass::Compare:
    case OpClass::Select:
      return {bind(n.op, all_batched(), attrs, result, loc), true};
    default:
      unsupported(n, api, "is not a value primitive; this is a bug in weft's vmap");
  }
}

}  // namespace weft::detail
