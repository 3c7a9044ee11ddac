#include "weft/ir/shape_rules.h"

#include "primitives/primitive.h"
#include "weft/error.h"

namespace weft {

std::string type_to_string(const TensorType& t) {
  return std::string(dtype_name(t.dtype)) + shape_to_string(t.shape);
}

namespace {

std::string operands_to_string(std::span<const TensorType> operands) {
  std::string s;
  for (std::size_t i = 0; i < operands.size(); ++i) {
    if (i) s += ", ";
    s += type_to_string(operands[i]);
  }
  return s;
}

[[noreturn]] void shape_fail(OpKind op, std::span<const TensorType> operands,
                             const std::string& what) {
  throw ShapeError(std::string(op_name(op)) + ": " + what +
                   " (operands: " + operands_to_string(operands) + ")");
}

[[noreturn]] void dtype_fail(OpKind op, std::span<const TensorType> operands,
                             const std::string& what) {
  throw DTypeError(std::string(op_name(op)) + ": " + what +
                   " (operands: " + operands_to_string(operands) + ")");
}

void expect_arity(OpKind op, std::span<const TensorType> operands, std::size_t n) {
  if (operands.size() != n)
    shape_fail(
        op, operands,
        "expects " + std::to_string(n) + " operand(s), got " + std::to_string(operands.size()));
}

bool needs_float(OpKind op) {
  switch (op) {
    case OpKind::Floor:
    case OpKind::Ceil:
    case OpKind::Round:
    case OpKind::Exp:
    case OpKind::Exp2:
    case OpKind::Log:
    case OpKind::Log1p:
    case OpKind::Expm1:
    case OpKind::Sqrt:
    case OpKind::Rsqrt:
    case OpKind::Sin:
    case OpKind::Cos:
    case OpKind::Tan:
    case OpKind::Tanh:
    case OpKind::Logistic:
    case OpKind::Erf:
    case OpKind::Atan2:
      return true;
    default:
      return false;
  }
}

bool is_logical(OpKind op) {
  return op == OpKind::Not || op == OpKind::And || op == OpKind::Or || op == OpKind::Xor;
}

void check_elementwise_dtype(OpKind op, std::span<const TensorType> operands, DType t) {
  if (needs_float(op) && !is_float(t))
    dtype_fail(op, operands,
               "needs a floating-point operand (f32 or f64), got " + std::string(dtype_name(t)) +
                   "; convert the operand first");
  if (is_logical(op) && is_float(t))
    dtype_fail(op, operands, "needs a bool or integer operand, got " + std::string(dtype_name(t)));
  if (!is_logical(op) && t == DType::Bool)
    dtype_fail(
        op, operands,
        "is not defined for bool operands; convert to an integer type or use and/or/xor/not");
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

  // Migration to core/src/primitives/: a definition's type rule wins over the switch below.
  if (auto rule = prim::primitive(op).type) return rule(op, operands, attrs, declared);
  switch (info.op_class) {
    case OpClass::Leaf: {
      if (op == OpKind::Parameter) {
        if (attrs.get_int("index") < 0) shape_fail(op, operands, "negative parameter index");
        return declared;
      }
      if (op == OpKind::Constant) {
        if (!declared.shape.empty())
          shape_fail(
              op, operands,
              "constants are scalars; broadcast_in_dim them to " + shape_to_string(declared.shape));
        attrs.get_float("value");
        if (!is_float(declared.dtype) &&
            !std::holds_alternative<std::int64_t>(*attrs.find("value")))
          dtype_fail(
              op, operands,
              "a " + std::string(dtype_name(declared.dtype)) + " constant needs an integer value");
        return declared;
      }
      // Iota.
      if (declared.dtype == DType::Bool) dtype_fail(op, operands, "iota cannot produce bool");
      std::int64_t dim = attrs.get_int("dimension");
      if (dim < 0 || dim >= static_cast<std::int64_t>(declared.shape.size()))
        shape_fail(op, operands,
                   "dimension=" + std::to_string(dim) + " is outside the result shape " +
                       shape_to_string(declared.shape));
      return declared;
    }
    case OpClass::Unary: {
      check_elementwise_dtype(op, operands, operands[0].dtype);
      return operands[0];
    }
    case OpClass::Binary:
    case OpClass::Compare: {
      if (operands[0].shape != operands[1].shape)
        shape_fail(op, operands, "operand shapes differ; broadcast them to one shape first");
      if (operands[0].dtype != operands[1].dtype)
        dtype_fail(op, operands, "operand dtypes differ; convert one of them");
      if (info.op_class == OpClass::Compare) {
        if (operands[0].dtype == DType::Bool && op != OpKind::Eq && op != OpKind::Ne)
          dtype_fail(op, operands, "ordering comparisons are not defined for bool");
        return {DType::Bool, operands[0].shape};
      }
      check_elementwise_dtype(op, operands, operands[0].dtype);
      return operands[0];
    }
    case OpClass::Select: {
      if (operands[0].dtype != DType::Bool) dtype_fail(op, operands, "the predicate must be bool");
      if (operands[0].shape != operands[1].shape || operands[1].shape != operands[2].shape)
        shape_fail(op, operands, "predicate and both branches must have one shape");
      if (operands[1].dtype != operands[2].dtype)
        dtype_fail(op, operands, "both branches must have the same dtype");
      return operands[1];
    }
    case OpClass::Convert:
      return {declared.dtype, operands[0].shape};
    case OpClass::Layout:
    case OpClass::Reduce:
    case OpClass::Dot:
    case OpClass::Result:
    case OpClass::Host:
    case OpClass::Token:
      break;  // their definitions under core/src/primitives/ give their types
    case OpClass::Control:
      throw InvalidGraphError(std::string(op_name(op)) +
                              " has several results: verify checks them with the op's rules");
  }

  shape_fail(op, operands, "has no shape rule");
}

}  // namespace weft
