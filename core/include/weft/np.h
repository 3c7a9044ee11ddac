// A numpy-like layer over weft::lax: broadcasting, dtype promotion, C++ scalars as weakly
// typed constants, and operator overloads. The seed's select_tril reads:
//
//   auto select_tril = [](const Array& x) {
//     auto mask = np::arange(x.shape()[0]).reshape({-1, 1}) > np::arange(x.shape()[1]);
//     return np::where(mask, x, np::zeros_like(x));
//   };
#pragma once

#include <concepts>
#include <cstdint>
#include <optional>
#include <source_location>
#include <type_traits>
#include <vector>

#include "weft/array.h"
#include "weft/ops.h"

namespace weft {

// Carries the user's source line through operator overloads, which cannot take a default
// source_location argument: the conversion from Array happens at the user's expression.
struct Located {
  const Array& array;
  std::source_location loc;
  Located(const Array& a, std::source_location l = std::source_location::current())
      : array(a), loc(l) {}
};

template <typename T>
concept Scalar = std::is_arithmetic_v<T> && !std::is_same_v<T, bool>;

namespace np {

using Axes = std::vector<std::int64_t>;

// Result dtype of combining two dtypes (numpy-like; i32 with u32 gives i64).
DType promote_types(DType a, DType b);
// Shape that two shapes broadcast to; ShapeError names both shapes.
Shape broadcast_shapes(const Shape& a, const Shape& b, const char* op = "broadcast");

// Creation. Without a trace these run on `device` (default device when null).
Array array(const HostArray& host, Device* device = nullptr);
Array zeros(const Shape& shape, DType dtype = DType::F32, WEFT_LOC_PARAM);
Array ones(const Shape& shape, DType dtype = DType::F32, WEFT_LOC_PARAM);
Array full(const Shape& shape, double value, DType dtype = DType::F32, WEFT_LOC_PARAM);
Array zeros_like(const Array& x, WEFT_LOC_PARAM);
Array ones_like(const Array& x, WEFT_LOC_PARAM);
Array full_like(const Array& x, double value, WEFT_LOC_PARAM);
Array arange(std::int64_t stop, DType dtype = DType::I32, WEFT_LOC_PARAM);
Array arange(double start, double stop, double step, DType dtype = DType::F32, WEFT_LOC_PARAM);
Array eye(std::int64_t n, DType dtype = DType::F32, WEFT_LOC_PARAM);

// Elementwise, broadcasting.
Array add(const Array& x, const Array& y, WEFT_LOC_PARAM);
Array subtract(const Array& x, const Array& y, WEFT_LOC_PARAM);
Array multiply(const Array& x, const Array& y, WEFT_LOC_PARAM);
Array divide(const Array& x, const Array& y, WEFT_LOC_PARAM);  // true division: ints give f32
Array remainder(const Array& x, const Array& y, WEFT_LOC_PARAM);
Array power(const Array& x, const Array& y, WEFT_LOC_PARAM);
Array maximum(const Array& x, const Array& y, WEFT_LOC_PARAM);
Array minimum(const Array& x, const Array& y, WEFT_LOC_PARAM);
Array where(const Array& cond, const Array& x, const Array& y, WEFT_LOC_PARAM);
Array exp(const Array& x, WEFT_LOC_PARAM);
Array log(const Array& x, WEFT_LOC_PARAM);
Array sqrt(const Array& x, WEFT_LOC_PARAM);
Array tanh(const Array& x, WEFT_LOC_PARAM);
Array abs(const Array& x, WEFT_LOC_PARAM);
Array sin(const Array& x, WEFT_LOC_PARAM);
Array cos(const Array& x, WEFT_LOC_PARAM);
Array tan(const Array& x, WEFT_LOC_PARAM);
Array floor(const Array& x, WEFT_LOC_PARAM);
Array ceil(const Array& x, WEFT_LOC_PARAM);
Array round(const Array& x, WEFT_LOC_PARAM);
Array sign(const Array& x, WEFT_LOC_PARAM);
Array negative(const Array& x, WEFT_LOC_PARAM);
Array exp2(const Array& x, WEFT_LOC_PARAM);
Array log1p(const Array& x, WEFT_LOC_PARAM);
Array expm1(const Array& x, WEFT_LOC_PARAM);
Array rsqrt(const Array& x, WEFT_LOC_PARAM);
Array erf(const Array& x, WEFT_LOC_PARAM);
Array arctan2(const Array& y, const Array& x, WEFT_LOC_PARAM);
Array clip(const Array& x, double lo, double hi, WEFT_LOC_PARAM);
Array relu(const Array& x, WEFT_LOC_PARAM);
Array sigmoid(const Array& x, WEFT_LOC_PARAM);
Array astype(const Array& x, DType dtype, WEFT_LOC_PARAM);

// Layout.
Array reshape(const Array& x, Shape shape, WEFT_LOC_PARAM);       // one -1 entry is inferred
Array transpose(const Array& x, Axes axes = {}, WEFT_LOC_PARAM);  // empty: reverse
Array expand_dims(const Array& x, std::int64_t axis, WEFT_LOC_PARAM);
Array broadcast_to(const Array& x, const Shape& shape, WEFT_LOC_PARAM);
Array concatenate(const std::vector<Array>& xs, std::int64_t axis = 0, WEFT_LOC_PARAM);
// A shape held in an array must be concrete; inside a trace this raises ConcretizationError.
Array reshape(const Array& x, const Array& shape, WEFT_LOC_PARAM);

// Reductions; empty axes means all. Negative axes count from the end.
Array sum(const Array& x, Axes axes = {}, bool keepdims = false, WEFT_LOC_PARAM);
Array prod(const Array& x, Axes axes = {}, bool keepdims = false, WEFT_LOC_PARAM);
Array max(const Array& x, Axes axes = {}, bool keepdims = false, WEFT_LOC_PARAM);
Array min(const Array& x, Axes axes = {}, bool keepdims = false, WEFT_LOC_PARAM);
Array mean(const Array& x, Axes axes = {}, bool keepdims = false, WEFT_LOC_PARAM);
Array argmax(const Array& x, std::int64_t axis, WEFT_LOC_PARAM);
Array argmin(const Array& x, std::int64_t axis, WEFT_LOC_PARAM);

// Linear algebra and friends.
Array matmul(const Array& x, const Array& y, WEFT_LOC_PARAM);  // numpy rules, batched
Array softmax(const Array& x, std::int64_t axis = -1, WEFT_LOC_PARAM);
Array logsumexp(const Array& x, std::int64_t axis = -1, WEFT_LOC_PARAM);
Array tril(const Array& x, std::int64_t k = 0, WEFT_LOC_PARAM);

// A weakly typed C++ scalar as an array compatible with `like` (its dtype, or f32 when a
// fractional value meets an integer array).
Array scalar_like(double value, const Array& like, WEFT_LOC_PARAM);

}  // namespace np

// Operators follow numpy: broadcasting, promotion, comparisons give bool arrays.
Array operator+(Located x, const Array& y);
Array operator-(Located x, const Array& y);
Array operator*(Located x, const Array& y);
Array operator/(Located x, const Array& y);
Array operator%(Located x, const Array& y);
Array operator==(Located x, const Array& y);
Array operator!=(Located x, const Array& y);
Array operator<(Located x, const Array& y);
Array operator<=(Located x, const Array& y);
Array operator>(Located x, const Array& y);
Array operator>=(Located x, const Array& y);
Array operator&(Located x, const Array& y);
Array operator|(Located x, const Array& y);
Array operator^(Located x, const Array& y);
Array operator-(Located x);
Array operator!(Located x);
Array operator~(Located x);

#define WEFT_SCALAR_OPERATOR(OP, FN)                                                        \
  template <Scalar S>                                                                       \
  Array operator OP(Located x, S y) {                                                       \
    return np::FN(x.array, np::scalar_like(static_cast<double>(y), x.array, x.loc), x.loc); \
  }                                                                                         \
  template <Scalar S>                                                                       \
  Array operator OP(S y, Located x) {                                                       \
    return np::FN(np::scalar_like(static_cast<double>(y), x.array, x.loc), x.array, x.loc); \
  }
WEFT_SCALAR_OPERATOR(+, add)
WEFT_SCALAR_OPERATOR(-, subtract)
WEFT_SCALAR_OPERATOR(*, multiply)
WEFT_SCALAR_OPERATOR(/, divide)
#undef WEFT_SCALAR_OPERATOR

namespace np {
Array equal(const Array& x, const Array& y, WEFT_LOC_PARAM);
Array not_equal(const Array& x, const Array& y, WEFT_LOC_PARAM);
Array less(const Array& x, const Array& y, WEFT_LOC_PARAM);
Array less_equal(const Array& x, const Array& y, WEFT_LOC_PARAM);
Array greater(const Array& x, const Array& y, WEFT_LOC_PARAM);
Array greater_equal(const Array& x, const Array& y, WEFT_LOC_PARAM);
}  // namespace np

#define WEFT_SCALAR_COMPARE(OP, FN)                                                         \
  template <Scalar S>                                                                       \
  Array operator OP(Located x, S y) {                                                       \
    return np::FN(x.array, np::scalar_like(static_cast<double>(y), x.array, x.loc), x.loc); \
  }
WEFT_SCALAR_COMPARE(==, equal)
WEFT_SCALAR_COMPARE(!=, not_equal)
WEFT_SCALAR_COMPARE(<, less)
WEFT_SCALAR_COMPARE(<=, less_equal)
WEFT_SCALAR_COMPARE(>, greater)
WEFT_SCALAR_COMPARE(>=, greater_equal)
#undef WEFT_SCALAR_COMPARE

}  // namespace weft
