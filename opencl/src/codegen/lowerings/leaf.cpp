// Leaves: constants and iota are computed where they are used; parameters are read.
#include <string>

#include "codegen/cl_types.h"
#include "codegen/expr_emitter.h"
#include "codegen/lowerings/families.h"
#include "weft/ir/op_attrs.h"

namespace weft::opencl::lowerings {
namespace {

EmitTask constant(ExprEmitter&, const Node& n, Index) {
  if (is_float(n.dtype)) co_return cl_float_literal(ConstantAttrs::float_value(n.attrs), n.dtype);
  co_return cl_int_literal(ConstantAttrs::int_value(n.attrs), n.dtype);
}

EmitTask iota(ExprEmitter& emit, const Node& n, Index idx) {
  const auto& d = emit.dims_of(idx);
  co_return "((" + cl_type(n.dtype) + ")(" + d[DimensionAttrs::read(n.attrs).dimension] + "))";
}

}  // namespace

void define_leaf_lowerings(Lowerings& table) {
  table.add(never(OpKind::Parameter,
                  "a parameter is read from its buffer (a kernel argument) or bound to a "
                  "register, never computed"));
  table.add(element(OpKind::Constant, constant));
  table.add(element(OpKind::Iota, iota));
}

}  // namespace weft::opencl::lowerings
