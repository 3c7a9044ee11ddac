#include "weft/ops.h"

#include "weft/error.h"
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
  return bind(op, operands, {{"axes", axes}}, {index_dtype, {}}, loc);
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
WEFT_UNARY(round, Round)
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
  return is_float(dtype) ? Array::scalar(value, dtype)
                         : Array::scalar_int(static_cast<std::int64_t>(value), dtype);
}

Array iota(DType dtype, const Shape& shape, std::int64_t dimension, std::source_location loc) {
  return bind(OpKind::Iota, {}, {{"dimension", dimension}}, {dtype, shape}, loc);
}

Array broadcast_in_dim(const Array& x, const Shape& shape, const Axes& dims,
                       std::source_location loc) {
  const Array operands[] = {x};
  return bind(OpKind::BroadcastInDim, operands, {{"dims", dims}}, {x.dtype(), shape}, loc);
}

Array reshape(const Array& x, const Shape& shape, std::source_location loc) {
  const Array operands[] = {x};
  return bind(OpKind::Reshape, operands, {}, {x.dtype(), shape}, loc);
}

Array transpose(const Array& x, const Axes& permutation, std::source_location loc) {
  const Array operands[] = {x};
  return bind(OpKind::Transpose, operands, {{"permutation", permutation}}, {}, loc);
}

Array slice(const Array& x, const Axes& start, const Axes& limit, const Axes& stride,
            std::source_location loc) {
  const Array operands[] = {x};
  Axes strides = stride.empty() ? Axes(start.size(), 1) : stride;
  return bind(OpKind::Slice, operands, {{"start", start}, {"limit", limit}, {"stride", strides}},
              {}, loc);
}

Array dynamic_slice(const Array& x, const std::vector<Array>& starts, const Shape& sizes,
                    std::source_location loc) {
  std::vector<Array> operands{x};
  operands.insert(operands.end(), starts.begin(), starts.end());
  return bind(OpKind::DynamicSlice, operands, {{"sizes", sizes}}, {}, loc);
}

Array dynamic_update_slice(const Array& x, const Array& update, const std::vector<Array>& starts,
                           std::source_location loc) {
  std::vector<Array> operands{x, update};
  operands.insert(operands.end(), starts.begin(), starts.end());
  return bind(OpKind::DynamicUpdateSlice, operands, {}, {}, loc);
}

Array concatenate(const std::vector<Array>& xs, std::int64_t dimension, std::source_location loc) {
  return bind(OpKind::Concatenate, xs, {{"dimension", dimension}}, {}, loc);
}

Array pad(const Array& x, const Array& pad_value, const Axes& low, const Axes& high,
          const Axes& interior, std::source_location loc) {
  const Array operands[] = {x, pad_value};
  Axes inner = interior.empty() ? Axes(low.size(), 0) : interior;
  return bind(OpKind::Pad, operands, {{"low", low}, {"high", high}, {"interior", inner}}, {}, loc);
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
  return bind(OpKind::DotGeneral, operands,
              {{"lhs_contracting", dims.lhs_contracting},
               {"rhs_contracting", dims.rhs_contracting},
               {"lhs_batch", dims.lhs_batch},
               {"rhs_batch", dims.rhs_batch}},
              {}, loc);
}

}  // namespace weft::lax
