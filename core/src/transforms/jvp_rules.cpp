#include "transforms/jvp_rules.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "primitives/primitive.h"
#include "weft/error.h"
#include "weft/ops.h"
#include "weft/trace/trace.h"

namespace weft::detail {

bool has_tangent(DType dtype) {
  return is_float(dtype);
}

namespace {

using namespace lax;

// A constant of `like`'s dtype and shape.
Array full(const Array& like, double value, const std::source_location& loc) {
  const Array scalar = constant(value, like.dtype(), loc);
  if (like.shape().empty()) return scalar;
  return broadcast_in_dim(scalar, like.shape(), {}, loc);
}

Array as_float(const Array& mask, DType dtype, const std::source_location& loc) {
  return convert_element_type(mask, dtype, loc);
}

Tangent sum(Tangent a, Tangent b, const std::source_location& loc) {
  if (!a) return b;
  if (!b) return a;
  return add(*a, *b, loc);
}

Array or_zeros(const Tangent& t, const Array& primal, const std::source_location& loc) {
  return t ? *t : zeros_like_value(primal, loc);
}

// The node again, its float operands replaced by their tangents (the linear ops: layout ops,
// sums, dot with one side fixed). `tangent_operands` says which operands are replaced.
Array apply_linear(const Node& n, std::span<const Array> primals, std::span<const Tangent> tangents,
                   const std::vector<bool>& tangent_operands, const std::source_location& loc) {
  std::vector<Array> operands;
  operands.reserve(primals.size());
  for (std::size_t i = 0; i < primals.size(); ++i)
    operands.push_back(tangent_operands[i] ? or_zeros(tangents[i], primals[i], loc) : primals[i]);
  return bind(n.op, operands, n.attrs, n.type(), loc);
}

// The operand dims a reduction keeps, in order (its result's dims).
Axes kept_dims(const Node& n, std::size_t rank) {
  const auto& axes = n.attrs.get_ints("axes");
  Axes kept;
  for (std::size_t d = 0; d < rank; ++d)
    if (std::find(axes.begin(), axes.end(), static_cast<std::int64_t>(d)) == axes.end())
      kept.push_back(static_cast<std::int64_t>(d));
  return kept;
}

// d prod(x) / dx_i = prod of the others, exact with zeros: no zero in the row: prod / x_i; one
// zero: the product of the non-zeros at that zero, 0 elsewhere; two or more: 0.
Array reduce_prod_rule(const Node& n, const Array& x, const Array& t, const Array& z,
                       const std::source_location& loc) {
  const Axes kept = kept_dims(n, x.shape().size());
  const Axes& axes = n.attrs.get_ints("axes");
  const Array zero = full(x, 0, loc);
  const Array is_zero = eq(x, zero, loc);
  const Array zeros_in_row = broadcast_in_dim(
      reduce_sum(as_float(is_zero, x.dtype(), loc), axes, loc), x.shape(), kept, loc);
  const Array product_of_nonzeros = broadcast_in_dim(
      reduce_prod(select(is_zero, full(x, 1, loc), x, loc), axes, loc), x.shape(), kept, loc);
  const Array all = broadcast_in_dim(z, x.shape(), kept, loc);
  const Array none_zero = eq(zeros_in_row, zero, loc);
  const Array one_zero = eq(zeros_in_row, full(x, 1, loc), loc);
  const Array others =
      select(none_zero, div(all, select(is_zero, full(x, 1, loc), x, loc), loc),
             select(logical_and(one_zero, is_zero, loc), product_of_nonzeros, zero, loc), loc);
  return reduce_sum(mul(t, others, loc), axes, loc);
}

// The tangent at the positions that attain the extremum, averaged over ties (as JAX).
Array reduce_extremum_rule(const Node& n, const Array& x, const Array& t, const Array& z,
                           const std::source_location& loc) {
  const Axes kept = kept_dims(n, x.shape().size());
  const Axes& axes = n.attrs.get_ints("axes");
  const Array at_extremum =
      as_float(eq(x, broadcast_in_dim(z, x.shape(), kept, loc), loc), x.dtype(), loc);
  return div(reduce_sum(mul(t, at_extremum, loc), axes, loc), reduce_sum(at_extremum, axes, loc),
             loc);
}

}  // namespace

Array zeros_like_value(const Array& like, const std::source_location& loc) {
  return full(like, 0, loc);
}

Tangent jvp_rule(const Node& n, std::span<const Array> primals, std::span<const Tangent> tangents,
                 const Array& result, const std::source_location& loc) {
  if (!has_tangent(n.dtype)) return std::nullopt;
  bool any = false;
  for (const Tangent& t : tangents) any = any || t.has_value();
  if (!any) return std::nullopt;
  // Migration to core/src/primitives/: a definition's rule wins over the switch below.
  const auto& rule = prim::primitive(n.op).jvp;
  if (rule.fn) return rule.fn(n, primals, tangents, result, loc);
  if (!rule.refusal.empty()) throw TransformError(std::string(rule.refusal));

  switch (op_info(n.op).op_class) {
    case OpClass::Layout: {
      // Linear in the array operands; start indices (dynamic slices) stay primal.
      std::vector<bool> replaced(primals.size(), false);
      switch (n.op) {
        case OpKind::DynamicSlice:
          replaced[0] = true;
          break;
        case OpKind::DynamicUpdateSlice:
          replaced[0] = replaced[1] = true;
          break;
        default:  // broadcast, reshape, transpose, slice, concatenate, pad (x and pad value)
          std::fill(replaced.begin(), replaced.end(), true);
      }
      return apply_linear(n, primals, tangents, replaced, loc);
    }
    case OpClass::Reduce:
      switch (n.op) {
        case OpKind::ReduceSum:
          return bind(n.op, std::span<const Array>(&*tangents[0], 1), n.attrs, n.type(), loc);
        case OpKind::ReduceProd:
          return reduce_prod_rule(n, primals[0], *tangents[0], result, loc);
        case OpKind::ReduceMax:
        case OpKind::ReduceMin:
          return reduce_extremum_rule(n, primals[0], *tangents[0], result, loc);
        default:
          return std::nullopt;  // argmax/argmin: integer results
      }
    case OpClass::Dot: {
      Tangent from_lhs, from_rhs;
      if (tangents[0]) {
        const Array operands[] = {*tangents[0], primals[1]};
        from_lhs = bind(n.op, operands, n.attrs, n.type(), loc);
      }
      if (tangents[1]) {
        const Array operands[] = {primals[0], *tangents[1]};
        from_rhs = bind(n.op, operands, n.attrs, n.type(), loc);
      }
      return sum(from_lhs, from_rhs, loc);
    }
    default:
      throw TransformError("jvp: " + std::string(op_name(n.op)) + " at " + n.origin.describe() +
                           " is not a value primitive; this is a bug in weft's jvp");
  }
}

}  // namespace weft::detail
