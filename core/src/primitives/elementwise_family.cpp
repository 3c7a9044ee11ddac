#include "primitives/elementwise_family.h"

#include "primitives/type_rule_checks.h"

#include "weft/error.h"
#include "weft/ops.h"
#include "weft/trace/trace.h"

namespace weft::prim::elementwise {

void shape_error(OpKind op, std::span<const TensorType> operands, const std::string& what) {
  shape_fail(op, operands, what);
}

void dtype_error(OpKind op, std::span<const TensorType> operands, const std::string& what) {
  dtype_fail(op, operands, what);
}

void check_domain(OpKind op, std::span<const TensorType> operands, Domain domain) {
  const DType t = operands[0].dtype;
  if (domain == Domain::Float && !is_float(t))
    dtype_error(op, operands,
                "needs a floating-point operand (f16, bf16, f32 or f64), got " +
                    std::string(dtype_name(t)) + "; convert the operand first");
  if (domain == Domain::Logical && is_float(t))
    dtype_error(op, operands, "needs a bool or integer operand, got " + std::string(dtype_name(t)));
  if (domain != Domain::Logical && t == DType::Bool)
    dtype_error(
        op, operands,
        "is not defined for bool operands; convert to an integer type or use and/or/xor/not");
}

void check_same_type(OpKind op, std::span<const TensorType> operands) {
  if (operands[0].shape != operands[1].shape)
    shape_error(op, operands, "operand shapes differ; broadcast them to one shape first");
  if (operands[0].dtype != operands[1].dtype)
    dtype_error(op, operands, "operand dtypes differ; convert one of them");
}

void check_comparable(OpKind op, std::span<const TensorType> operands, bool ordering) {
  check_same_type(op, operands);
  if (ordering && operands[0].dtype == DType::Bool)
    dtype_error(op, operands, "ordering comparisons are not defined for bool");
}

void undefined_for(OpKind op, DType dtype) {
  throw InvalidGraphError(
      "interpret: " + std::string(op_name(op)) + " is not defined for " +
      (is_float(dtype) ? std::string("floats") : std::string(dtype_name(dtype))));
}

Array full(const Array& like, double value, const Loc& loc) {
  const Array scalar = lax::constant(value, like.dtype(), loc);
  if (like.shape().empty()) return scalar;
  return lax::broadcast_in_dim(scalar, like.shape(), {}, loc);
}

Tangent add_tangents(Tangent a, Tangent b, const Loc& loc) {
  if (!a) return b;
  if (!b) return a;
  return lax::add(*a, *b, loc);
}

Array or_zeros(const Tangent& t, const Array& primal, const Loc& loc) {
  return t ? *t : detail::zeros_like_value(primal, loc);
}

Tangent zero_tangent(const Node&, std::span<const Array>, std::span<const Tangent>, const Array&,
                     const Loc&) {
  return std::nullopt;
}

void not_linear(const Node& n, const std::string& api) {
  throw TransformError(api + ": " + std::string(op_name(n.op)) + " at " + n.origin.describe() +
                       " multiplies two values that both depend on the differentiated inputs "
                       "inside the linear part; this is a bug in weft's transformation rules");
}

detail::Batched batch_elementwise(const Node& n, std::span<const detail::Batched> operands,
                                  std::int64_t batch_size, const std::string&, const Loc& loc) {
  std::vector<Array> batched;
  batched.reserve(operands.size());
  for (const detail::Batched& b : operands)
    batched.push_back(b.batched ? b.value : detail::with_batch_axis(b.value, batch_size, loc));
  Shape shape{batch_size};
  shape.insert(shape.end(), n.shape.begin(), n.shape.end());
  return {detail::bind(n.op, batched, n.attrs, {n.dtype, shape}, loc), true};
}

}  // namespace weft::prim::elementwise
