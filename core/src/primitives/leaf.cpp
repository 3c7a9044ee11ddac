// Leaves: parameters, constants, iota. They have no operands, so they carry no tangent and
// are never linear or batched.
#include <variant>

#include "primitives/elementwise_family.h"
#include "weft/ir/op_attrs.h"

namespace weft::prim {

using namespace elementwise;

namespace {

Primitive leaf(OpKind kind, std::string_view name) {
  Primitive p = free_op(row(kind, name, OpClass::Leaf, 0));
  p.jvp.fn = zero_tangent;
  p.transpose = no_transpose();
  p.batch = none<BatchRule>("has no operands to batch; this is a bug in weft's vmap");
  return p;
}

namespace parameter_op {

TensorType type(OpKind op, std::span<const TensorType> operands, const Attrs& attrs,
                const TensorType& declared) {
  if (IndexAttrs::read(attrs).index < 0) shape_error(op, operands, "negative parameter index");
  return declared;
}

}  // namespace parameter_op

namespace constant_op {

TensorType type(OpKind op, std::span<const TensorType> operands, const Attrs& attrs,
                const TensorType& declared) {
  if (!declared.shape.empty())
    shape_error(
        op, operands,
        "constants are scalars; broadcast_in_dim them to " + shape_to_string(declared.shape));
  ConstantAttrs::float_value(attrs);
  if (!is_float(declared.dtype) &&
      !std::holds_alternative<std::int64_t>(*attrs.find(ConstantAttrs::kValue)))
    dtype_error(
        op, operands,
        "a " + std::string(dtype_name(declared.dtype)) + " constant needs an integer value");
  return declared;
}

interp::Value evaluate(const Node& node, interp::Operands) {
  interp::Value out = interp::make_value(node.dtype, node.shape);
  if (is_float(node.dtype)) {
    out.f[0] = interp::round_to(node.dtype, ConstantAttrs::float_value(node.attrs));
  } else {
    out.i[0] = interp::wrap_to(node.dtype, ConstantAttrs::int_value(node.attrs));
  }
  return out;
}

}  // namespace constant_op

namespace iota_op {

TensorType type(OpKind op, std::span<const TensorType> operands, const Attrs& attrs,
                const TensorType& declared) {
  if (declared.dtype == DType::Bool) dtype_error(op, operands, "iota cannot produce bool");
  std::int64_t dim = DimensionAttrs::read(attrs).dimension;
  if (dim < 0 || dim >= static_cast<std::int64_t>(declared.shape.size()))
    shape_error(op, operands,
                "dimension=" + std::to_string(dim) + " is outside the result shape " +
                    shape_to_string(declared.shape));
  return declared;
}

// Each element is its index along `dimension`.
interp::Value evaluate(const Node& node, interp::Operands) {
  interp::Value out = interp::make_value(node.dtype, node.shape);
  const auto dim = static_cast<std::size_t>(DimensionAttrs::read(node.attrs).dimension);
  const std::int64_t stride = row_major_strides(node.shape)[dim];
  const std::int64_t extent = node.shape[dim];
  const std::int64_t n = out.size();
  for (std::int64_t k = 0; k < n; ++k) {
    const std::int64_t index = (k / stride) % extent;
    if (is_float(node.dtype)) {
      out.f[k] = convert_to_float(node.dtype, DType::I64, 0.0, index);
    } else {
      out.i[k] = interp::wrap_to(node.dtype, index);
    }
  }
  return out;
}

}  // namespace iota_op

}  // namespace

void define_leaf_primitives(Definitions& defs) {
  // No evaluator: the interpreter binds parameters to the graph's inputs.
  Primitive param = jax_names(leaf(OpKind::Parameter, "param"), "-");
  param.type = parameter_op::type;
  defs.add(std::move(param));

  Primitive constant = jax_names(leaf(OpKind::Constant, "constant"), "-");
  constant.type = constant_op::type;
  constant.evaluate = constant_op::evaluate;
  defs.add(std::move(constant));

  Primitive iota = leaf(OpKind::Iota, "iota");
  iota.type = iota_op::type;
  iota.evaluate = iota_op::evaluate;
  defs.add(std::move(iota));
}

}  // namespace weft::prim
