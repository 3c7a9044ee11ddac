// Reductions over attrs.axes. The evaluators transpose the operand so the kept axes lead and
// the reduced axes trail; each result element then reduces one contiguous row-major block.
// Floats accumulate in double and round once; max and min propagate NaN.
#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>

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
using namespace lax;
using U64 = std::uint64_t;

// ---- Type rules ----------------------------------------------------------------------------

// The operand's shape without the reduced axes.
Shape reduced_shape(OpKind op, std::span<const TensorType> operands, const Attrs& attrs) {
  const TensorType& in = operands[0];
  const Axes axes = ReduceAttrs::read(attrs).axes;
  check_axes_list(op, operands, axes, in.shape.size(), ReduceAttrs::kAxes);
  if (in.dtype == DType::Bool) dtype_fail(op, operands, "is not defined for bool; convert first");
  Shape out;
  for (std::int64_t d = 0; d < static_cast<std::int64_t>(in.shape.size()); ++d)
    if (std::find(axes.begin(), axes.end(), d) == axes.end()) out.push_back(in.shape[d]);
  return out;
}

TensorType reduction_type(OpKind op, std::span<const TensorType> operands, const Attrs& attrs,
                          const TensorType&) {
  return {operands[0].dtype, reduced_shape(op, operands, attrs)};
}

// argmax and argmin: the index dtype is declared.
TensorType arg_reduction_type(OpKind op, std::span<const TensorType> operands, const Attrs& attrs,
                              const TensorType& declared) {
  Shape out = reduced_shape(op, operands, attrs);
  if (declared.dtype != DType::I32 && declared.dtype != DType::I64)
    dtype_fail(op, operands, "the index dtype must be i32 or i64");
  std::int64_t reduced = 1;
  for (auto a : ReduceAttrs::read(attrs).axes) reduced *= operands[0].shape[a];
  if (reduced == 0) shape_fail(op, operands, "cannot take an arg-reduction over zero elements");
  return {declared.dtype, out};
}

// ---- Evaluators ----------------------------------------------------------------------------

// The operand transposed so the kept axes lead and the reduced axes trail, and the number of
// elements each result element reduces (one contiguous block of `rows`).
struct Blocks {
  Value rows;
  std::int64_t block = 1;
};

Blocks reduction_blocks(const Node& node, const Value& x) {
  const Axes axes = ReduceAttrs::read(node.attrs).axes;
  std::vector<std::int64_t> perm;
  std::int64_t block = 1;
  for (std::int64_t d = 0; d < static_cast<std::int64_t>(x.shape.size()); ++d)
    if (!std::binary_search(axes.begin(), axes.end(), d)) perm.push_back(d);
  for (auto a : axes) {
    perm.push_back(a);
    block *= x.shape[a];
  }
  return {interp::transposed(x, perm), block};
}

using FloatReduction = double (*)(const double* x, std::int64_t n);
using IntReduction = std::int64_t (*)(DType t, const std::int64_t* x, std::int64_t n);

template <FloatReduction reduce_floats, IntReduction reduce_ints>
Value evaluate_reduction(const Node& node, Operands operands) {
  const Value& x = *operands[0];
  const Blocks b = reduction_blocks(node, x);
  Value out = interp::make_value(node.dtype, node.shape);
  for (std::int64_t k = 0; k < out.size(); ++k) {
    const std::int64_t first = k * b.block;
    if (is_float(x.dtype))
      out.f[k] = interp::round_to(node.dtype, reduce_floats(b.rows.f.data() + first, b.block));
    else
      out.i[k] = reduce_ints(node.dtype, b.rows.i.data() + first, b.block);
  }
  return out;
}

double sum_floats(const double* x, std::int64_t n) {
  double acc = 0.0;
  for (std::int64_t k = 0; k < n; ++k) acc += x[k];
  return acc;
}

std::int64_t sum_ints(DType t, const std::int64_t* x, std::int64_t n) {
  U64 acc = 0;
  for (std::int64_t k = 0; k < n; ++k) acc += static_cast<U64>(x[k]);
  return interp::wrap_to(t, acc);
}

double prod_floats(const double* x, std::int64_t n) {
  double acc = 1.0;
  for (std::int64_t k = 0; k < n; ++k) acc *= x[k];
  return acc;
}

std::int64_t prod_ints(DType t, const std::int64_t* x, std::int64_t n) {
  U64 acc = 1;
  for (std::int64_t k = 0; k < n; ++k) acc *= static_cast<U64>(x[k]);
  return interp::wrap_to(t, acc);
}

double max_floats(const double* x, std::int64_t n) {
  double acc = -std::numeric_limits<double>::infinity();
  for (std::int64_t k = 0; k < n; ++k) {
    if (std::isnan(x[k])) return x[k];
    if (x[k] > acc || (x[k] == acc && !std::signbit(x[k]))) acc = x[k];
  }
  return acc;
}

std::int64_t max_ints(DType t, const std::int64_t* x, std::int64_t n) {
  std::int64_t acc = interp::int_lowest(t);
  for (std::int64_t k = 0; k < n; ++k) acc = interp::int_max(t, acc, x[k]);
  return acc;
}

double min_floats(const double* x, std::int64_t n) {
  double acc = std::numeric_limits<double>::infinity();
  for (std::int64_t k = 0; k < n; ++k) {
    if (std::isnan(x[k])) return x[k];
    if (x[k] < acc || (x[k] == acc && std::signbit(x[k]))) acc = x[k];
  }
  return acc;
}

std::int64_t min_ints(DType t, const std::int64_t* x, std::int64_t n) {
  std::int64_t acc = interp::int_highest(t);
  for (std::int64_t k = 0; k < n; ++k) acc = interp::int_min(t, acc, x[k]);
  return acc;
}

// The position of the first extreme element; for floats, of the first NaN if there is one.
template <typename T>
std::int64_t arg_extreme(bool is_max, const T* x, std::int64_t n) {
  std::int64_t best = 0;
  for (std::int64_t k = 0; k < n; ++k) {
    if constexpr (std::is_floating_point_v<T>) {
      if (std::isnan(x[k])) return k;
    }
    if (is_max ? x[best] < x[k] : x[k] < x[best]) best = k;
  }
  return best;
}

template <bool is_max>
Value evaluate_arg_reduction(const Node& node, Operands operands) {
  const Value& x = *operands[0];
  const Blocks b = reduction_blocks(node, x);
  Value out = interp::make_value(node.dtype, node.shape);
  for (std::int64_t k = 0; k < out.size(); ++k) {
    const std::int64_t first = k * b.block;
    if (is_float(x.dtype)) {
      out.i[k] = arg_extreme(is_max, b.rows.f.data() + first, b.block);
    } else if (x.dtype == DType::U64) {  // bit patterns: order them unsigned
      const auto* bits = reinterpret_cast<const U64*>(b.rows.i.data() + first);
      out.i[k] = arg_extreme(is_max, bits, b.block);
    } else {
      out.i[k] = arg_extreme(is_max, b.rows.i.data() + first, b.block);
    }
  }
  return out;
}

// ---- jvp -----------------------------------------------------------------------------------

// The operand dims a reduction keeps, in order (its result's dims).
Axes kept_dims(const Node& n, std::size_t rank) {
  const Axes axes = ReduceAttrs::read(n.attrs).axes;
  Axes kept;
  for (std::size_t d = 0; d < rank; ++d)
    if (std::find(axes.begin(), axes.end(), static_cast<std::int64_t>(d)) == axes.end())
      kept.push_back(static_cast<std::int64_t>(d));
  return kept;
}

Tangent jvp_reduce_sum(const Node& n, std::span<const Array>, std::span<const Tangent> tangents,
                       const Array&, const std::source_location& loc) {
  return detail::bind(n.op, std::span<const Array>(&*tangents[0], 1), n.attrs, n.type(), loc);
}

// d prod(x) / dx_i = prod of the others, exact with zeros: no zero in the row: prod / x_i; one
// zero: the product of the non-zeros at that zero, 0 elsewhere; two or more: 0.
Tangent jvp_reduce_prod(const Node& n, std::span<const Array> primals,
                        std::span<const Tangent> tangents, const Array& z,
                        const std::source_location& loc) {
  const Array& x = primals[0];
  const Array& t = *tangents[0];
  const Axes kept = kept_dims(n, x.shape().size());
  const Axes axes = ReduceAttrs::read(n.attrs).axes;
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
Tangent jvp_reduce_extremum(const Node& n, std::span<const Array> primals,
                            std::span<const Tangent> tangents, const Array& z,
                            const std::source_location& loc) {
  const Array& x = primals[0];
  const Array& t = *tangents[0];
  const Axes kept = kept_dims(n, x.shape().size());
  const Axes axes = ReduceAttrs::read(n.attrs).axes;
  const Array at_extremum =
      as_float(eq(x, broadcast_in_dim(z, x.shape(), kept, loc), loc), x.dtype(), loc);
  return div(reduce_sum(mul(t, at_extremum, loc), axes, loc), reduce_sum(at_extremum, axes, loc),
             loc);
}

// argmax and argmin: integer results carry no tangent.
Tangent jvp_arg_reduction(const Node&, std::span<const Array>, std::span<const Tangent>,
                          const Array&, const std::source_location&) {
  return std::nullopt;
}

// ---- Transpose and batching ----------------------------------------------------------------

std::vector<Tangent> transpose_reduce_sum(const Node& n, const Array& ct,
                                          std::span<const std::optional<Array>>,
                                          std::span<const TensorType> types,
                                          const std::vector<bool>&, const std::string&,
                                          const std::source_location& loc) {
  return {broadcast_in_dim(ct, types[0].shape, kept_dims(n, types[0].shape.size()), loc)};
}

// Every reduction: the same op over the shifted axes.
Batched batch_reduction(const Node& n, std::span<const Batched> operands, std::int64_t batch_size,
                        const std::string&, const std::source_location& loc) {
  Attrs attrs = n.attrs;
  attrs.set(ReduceAttrs::kAxes, shifted(ReduceAttrs::read(n.attrs).axes));
  return rebind_batched(n, operands, batch_size, attrs, loc);
}

// A reduction's row, type rule, evaluator and batching rule; its jvp and transpose are its own.
Primitive reduction(OpKind kind, std::string_view name, Evaluator evaluate) {
  Primitive p = row(kind, name, OpClass::Reduce, 1);
  p.type = reduction_type;
  p.evaluate = evaluate;
  p.batch = rule_from(batch_reduction);
  p.transpose = no_transpose();  // only reduce_sum is linear
  return p;
}

Primitive arg_reduction(OpKind kind, std::string_view name, Evaluator evaluate) {
  Primitive p = reduction(kind, name, evaluate);
  p.type = arg_reduction_type;
  p.jvp = rule_from(jvp_arg_reduction);
  return p;
}

}  // namespace

void define_reduce_primitives(Definitions& defs) {
  Primitive sum =
      reduction(OpKind::ReduceSum, "reduce_sum", evaluate_reduction<sum_floats, sum_ints>);
  sum.jvp = rule_from(jvp_reduce_sum);
  sum.transpose = rule_from(transpose_reduce_sum);
  defs.add(std::move(sum));

  Primitive prod =
      reduction(OpKind::ReduceProd, "reduce_prod", evaluate_reduction<prod_floats, prod_ints>);
  prod.jvp = rule_from(jvp_reduce_prod);
  defs.add(std::move(prod));

  Primitive max =
      reduction(OpKind::ReduceMax, "reduce_max", evaluate_reduction<max_floats, max_ints>);
  max.jvp = rule_from(jvp_reduce_extremum);
  defs.add(std::move(max));

  Primitive min =
      reduction(OpKind::ReduceMin, "reduce_min", evaluate_reduction<min_floats, min_ints>);
  min.jvp = rule_from(jvp_reduce_extremum);
  defs.add(std::move(min));

  Primitive argmax = arg_reduction(OpKind::ArgMax, "argmax", evaluate_arg_reduction<true>);
  defs.add(std::move(argmax));

  Primitive argmin = arg_reduction(OpKind::ArgMin, "argmin", evaluate_arg_reduction<false>);
  defs.add(std::move(argmin));
}

}  // namespace weft::prim
