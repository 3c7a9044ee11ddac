// infer_type: the checks every op shares (arity, no negative dimensions), then the type rule of
// the op's definition (core/src/primitives/).
#include "weft/ir/shape_rules.h"

#include "primitives/primitive.h"
#include "primitives/type_rule_checks.h"
#include "weft/error.h"

namespace weft {

std::string type_to_string(const TensorType& t) {
  return std::string(dtype_name(t.dtype)) + shape_to_string(t.shape);
}

namespace {

using prim::shape_fail;

void expect_arity(OpKind op, std::span<const TensorType> operands, std::size_t n) {
  if (operands.size() != n)
    shape_fail(
        op, operands,
        "expects " + std::to_string(n) + " operand(s), got " + std::to_string(operands.size()));
}

}  // namespace

TensorType infer_type(OpKind op, std::span<const TensorType> operands, const Attrs& attrs,
                      const TensorType& declared) {
  const OpInfo& info = op_info(op);
  if (info.arity >= 0) expect_arity(op, operands, static_cast<std::size_t>(info.arity));
  for (const auto& t : operands)
    for (auto d : t.shape)
      if (d < 0) shape_fail(op, operands, "negative dimension");
  for (auto d : declared.shape)
    if (d < 0)
      shape_fail(op, operands,
                 "result shape " + shape_to_string(declared.shape) + " has a negative dimension");
  if (const auto rule = prim::primitive(op).type) return rule(op, operands, attrs, declared);
  if (info.op_class == OpClass::Control)
    throw InvalidGraphError(std::string(op_name(op)) +
                            " has several results: verify checks them with the op's rules");
  shape_fail(op, operands, "has no shape rule");
}

}  // namespace weft
