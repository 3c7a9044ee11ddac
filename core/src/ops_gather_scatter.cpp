// weft::lax's gather and scatters: each binds its primitive with its attribute struct.
#include "weft/ops.h"
#include "weft/trace/trace.h"

namespace weft::lax {

using detail::bind;

Array gather(const Array& operand, const Array& indices, const GatherAttrs& dims,
             std::source_location loc) {
  const Array operands[] = {operand, indices};
  return bind(OpKind::Gather, operands, dims.write(), {}, loc);
}

namespace {
Array scatter_op(OpKind op, const Array& operand, const Array& indices, const Array& updates,
                 const ScatterAttrs& dims, const std::source_location& loc) {
  const Array operands[] = {operand, indices, updates};
  return bind(op, operands, dims.write(), {}, loc);
}
}  // namespace

Array scatter(const Array& operand, const Array& indices, const Array& updates,
              const ScatterAttrs& dims, std::source_location loc) {
  return scatter_op(OpKind::Scatter, operand, indices, updates, dims, loc);
}
Array scatter_add(const Array& operand, const Array& indices, const Array& updates,
                  const ScatterAttrs& dims, std::source_location loc) {
  return scatter_op(OpKind::ScatterAdd, operand, indices, updates, dims, loc);
}
Array scatter_mul(const Array& operand, const Array& indices, const Array& updates,
                  const ScatterAttrs& dims, std::source_location loc) {
  return scatter_op(OpKind::ScatterMul, operand, indices, updates, dims, loc);
}
Array scatter_min(const Array& operand, const Array& indices, const Array& updates,
                  const ScatterAttrs& dims, std::source_location loc) {
  return scatter_op(OpKind::ScatterMin, operand, indices, updates, dims, loc);
}
Array scatter_max(const Array& operand, const Array& indices, const Array& updates,
                  const ScatterAttrs& dims, std::source_location loc) {
  return scatter_op(OpKind::ScatterMax, operand, indices, updates, dims, loc);
}

}  // namespace weft::lax
