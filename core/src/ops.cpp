#include "weft/ops.h"

#include <algorithm>
#include <optional>
#include <string>

#include "weft/error.h"
#include "weft/ir/op_attrs.h"
#include "weft/trace/trace.h"

namespace weft::lax {

using detail::bind;

namespace {

Array unary(OpKind op, const Array& x, const std::source_location& loc) {
  const Array operands[] = {x};
  return bind(op, operands, {}, {}, loc);
}

Array binary(OpKind op, const Array& x, const Array& y, const std::source_location& loc) {
  const Array operands[] = {x, y};
  return bind(op, operands, {}, {}, loc);
}

Array reduce(OpKind op, const Array& x, const Axes& axes, DType index_dtype,
             const std::source_location& loc) {
  const Array operands[] = {x};
  return bind(op, operands, ReduceAttrs{axes}.write(), {index_dtype, {}}, loc);
}

}  // namespace

#define WEFT_UNARY(FN, KIND)                           \
  Array FN(const Array& x, std::source_location loc) { \
    return unary(OpKind::KIND, x, loc);                \
  }
WEFT_UNARY(neg, Neg)
WEFT_UNARY(abs, Abs)
WEFT_UNARY(sign, Sign)
WEFT_UNARY(floor, Floor)
WEFT_UNARY(ceil, Ceil)
WEFT_UNARY(exp, Exp)
WEFT_UNARY(exp2, Exp2)
WEFT_UNARY(log, Log)
WEFT_UNARY(log1p, Log1p)
WEFT_UNARY(expm1, Expm1)
WEFT_UNARY(sqrt, Sqrt)
WEFT_UNARY(rsqrt, Rsqrt)
WEFT_UNARY(sin, Sin)
WEFT_UNARY(cos, Cos)
WEFT_UNARY(tan, Tan)
WEFT_UNARY(tanh, Tanh)
WEFT_UNARY(logistic, Logistic)
WEFT_UNARY(erf, Erf)
WEFT_UNARY(logical_not, Not)
#undef WEFT_UNARY

Array round(const Array& x, std::source_location loc) {
  return round(x, RoundingMethod::AwayFromZero, loc);
}
Array round(const Array& x, RoundingMethod method, std::source_location loc) {
  const Array operands[] = {x};
  return bind(OpKind::Round, operands, RoundAttrs{static_cast<std::int64_t>(method)}.write(), {},
              loc);
}

#define WEFT_BINARY(FN, KIND)                                          \
  Array FN(const Array& x, const Array& y, std::source_location loc) { \
    return binary(OpKind::KIND, x, y, loc);                            \
  }
WEFT_BINARY(add, Add)
WEFT_BINARY(sub, Sub)
WEFT_BINARY(mul, Mul)
WEFT_BINARY(div, Div)
WEFT_BINARY(rem, Rem)
WEFT_BINARY(pow, Pow)
WEFT_BINARY(max, Max)
WEFT_BINARY(min, Min)
WEFT_BINARY(atan2, Atan2)
WEFT_BINARY(logical_and, And)
WEFT_BINARY(logical_or, Or)
WEFT_BINARY(logical_xor, Xor)
WEFT_BINARY(eq, Eq)
WEFT_BINARY(ne, Ne)
WEFT_BINARY(lt, Lt)
WEFT_BINARY(le, Le)
WEFT_BINARY(gt, Gt)
WEFT_BINARY(ge, Ge)
#undef WEFT_BINARY

Array select(const Array& pred, const Array& on_true, const Array& on_false,
             std::source_location loc) {
  const Array operands[] = {pred, on_true, on_false};
  return bind(OpKind::Select, operands, {}, {}, loc);
}

Array convert_element_type(const Array& x, DType dtype, std::source_location loc) {
  const Array operands[] = {x};
  return bind(OpKind::Convert, operands, {}, {dtype, {}}, loc);
}

Array constant(double value, DType dtype, std::source_location) {
  return Array::scalar(value, dtype);  // integer dtypes: truncated and saturated, as convert
}

Array iota(DType dtype, const Shape& shape, std::int64_t dimension, std::source_location loc) {
  return bind(OpKind::Iota, {}, DimensionAttrs{dimension}.write(), {dtype, shape}, loc);
}

Array broadcast_in_dim(const Array& x, const Shape& shape, const Axes& dims,
                       std::source_location loc) {
  const Array operands[] = {x};
  return bind(OpKind::BroadcastInDim, operands, BroadcastAttrs{dims}.write(), {x.dtype(), shape},
              loc);
}

Array reshape(const Array& x, const Shape& shape, std::source_location loc) {
  const Array operands[] = {x};
  return bind(OpKind::Reshape, operands, {}, {x.dtype(), shape}, loc);
}

Array transpose(const Array& x, const Axes& permutation, std::source_location loc) {
  const Array operands[] = {x};
  return bind(OpKind::Transpose, operands, TransposeAttrs{permutation}.write(), {}, loc);
}

Array slice(const Array& x, const Axes& start, const Axes& limit, const Axes& stride,
            std::source_location loc) {
  const Array operands[] = {x};
  Axes strides = stride.empty() ? Axes(start.size(), 1) : stride;
  return bind(OpKind::Slice, operands, SliceAttrs{start, limit, strides}.write(), {}, loc);
}

namespace {

// jax.lax wraps a negative start index to index + dimension before the primitive clamps it
// (JAX's _dynamic_slice_indices); here literal starts wrap at once, traced ones through a
// staged select. Unsigned starts are never negative. Operands the primitive will reject pass
// unchanged, so that its error names them.
//
// u32, u64 and i64 starts are also clamped here, into [0, dim - size], which the primitive then
// leaves alone: the OpenCL code generator narrows a start to its index type before clamping
// it, so a u32 start of 2^31 or more, or an i64 start outside the i32 range, came out wrong
// on devices.
struct StartAxis {
  std::int64_t dim;
  std::int64_t size;  // of the slice or update along this axis
};

std::optional<StartAxis> start_axis(const std::vector<Array>& operands, std::size_t leading,
                                    std::size_t i, const Attrs& attrs) {
  const Array& x = operands[0];
  const Array& start = operands[i];
  const std::size_t axis = i - leading;
  if (!x.valid() || !start.valid() || axis >= x.shape().size() || !start.shape().empty() ||
      !is_integer(start.dtype()))
    return std::nullopt;
  std::int64_t size = -1;
  if (leading == 2) {
    const Array& update = operands[1];
    if (update.valid() && update.shape().size() == x.shape().size()) size = update.shape()[axis];
  } else if (attrs.find(DynamicSliceAttrs::kSizes)) {
    const Axes sizes = DynamicSliceAttrs::read(attrs).sizes;
    if (axis < sizes.size()) size = sizes[axis];
  }
  const std::int64_t dim = x.shape()[axis];
  if (size < 0 || size > dim) return std::nullopt;
  return StartAxis{dim, size};
}

bool clamped_here(DType t) {
  return t == DType::U32 || t == DType::I64 || t == DType::U64;
}

Array prepared_start(const Array& start, StartAxis axis, const std::source_location& loc) {
  const DType t = start.dtype();
  const std::int64_t limit = axis.dim - axis.size;
  if (start.is_literal()) {
    std::int64_t value = start.item_i64(loc);
    if (t == DType::U64 && value < 0) value = limit;  // a u64 start of 2^63 or more
    if (value < 0 && is_signed_integer(t)) value += axis.dim;
    if (clamped_here(t)) value = std::clamp<std::int64_t>(value, 0, limit);
    return value == start.item_i64(loc) ? start : Array::scalar_int(value, t);
  }
  Array s = start;
  if (is_signed_integer(t)) {
    const Array negative = lt(s, constant(0, t, loc), loc);
    s = select(negative, add(s, constant(static_cast<double>(axis.dim), t, loc), loc), s, loc);
  }
  if (clamped_here(t)) {
    if (is_signed_integer(t)) s = max(s, constant(0, t, loc), loc);
    s = min(s, constant(static_cast<double>(limit), t, loc), loc);
  }
  return s;
}

// Binds a dynamic slice primitive whose first `leading` operands are arrays, the rest starts.
Array bind_with_prepared_starts(OpKind op, const std::vector<Array>& operands, std::size_t leading,
                                const Attrs& attrs, const std::source_location& loc) {
  bool staged = false;
  for (std::size_t i = leading; i < operands.size(); ++i)
    staged |= start_axis(operands, leading, i, attrs) && !operands[i].is_literal();
  auto prepare_and_bind = [&] {
    std::vector<Array> prepared = operands;
    for (std::size_t i = leading; i < operands.size(); ++i)
      if (auto axis = start_axis(operands, leading, i, attrs))
        prepared[i] = prepared_start(operands[i], *axis, loc);
    return bind(op, prepared, attrs, {}, loc);
  };
  // Eagerly, the start arithmetic and the slice run as one program.
  if (!staged) return prepare_and_bind();
  return detail::run_fused_eagerly(prepare_and_bind, std::string(op_name(op)).c_str(), loc);
}

}  // namespace

Array dynamic_slice(const Array& x, const std::vector<Array>& starts, const Shape& sizes,
                    std::source_location loc) {
  std::vector<Array> operands{x};
  operands.insert(operands.end(), starts.begin(), starts.end());
  return bind_with_prepared_starts(OpKind::DynamicSlice, operands, 1,
                                   DynamicSliceAttrs{sizes}.write(), loc);
}

Array dynamic_update_slice(const Array& x, const Array& update, const std::vector<Array>& starts,
                           std::source_location loc) {
  std::vector<Array> operands{x, update};
  operands.insert(operands.end(), starts.begin(), starts.end());
  return bind_with_prepared_starts(OpKind::DynamicUpdateSlice, operands, 2, {}, loc);
}

Array concatenate(const std::vector<Array>& xs, std::int64_t dimension, std::source_location loc) {
  return bind(OpKind::Concatenate, xs, DimensionAttrs{dimension}.write(), {}, loc);
}

Array pad(const Array& x, const Array& pad_value, const Axes& low, const Axes& high,
          const Axes& interior, std::source_location loc) {
  const Array operands[] = {x, pad_value};
  Axes inner = interior.empty() ? Axes(low.size(), 0) : interior;
  return bind(OpKind::Pad, operands, PadAttrs{low, high, inner}.write(), {}, loc);
}

Array reduce_sum(const Array& x, const Axes& axes, std::source_location loc) {
  return reduce(OpKind::ReduceSum, x, axes, DType::I32, loc);
}
Array reduce_prod(const Array& x, const Axes& axes, std::source_location loc) {
  return reduce(OpKind::ReduceProd, x, axes, DType::I32, loc);
}
Array reduce_max(const Array& x, const Axes& axes, std::source_location loc) {
  return reduce(OpKind::ReduceMax, x, axes, DType::I32, loc);
}
Array reduce_min(const Array& x, const Axes& axes, std::source_location loc) {
  return reduce(OpKind::ReduceMin, x, axes, DType::I32, loc);
}
Array argmax(const Array& x, const Axes& axes, DType index_dtype, std::source_location loc) {
  return reduce(OpKind::ArgMax, x, axes, index_dtype, loc);
}
Array argmin(const Array& x, const Axes& axes, DType index_dtype, std::source_location loc) {
  return reduce(OpKind::ArgMin, x, axes, index_dtype, loc);
}

Array dot_general(const Array& lhs, const Array& rhs, const DotDims& dims,
                  std::source_location loc) {
  const Array operands[] = {lhs, rhs};
  return bind(
      OpKind::DotGeneral, operands,
      DotGeneralAttrs{dims.lhs_contracting, dims.rhs_contracting, dims.lhs_batch, dims.rhs_batch}
          .write(),
      {}, loc);
}

}  // namespace weft::lax
