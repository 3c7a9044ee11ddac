#include "transforms/transpose_rules.h"

#include <algorithm>
#include <numeric>

#include "primitives/primitive.h"
#include "weft/error.h"
#include "weft/ops.h"
#include "weft/trace/trace.h"

namespace weft::detail {

namespace {

using namespace lax;

Array zeros_of(const TensorType& type, const std::source_location& loc) {
  const Array zero = constant(0, type.dtype, loc);
  return type.shape.empty() ? zero : broadcast_in_dim(zero, type.shape, {}, loc);
}

[[noreturn]] void not_linear(const Node& n, const std::string& api) {
  throw TransformError(api + ": " + std::string(op_name(n.op)) + " at " + n.origin.describe() +
                       " multiplies two values that both depend on the differentiated inputs "
                       "inside the linear part; this is a bug in weft's transformation rules");
}

}  // namespace

std::vector<Tangent> transpose_rule(const Node& n, const Array& ct,
                                    std::span<const std::optional<Array>> values,
                                    std::span<const TensorType> types,
                                    const std::vector<bool>& linear, const std::string& api,
                                    const std::source_location& loc) {
  // Migration to core/src/primitives/: a definition's rule wins over the switch below.
  const auto& rule = prim::primitive(n.op).transpose;
  if (rule.fn) return rule.fn(n, ct, values, types, linear, api, loc);
  if (!rule.refusal.empty())
    throw TransformError(api + ": " + std::string(rule.refusal) + " (" +
                         std::string(op_name(n.op)) + " at " + n.origin.describe() + ")");
  std::vector<Tangent> out(n.inputs.size());
  auto other = [&](std::size_t i) -> const Array& { return *values[i]; };
  switch (n.op) {
    case OpKind::Neg:
      out[0] = neg(ct, loc);
      break;
    case OpKind::Add:
      for (std::size_t i = 0; i < 2; ++i)
        if (linear[i]) out[i] = ct;
      break;
    case OpKind::Sub:
      if (linear[0]) out[0] = ct;
      if (linear[1]) out[1] = neg(ct, loc);
      break;
    case OpKind::Mul:
      if (linear[0] && linear[1]) not_linear(n, api);
      if (linear[0]) out[0] = mul(ct, other(1), loc);
      if (linear[1]) out[1] = mul(other(0), ct, loc);
      break;
    case OpKind::Div:
      if (linear[1]) not_linear(n, api);
      out[0] = div(ct, other(1), loc);
      break;
    case OpKind::Convert:
      out[0] = convert_element_type(ct, types[0].dtype, loc);
      break;
    case OpKind::Select: {
      if (linear[0]) not_linear(n, api);
      const Array zero = zeros_of({ct.dtype(), ct.shape()}, loc);
      if (linear[1]) out[1] = select(other(0), ct, zero, loc);
      if (linear[2]) out[2] = select(other(0), zero, ct, loc);
      break;
    }
    default:
      throw TransformError(api + ": " + std::string(op_name(n.op)) + " at " + n.origin.describe() +
                           " has no transpose rule, so reverse mode cannot pass through it");
  }
  // Only linear operands get cotangents.
  for (std::size_t i = 0; i < out.size(); ++i)
    if (out[i] && !linear[i]) out[i].reset();
  return out;
}

}  // namespace weft::detail
