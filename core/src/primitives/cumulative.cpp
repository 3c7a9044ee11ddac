// Cumulative ops along one axis (jax.lax.cumsum and its kin): element k of the result combines
// the operand's elements 0..k along `axis` (k..n-1 when `reverse`). Floats accumulate in double
// and each result rounds once; integers wrap. On the device each runs as a parallel scan in a
// kernel of its own (OpInfo::own_kernel; opencl/src/codegen/scan_kernel.cpp).
#include <algorithm>
#include <cmath>

#include "primitives/families.h"
#include "primitives/structural_rules.h"
#include "primitives/type_rule_checks.h"
#include "weft/associative_scan.h"
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
// Integers as their bits (int64); `t` says how to compare them (u64 unsigned).
using IntCombine = U64 (*)(DType t, U64 acc, std::int64_t x);

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
      acc = first ? static_cast<U64>(x.i[at]) : combine_ints(node.dtype, acc, x.i[at]);
      out.i[at] = interp::wrap_to(node.dtype, acc);
    });
  }
  return out;
}

double add_floats(double acc, double x) {
  return acc + x;
}
U64 add_ints(DType, U64 acc, std::int64_t x) {
  return acc + static_cast<U64>(x);
}
double mul_floats(double acc, double x) {
  return acc * x;
}
U64 mul_ints(DType, U64 acc, std::int64_t x) {
  return acc * static_cast<U64>(x);
}
// Max and min: a NaN, once met, stays (as reduce_max and reduce_min).
double max_floats(double acc, double x) {
  return std::isnan(acc) || std::isnan(x) ? (std::isnan(acc) ? acc : x) : std::max(acc, x);
}
U64 max_ints(DType t, U64 acc, std::int64_t x) {
  if (t == DType::U64) return std::max(acc, static_cast<U64>(x));
  return static_cast<U64>(std::max(static_cast<std::int64_t>(acc), x));
}
double min_floats(double acc, double x) {
  return std::isnan(acc) || std::isnan(x) ? (std::isnan(acc) ? acc : x) : std::min(acc, x);
}
U64 min_ints(DType t, U64 acc, std::int64_t x) {
  if (t == DType::U64) return std::min(acc, static_cast<U64>(x));
  return static_cast<U64>(std::min(static_cast<std::int64_t>(acc), x));
}
// log(exp(acc) + exp(x)): NaN if either is, the larger where it is infinite.
double logaddexp(double acc, double x) {
  if (std::isnan(acc) || std::isnan(x)) return acc + x;
  const double m = std::max(acc, x);
  if (std::isinf(m)) return m;
  return m + std::log1p(std::exp(-std::abs(acc - x)));
}
U64 no_ints(DType, U64, std::int64_t) {
  return 0;  // cumlogsumexp's type rule admits floats only
}

TensorType float_cumulative_type(OpKind op, std::span<const TensorType> operands,
                                 const Attrs& attrs, const TensorType& declared) {
  if (!is_float(operands[0].dtype))
    dtype_fail(op, operands, "is defined for floats only; convert the operand to a float first");
  return cumulative_type(op, operands, attrs, declared);
}

// ---- jvp -----------------------------------------------------------------------------------

Array cumulative_like(OpKind op, const Node& n, const Array& x, const std::source_location& loc) {
  const Array operands[] = {x};
  return detail::bind(op, operands, n.attrs, {x.dtype(), x.shape()}, loc);
}

// d y_i = sum over j <= i of t_j * (the product of x_k, k <= i, k != j), exact with zeros: no
// zero up to i: y_i * sum t_j / x_j; one zero: t at that zero times the product of the
// non-zeros; two or more: 0.
Tangent jvp_cumprod(const Node& n, std::span<const Array> primals,
                    std::span<const Tangent> tangents, const Array&,
                    const std::source_location& loc) {
  const Array& x = primals[0];
  const Array& t = *tangents[0];
  const Array is_zero = eq(x, full(x, 0, loc), loc);
  const Array zero_mask = as_float(is_zero, x.dtype(), loc);
  const Array nonzero = select(is_zero, full(x, 1, loc), x, loc);
  const Array zeros_before = cumulative_like(OpKind::Cumsum, n, zero_mask, loc);
  const Array product_of_nonzeros = cumulative_like(OpKind::Cumprod, n, nonzero, loc);
  const Array no_zero = as_float(eq(zeros_before, full(x, 0, loc), loc), x.dtype(), loc);
  const Array one_zero = as_float(eq(zeros_before, full(x, 1, loc), loc), x.dtype(), loc);
  const Array without_zero =
      mul(cumulative_like(OpKind::Cumsum, n, div(t, nonzero, loc), loc), no_zero, loc);
  const Array at_the_zero =
      mul(cumulative_like(OpKind::Cumsum, n, mul(t, zero_mask, loc), loc), one_zero, loc);
  return mul(product_of_nonzeros, add(without_zero, at_the_zero, loc), loc);
}

// JAX differentiates the associative scan of lax.max (lax.min): each combine passes on the
// tangent of the operand that holds the result, half of each where both do (lax.max's
// balanced jvp). Running the same scan tree gives JAX's tangents on ties, where a single
// "position of the extreme" would hand the whole tangent to one element. NaN results compare
// unequal to both operands, so their tangent is 0, as in JAX.
Tangent jvp_cumulative_extreme(const Node& n, std::span<const Array> primals,
                               std::span<const Tangent> tangents, const Array&,
                               const std::source_location& loc) {
  const CumulativeAttrs a = CumulativeAttrs::read(n.attrs);
  const bool is_max = n.op == OpKind::Cummax;
  // 1 where `x` holds the result `z` and `y` does not, 1/2 where both do, else 0.
  auto balanced_weight = [&loc](const Array& x, const Array& z, const Array& y) {
    const Array holds = select(eq(x, z, loc), full(z, 1, loc), full(z, 0, loc), loc);
    return div(holds, select(eq(y, z, loc), full(z, 2, loc), full(z, 1, loc), loc), loc);
  };
  const AssociativeCombine extreme = [&](const std::vector<Array>& first,
                                         const std::vector<Array>& second) {
    const Array& x = first[0];
    const Array& y = second[0];
    const Array z = is_max ? max(x, y, loc) : min(x, y, loc);
    const Array tangent = add(mul(first[1], balanced_weight(x, z, y), loc),
                              mul(second[1], balanced_weight(y, z, x), loc), loc);
    return std::vector<Array>{z, tangent};
  };
  return associative_scan(extreme, {primals[0], *tangents[0]}, a.reverse, a.axis, loc)[1];
}

// d y_i = sum over j <= i of t_j exp(x_j - y_i), as the linear recurrence
//   d y_i = exp(y_{i-1} - y_i) d y_{i-1} + exp(x_i - y_i) t_i,
// both factors at most 1 (y grows along the line), solved by an associative scan of the affine
// maps (a, b): (a1, b1) then (a2, b2) is (a1 a2, a2 b1 + b2). A single reference value for the
// whole line would underflow where y_i lies far below the line's largest element. Infinite
// primal values count as 0 in the exponents, as JAX's logaddexp tangent does.
Tangent jvp_cumlogsumexp(const Node& n, std::span<const Array> primals,
                         std::span<const Tangent> tangents, const Array& y,
                         const std::source_location& loc) {
  const CumulativeAttrs a = CumulativeAttrs::read(n.attrs);
  const std::int64_t axis = a.axis;
  const Shape& shape = y.shape();
  const std::int64_t len = shape[static_cast<std::size_t>(axis)];
  auto finite_or_zero = [&](const Array& v) {
    return select(is_finite(v, loc), v, full(v, 0, loc), loc);
  };
  auto along = [&](const Array& v, std::int64_t start, std::int64_t limit) {
    Axes begin(shape.size(), 0), end(shape.begin(), shape.end());
    begin[static_cast<std::size_t>(axis)] = start;
    end[static_cast<std::size_t>(axis)] = limit;
    return slice(v, begin, end, {}, loc);
  };
  const Array x = finite_or_zero(primals[0]);
  const Array out = finite_or_zero(y);
  // The previous result along the scan's direction; the first element has none (a = 0).
  Array decay = full(y, 0, loc);
  if (len > 1) {
    const Array earlier = a.reverse ? along(out, 1, len) : along(out, 0, len - 1);
    const Array later = a.reverse ? along(out, 0, len - 1) : along(out, 1, len);
    const Array ratio = exp(sub(earlier, later, loc), loc);
    const Array none = along(full(y, 0, loc), 0, 1);
    decay =
        a.reverse ? concatenate({ratio, none}, axis, loc) : concatenate({none, ratio}, axis, loc);
  }
  const Array input = mul(*tangents[0], exp(sub(x, out, loc), loc), loc);
  const AssociativeCombine affine = [&loc](const std::vector<Array>& first,
                                           const std::vector<Array>& second) {
    return std::vector<Array>{mul(first[0], second[0], loc),
                              add(mul(second[0], first[1], loc), second[1], loc)};
  };
  return associative_scan(affine, {decay, input}, a.reverse, axis, loc)[1];
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

  Primitive prod =
      cumulative(OpKind::Cumprod, "cumprod", evaluate_cumulative<mul_floats, mul_ints>);
  prod.jvp = rule_from(jvp_cumprod);
  defs.add(std::move(prod));

  Primitive max = cumulative(OpKind::Cummax, "cummax", evaluate_cumulative<max_floats, max_ints>);
  max.jvp = rule_from(jvp_cumulative_extreme);
  defs.add(std::move(max));

  Primitive min = cumulative(OpKind::Cummin, "cummin", evaluate_cumulative<min_floats, min_ints>);
  min.jvp = rule_from(jvp_cumulative_extreme);
  defs.add(std::move(min));

  Primitive logsumexp =
      cumulative(OpKind::Cumlogsumexp, "cumlogsumexp", evaluate_cumulative<logaddexp, no_ints>);
  logsumexp.type = float_cumulative_type;
  logsumexp.jvp = rule_from(jvp_cumlogsumexp);
  defs.add(std::move(logsumexp));
}

}  // namespace weft::prim
