// bitcast_convert: the operand's bytes read as the node's dtype, as XLA's BitcastConvert. Between
// dtypes of one width the shape stays; from a wider dtype to a narrower one a trailing axis of
// the width ratio appears (the wide element's bytes in memory order: little-endian, the low part
// first), and from narrower to wider that trailing axis is consumed. Bool takes no part, as in
// JAX. The result carries no tangent whatever its dtype (JAX's defjvp_zero).
#include <bit>
#include <cstring>
#include <string>

#include "primitives/elementwise_family.h"

namespace weft::prim {

using namespace elementwise;

namespace {

static_assert(std::endian::native == std::endian::little,
              "bitcast_convert's interpreter reads bytes in XLA's (little-endian) order");

TensorType bitcast_type(OpKind op, std::span<const TensorType> operands, const Attrs&,
                        const TensorType& declared) {
  const TensorType& x = operands[0];
  const DType from = x.dtype, to = declared.dtype;
  const std::string conversion =
      std::string(dtype_name(from)) + " to " + std::string(dtype_name(to));
  if ((from == DType::Bool || to == DType::Bool) && from != to)
    dtype_error(op, operands,
                "cannot reinterpret the bits of " + conversion +
                    ": bool has no defined bit pattern; use convert (or a comparison) instead");
  if (dtype_size(to) == 0 || dtype_size(from) == 0)
    dtype_error(op, operands, "cannot reinterpret the bits of " + conversion);
  const std::size_t from_size = dtype_size(from), to_size = dtype_size(to);
  Shape shape = x.shape;
  if (from_size > to_size) {
    shape.push_back(static_cast<std::int64_t>(from_size / to_size));
  } else if (from_size < to_size) {
    const auto ratio = static_cast<std::int64_t>(to_size / from_size);
    if (shape.empty() || shape.back() != ratio)
      shape_error(op, operands,
                  "reinterpreting " + conversion + " joins the last axis's " +
                      std::to_string(ratio) + " elements into one, so that axis must have size " +
                      std::to_string(ratio) + "; reshape the operand first");
    shape.pop_back();
  }
  return {to, shape};
}

// The same bytes, read as the node's dtype (the type rule made the byte counts equal).
interp::Value evaluate_bitcast(const Node& node, interp::Operands operands) {
  const HostArray in = interp::to_host(*operands[0]);
  HostArray out(node.dtype, node.shape);
  std::memcpy(out.raw(), in.raw(), out.nbytes());
  return interp::from_host(out);
}

}  // namespace

void define_bitcast_primitive(Definitions& defs) {
  Primitive p = free_op(row(OpKind::BitcastConvert, "bitcast_convert", OpClass::Convert, 1));
  p.type = bitcast_type;
  p.evaluate = evaluate_bitcast;
  p.jvp.fn = zero_tangent;
  p.transpose = none<TransposeRule>(
      "has no transpose rule (its tangent is always zero, as in JAX), so reverse mode cannot "
      "pass through it");
  p.batch.fn = batch_elementwise;  // a leading batch axis stays leading
  defs.add(std::move(p));
}

}  // namespace weft::prim
