// rev (jax.lax.rev): reverses the order of the elements along each of `dimensions`. A layout
// op: free to fuse, linear, its own transpose.
#include <algorithm>

#include "interp/index.h"
#include "primitives/families.h"
#include "primitives/structural_rules.h"
#include "primitives/type_rule_checks.h"
#include "weft/ir/op_attrs.h"
#include "weft/ops.h"
#include "weft/trace/trace.h"

namespace weft::prim {

namespace {

using interp::Operands;
using interp::Value;

TensorType rev_type(OpKind op, std::span<const TensorType> operands, const Attrs& attrs,
                    const TensorType&) {
  const TensorType& in = operands[0];
  const Axes dims = RevAttrs::read(attrs).dimensions;
  std::vector<bool> seen(in.shape.size(), false);
  for (std::int64_t d : dims) {
    if (d < 0 || d >= static_cast<std::int64_t>(in.shape.size()) || seen[d])
      shape_fail(op, operands,
                 "dimensions=" + list_to_string(dims) + " must name distinct axes in [0, " +
                     std::to_string(in.shape.size()) + ")");
    seen[d] = true;
  }
  return in;
}

Value evaluate_rev(const Node& node, Operands operands) {
  const Value& x = *operands[0];
  std::vector<std::int64_t> strides = row_major_strides(x.shape);
  std::int64_t offset = 0;
  for (std::int64_t d : RevAttrs::read(node.attrs).dimensions) {
    offset += (x.shape[d] - 1) * strides[d];
    strides[d] = -strides[d];
  }
  return interp::strided_copy(node.dtype, node.shape, x, strides, offset);
}

std::vector<Tangent> transpose_rev(const Node& n, const Array& ct,
                                   std::span<const std::optional<Array>>,
                                   std::span<const TensorType>, const std::vector<bool>&,
                                   const std::string&, const std::source_location& loc) {
  return {lax::rev(ct, RevAttrs::read(n.attrs).dimensions, loc)};
}

Batched batch_rev(const Node& n, std::span<const Batched> operands, std::int64_t batch_size,
                  const std::string&, const std::source_location& loc) {
  const RevAttrs batched{shifted(RevAttrs::read(n.attrs).dimensions)};
  return rebind_batched(n, operands, batch_size, updated_attrs(n.attrs, batched.write()), loc);
}

}  // namespace

void define_rev_primitive(Definitions& defs) {
  Primitive rev = free_op(row(OpKind::Rev, "rev", OpClass::Layout, 1));
  rev.type = rev_type;
  rev.evaluate = evaluate_rev;
  rev.jvp = rule_from(jvp_linear);
  rev.transpose = rule_from(transpose_rev);
  rev.batch = rule_from(batch_rev);
  defs.add(std::move(rev));
}

}  // namespace weft::prim
