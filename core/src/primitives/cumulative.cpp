// Cumulative ops along one axis (jax.lax.cumsum and its kin): element k of the result combines
// the operand's elements 0..k along `axis` (k..n-1 when `reverse`). Floats accumulate in double
// and each result rounds once; integers wrap. On the device each runs as a parallel scan in a
// kernel of its own (OpInfo::own_kernel; opencl/src/codegen/scan_kernel.cpp).
#include <cmath>

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
using namespace lax;
using U64 = std::uint64_t;

TensorType cumulative_type(OpKind op, std::span<const TensorType> operands, const Attrs& attrs,
                           const TensorType&) {
  const TensorType& in = operands[0];
  const CumulativeAttrs a = CumulativeAttrs::read(attrs);
  if (a.axis < 0 || a.axis >= static_cast<std::int64_t>(in.shape.size()))
    shape_fail(op, operands,
               "axis=" + std::to_string(a.axis) + " is not an axis of a rank-" +
                   std::to_string(in.shape.size()) + " operand; pass an axis in [0, rank)");
  if (in.dtype == DType::Bool) dtype_fail(op, operands, "is not defined for bool; convert first");
  return in;
}

// The operand seen as [outer, n, inner] with n the scanned axis.
struct Lines {
  std::int64_t outer = 1, n = 1, inner = 1;
};

Lines lines_of(const Shape& shape, std::int64_t axis) {
  Lines l;
  for (std::int64_t d = 0; d < static_cast<std::int64_t>(shape.size()); ++d) {
    if (d < axis) l.outer *= shape[d];
    if (d == axis) l.n = shape[d];
    if (d > axis) l.inner *= shape[d];
  }
  return l;
}

using FloatCombine = double (*)(double acc, double x);
using IntCombine = U64 (*)(U64 acc, std::int64_t x);

// Walks each line in scan order; `f` gets the flat index of each element and whether it is the
// line's first.
template <typename F>
void for_each_in_scan_order(const Node& node, const Shape& shape, F&& f) {
  const CumulativeAttrs a = CumulativeAttrs::read(node.attrs);
  const Lines l = lines_of(shape, a.axis);
  for (std::int64_t o = 0; o < l.outer; ++o)
    for (std::int64_t i = 0; i < l.inner; ++i)
      for (std::int64_t k = 0; k < l.n; ++k) {
        const std::int64_t pos = a.reverse ? l.n - 1 - k : k;
        f((o * l.n + pos) * l.inner + i, k == 0);
      }
}

template <FloatCombine combine_floats, IntCombine combine_ints>
Value evaluate_cumulative(const Node& node, Operands operands) {
  const Value& x = *operands[0];
  Value out = interp::make_value(node.dtype, node.shape);
  if (is_float(x.dtype)) {
    double acc = 0;
    for_each_in_scan_order(node, x.shape, [&](std::int64_t at, bool first) {
      acc = first ? x.f[at] : combine_floats(acc, x.f[at]);
      out.f[at] = interp::round_to(node.dtype, acc);
    });
  } else {
    U64 acc = 0;
    for_each_in_scan_order(node, x.shape, [&](std::int64_t at, bool first) {
      acc = first ? static_cast<U64>(x.i[at]) : combine_ints(acc, x.i[at]);
      out.i[at] = interp::wrap_to(node.dtype, acc);
    });
  }
  return out;
}

double add_floats(double acc, double x) {
  return acc + x;
}
U64 add_ints(U64 acc, std::int64_t x) {
  return acc + static_cast<U64>(x);
}

// Every cumulative op: the same op along the shifted axis.
Batched batch_cumulative(const Node& n, std::span<const Batched> operands, std::int64_t batch_size,
                         const std::string&, const std::source_location& loc) {
  CumulativeAttrs a = CumulativeAttrs::read(n.attrs);
  a.axis += 1;
  return rebind_batched(n, operands, batch_size, updated_attrs(n.attrs, a.write()), loc);
}

// The cotangent of a cumulative sum is the cumulative sum the other way.
std::vector<Tangent> transpose_cumsum(const Node& n, const Array& ct,
                                      std::span<const std::optional<Array>>,
                                      std::span<const TensorType>, const std::vector<bool>&,
                                      const std::string&, const std::source_location& loc) {
  const CumulativeAttrs a = CumulativeAttrs::read(n.attrs);
  return {cumsum(ct, a.axis, !a.reverse, loc)};
}

Primitive cumulative(OpKind kind, std::string_view name, Evaluator evaluate) {
  Primitive p = row(kind, name, OpClass::Cumulative, 1);
  p.info.own_kernel = true;
  p.type = cumulative_type;
  p.evaluate = evaluate;
  p.batch = rule_from(batch_cumulative);
  p.transpose = no_transpose();  // only cumsum is linear
  return p;
}

}  // namespace

void define_cumulative_primitives(Definitions& defs) {
  Primitive sum = cumulative(OpKind::Cumsum, "cumsum", evaluate_cumulative<add_floats, add_ints>);
  sum.jvp = rule_from(jvp_linear);
  sum.transpose = rule_from(transpose_cumsum);
  defs.add(std::move(sum));
}

}  // namespace weft::prim
