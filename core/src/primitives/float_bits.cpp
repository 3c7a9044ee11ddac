// Questions about a float's representation: is_finite (a bool result, so no tangent) and
// nextafter (the neighbouring float of x's dtype towards y, as C's nextafter; JAX defines no
// derivative for it).
#include <cmath>
#include <string>

#include "primitives/elementwise_family.h"

namespace weft::prim {

using namespace elementwise;

namespace {

TensorType is_finite_type(OpKind op, std::span<const TensorType> operands, const Attrs&,
                          const TensorType&) {
  check_domain(op, operands, Domain::Float);
  return {DType::Bool, operands[0].shape};
}

interp::Value evaluate_is_finite(const Node& node, interp::Operands operands) {
  const interp::Value& x = *operands[0];
  interp::Value out = interp::make_value(node.dtype, node.shape);
  for (std::int64_t k = 0; k < out.size(); ++k) out.i[k] = std::isfinite(x.f[k]) ? 1 : 0;
  return out;
}

// In the dtype's own precision: an f32's neighbour is an f32's.
interp::Value evaluate_nextafter(const Node& node, interp::Operands operands) {
  const interp::Value& x = *operands[0];
  const interp::Value& y = *operands[1];
  interp::Value out = interp::make_value(node.dtype, node.shape);
  for (std::int64_t k = 0; k < out.size(); ++k)
    out.f[k] = node.dtype == DType::F32
                   ? static_cast<double>(
                         std::nextafter(static_cast<float>(x.f[k]), static_cast<float>(y.f[k])))
                   : std::nextafter(x.f[k], y.f[k]);
  return out;
}

}  // namespace

void define_float_bits_primitives(Definitions& defs) {
  Primitive is_finite = row(OpKind::IsFinite, "is_finite", OpClass::Unary, 1);
  is_finite.type = is_finite_type;
  is_finite.evaluate = evaluate_is_finite;
  is_finite.jvp.fn = zero_tangent;  // a bool result
  is_finite.transpose = no_transpose();
  is_finite.batch.fn = batch_elementwise;
  defs.add(std::move(is_finite));

  Primitive nextafter = row(OpKind::NextAfter, "nextafter", OpClass::Binary, 2);
  nextafter.type = binary_type<Domain::Float>;
  nextafter.evaluate = evaluate_nextafter;
  nextafter.jvp = none<JvpRule>(
      "has no derivative rule (nor has JAX's), so it cannot be differentiated; give the "
      "function that calls it a custom_jvp");
  nextafter.transpose = no_transpose();
  nextafter.batch.fn = batch_elementwise;
  defs.add(std::move(nextafter));
}

}  // namespace weft::prim
