// A numpy-like layer over weft::lax: broadcasting, dtype promotion, C++ scalars as weakly
// typed constants, and operator overloads, following jax.numpy (docs/semantics.md lists the
// few deliberate departures). JAX's omnistaging example select_tril reads:
//
//   auto select_tril = [](const Array& x) {
//     auto mask = np::arange(x.shape()[0]).reshape({-1, 1}) > np::arange(x.shape()[1]);
//     return np::where(mask, x, np::zeros_like(x));
//   };
#pragma once

#include <concepts>
#include <cstdint>
#include <limits>
#include <optional>
#include <source_location>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "weft/array.h"
#include "weft/ir/op_kind.h"
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
concept Scalar = std::is_arithmetic_v<T>;

// A C++ number used as an operand, typed as JAX types a Python scalar. Integers and floating
// values are weak: they take the array's dtype, except that a floating value with an integer
// or bool array gives f32 (JAX's default float) and an integer with a bool array gives i32.
// A bool is not weak; it promotes as a bool array does (`x + true` keeps x's dtype).
class WeakScalar {
 public:
  enum class Kind { Bool, Int, Float };

  template <Scalar T>
  WeakScalar(T value) {  // implicit, so np functions take plain numbers
    if constexpr (std::is_same_v<T, bool>) {
      kind_ = Kind::Bool;
      int_value_ = value ? 1 : 0;
      float_value_ = int_value_;
    } else if constexpr (std::is_integral_v<T>) {
      kind_ = Kind::Int;
      if constexpr (std::is_unsigned_v<T>)
        exceeds_i64_ = static_cast<std::uint64_t>(value) >
                       static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
      int_value_ = static_cast<std::int64_t>(value);
      float_value_ = static_cast<double>(value);
    } else {
      kind_ = Kind::Float;
      float_value_ = static_cast<double>(value);
    }
  }

  Kind kind() const { return kind_; }
  double float_value() const { return float_value_; }
  std::int64_t int_value() const { return int_value_; }  // Bool and Int kinds
  bool exceeds_i64() const { return exceeds_i64_; }      // an unsigned value above INT64_MAX
  std::string to_string() const;

 private:
  Kind kind_ = Kind::Int;
  double float_value_ = 0;
  std::int64_t int_value_ = 0;
  bool exceeds_i64_ = false;
};

namespace np {

using Axes = std::vector<std::int64_t>;

// Result dtype of combining two dtypes (JAX's lattice without weak types: bool < u32, i32 <
// i64 < f32 < f64, and i32 with u32 gives i64).
DType promote_types(DType a, DType b);
// Dtype of a weakly typed scalar combined with an array of dtype `other`.
DType weak_result_type(WeakScalar value, DType other);
// Shape that two shapes broadcast to; ShapeError names both shapes.
Shape broadcast_shapes(const Shape& a, const Shape& b, const char* op = "broadcast");

// A scalar as a literal array of weak_result_type(value, like.dtype()). An integer that the
// result dtype cannot hold is an InvalidArgumentError (u32 also takes -2^31..-1, which wrap,
// as in JAX).
Array scalar_like(WeakScalar value, const Array& like, WEFT_LOC_PARAM);

// Creation. Without a trace these run on the default device. Without a dtype, full() and
// arange() take it from the values as JAX does: bool, i32 for integers, f32 if any is floating.
Array array(const HostArray& host, Device* device = nullptr);
Array zeros(const Shape& shape, DType dtype = DType::F32, WEFT_LOC_PARAM);
Array ones(const Shape& shape, DType dtype = DType::F32, WEFT_LOC_PARAM);
Array full(const Shape& shape, WeakScalar value, std::optional<DType> dtype = std::nullopt,
           WEFT_LOC_PARAM);
Array zeros_like(const Array& x, WEFT_LOC_PARAM);
Array ones_like(const Array& x, WEFT_LOC_PARAM);
Array full_like(const Array& x, WeakScalar value, WEFT_LOC_PARAM);  // x's dtype
Array arange(WeakScalar stop, std::optional<DType> dtype = std::nullopt, WEFT_LOC_PARAM);
Array arange(WeakScalar start, WeakScalar stop, WeakScalar step = 1,
             std::optional<DType> dtype = std::nullopt, WEFT_LOC_PARAM);
Array eye(std::int64_t n, DType dtype = DType::F32, WEFT_LOC_PARAM);

// Arithmetic, broadcasting and promoting. bool operands: add and multiply are logical or/and,
// subtract and negative are errors; floor_divide, remainder, fmod and power compute in i32.
Array add(const Array& x, const Array& y, WEFT_LOC_PARAM);
Array subtract(const Array& x, const Array& y, WEFT_LOC_PARAM);
Array multiply(const Array& x, const Array& y, WEFT_LOC_PARAM);
Array divide(const Array& x, const Array& y, WEFT_LOC_PARAM);  // true division: ints give f32
// Floor division and its remainder, as Python's // and %: the remainder has the divisor's
// sign. Integers: x // 0 is -1 for x == 0, else -2 (u32: 0xFFFFFFFF); x % 0 is 0.
// Floats: x % 0 is NaN, x // 0 is x / 0.
Array floor_divide(const Array& x, const Array& y, WEFT_LOC_PARAM);
Array remainder(const Array& x, const Array& y, WEFT_LOC_PARAM);
Array mod(const Array& x, const Array& y, WEFT_LOC_PARAM);   // same as remainder
Array fmod(const Array& x, const Array& y, WEFT_LOC_PARAM);  // C's sign; integer x % 0 is 0
Array power(const Array& x, const Array& y, WEFT_LOC_PARAM);
Array maximum(const Array& x, const Array& y, WEFT_LOC_PARAM);  // NaN propagates
Array minimum(const Array& x, const Array& y, WEFT_LOC_PARAM);
Array arctan2(const Array& y, const Array& x, WEFT_LOC_PARAM);

// Bitwise (integers and bool, promoting) and logical (any dtype, as bool) operations.
Array bitwise_and(const Array& x, const Array& y, WEFT_LOC_PARAM);
Array bitwise_or(const Array& x, const Array& y, WEFT_LOC_PARAM);
Array bitwise_xor(const Array& x, const Array& y, WEFT_LOC_PARAM);
Array invert(const Array& x, WEFT_LOC_PARAM);  // ~x: bitwise not; logical not for bool
Array logical_and(const Array& x, const Array& y, WEFT_LOC_PARAM);
Array logical_or(const Array& x, const Array& y, WEFT_LOC_PARAM);
Array logical_xor(const Array& x, const Array& y, WEFT_LOC_PARAM);
Array logical_not(const Array& x, WEFT_LOC_PARAM);  // x == 0

// Selection. Scalars are weakly typed, as in the operators.
Array where(const Array& cond, const Array& x, const Array& y, WEFT_LOC_PARAM);
Array where(const Array& cond, const Array& x, WeakScalar y, WEFT_LOC_PARAM);
Array where(const Array& cond, WeakScalar x, const Array& y, WEFT_LOC_PARAM);
Array clip(const Array& x, WeakScalar lo, WeakScalar hi, WEFT_LOC_PARAM);  // min(max(x, lo), hi)

// Unary. The transcendental functions compute integer and bool inputs as f32; floor, ceil
// and round return integers unchanged; round rounds halves to even.
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
Array sign(const Array& x, WEFT_LOC_PARAM);  // sign(-0.0) is -0.0, sign(NaN) is NaN
Array negative(const Array& x, WEFT_LOC_PARAM);
Array exp2(const Array& x, WEFT_LOC_PARAM);
Array log1p(const Array& x, WEFT_LOC_PARAM);
Array expm1(const Array& x, WEFT_LOC_PARAM);
Array rsqrt(const Array& x, WEFT_LOC_PARAM);
Array erf(const Array& x, WEFT_LOC_PARAM);
Array isnan(const Array& x, WEFT_LOC_PARAM);
Array isinf(const Array& x, WEFT_LOC_PARAM);
Array isfinite(const Array& x, WEFT_LOC_PARAM);
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

// Reductions; empty axes means all. Negative axes count from the end. sum and prod of bool
// give i32, max and min of bool give bool, mean of integers gives f32. max and min over zero
// elements are a ShapeError (no identity), as in numpy.
Array sum(const Array& x, Axes axes = {}, bool keepdims = false, WEFT_LOC_PARAM);
Array prod(const Array& x, Axes axes = {}, bool keepdims = false, WEFT_LOC_PARAM);
Array max(const Array& x, Axes axes = {}, bool keepdims = false, WEFT_LOC_PARAM);
Array min(const Array& x, Axes axes = {}, bool keepdims = false, WEFT_LOC_PARAM);
Array mean(const Array& x, Axes axes = {}, bool keepdims = false, WEFT_LOC_PARAM);
// i32 index of the first extreme value (or first NaN); without an axis, of the flattened x.
Array argmax(const Array& x, std::optional<std::int64_t> axis = std::nullopt, bool keepdims = false,
             WEFT_LOC_PARAM);
Array argmin(const Array& x, std::optional<std::int64_t> axis = std::nullopt, bool keepdims = false,
             WEFT_LOC_PARAM);

// Linear algebra and friends.
Array matmul(const Array& x, const Array& y, WEFT_LOC_PARAM);  // numpy rules, batched
Array softmax(const Array& x, std::int64_t axis = -1, WEFT_LOC_PARAM);
Array logsumexp(const Array& x, std::int64_t axis = -1, WEFT_LOC_PARAM);
Array tril(const Array& x, std::int64_t k = 0, WEFT_LOC_PARAM);

// Cumulative ops, rev and sorting.
// Cumulative sum and product along `axis` (without one, of the flattened x); bool operands
// count in i32, as jax.numpy's.
Array cumsum(const Array& x, std::optional<std::int64_t> axis = std::nullopt, WEFT_LOC_PARAM);
Array cumprod(const Array& x, std::optional<std::int64_t> axis = std::nullopt, WEFT_LOC_PARAM);
// x with the order of its elements reversed along `axes` (all axes when empty).
Array flip(const Array& x, Axes axes = {}, WEFT_LOC_PARAM);
// Stable ascending sort along `axis` (without one, of the flattened x), NaN last; argsort gives
// the i32 positions that sort it.
Array sort(const Array& x, std::optional<std::int64_t> axis = -1, WEFT_LOC_PARAM);
Array argsort(const Array& x, std::optional<std::int64_t> axis = -1, WEFT_LOC_PARAM);

// Pooling, as flax.linen.max_pool and avg_pool (np_pool.cpp): x is [batch..., spatial...,
// features] (or [spatial..., features]); windows of `window_shape` over the spatial axes, moved
// by `strides` (empty: 1 each), with padding "VALID", "SAME" or (low, high) per spatial axis.
struct PoolPadding {
  PoolPadding(const char* mode = "VALID") : mode(mode) {}
  PoolPadding(std::vector<std::pair<std::int64_t, std::int64_t>> low_high)
      : pairs(std::move(low_high)) {}
  std::string mode;  // "VALID" or "SAME"; empty when `pairs` holds the padding
  std::vector<std::pair<std::int64_t, std::int64_t>> pairs;
};
// The maximum of each window; padding never wins.
Array max_pool(const Array& x, const Shape& window_shape, const Shape& strides = {},
               const PoolPadding& padding = {}, WEFT_LOC_PARAM);
// The mean of each window (integers in f32): its sum over the window's size, or, without
// count_include_pad, over the number of x's elements it covers.
Array avg_pool(const Array& x, const Shape& window_shape, const Shape& strides = {},
               const PoolPadding& padding = {}, bool count_include_pad = true, WEFT_LOC_PARAM);

Array equal(const Array& x, const Array& y, WEFT_LOC_PARAM);
Array not_equal(const Array& x, const Array& y, WEFT_LOC_PARAM);
Array less(const Array& x, const Array& y, WEFT_LOC_PARAM);
Array less_equal(const Array& x, const Array& y, WEFT_LOC_PARAM);
Array greater(const Array& x, const Array& y, WEFT_LOC_PARAM);
Array greater_equal(const Array& x, const Array& y, WEFT_LOC_PARAM);

// Bit operations and the remaining elementwise ops (np_bits.cpp), as jax.numpy.
// Shifts of integers (bool computes as i32); right_shift is arithmetic for signed integers,
// logical for unsigned ones. Amounts outside [0, bit width) shift every bit out.
Array left_shift(const Array& x, const Array& y, WEFT_LOC_PARAM);
Array right_shift(const Array& x, const Array& y, WEFT_LOC_PARAM);
Array nextafter(const Array& x, const Array& y, WEFT_LOC_PARAM);  // integers compute as f32
// x to a concrete integer power by squaring and multiplying (lax::integer_pow), as jax.numpy
// does for a Python int exponent; negative powers of integers are a DTypeError.
Array power(const Array& x, std::int64_t y, WEFT_LOC_PARAM);
// Element by element, the choice of the first condition that holds, else `default_value`
// (conditions and choices broadcast together; the choices promote).
Array select(const std::vector<Array>& conditions, const std::vector<Array>& choices,
             WeakScalar default_value = 0, WEFT_LOC_PARAM);
// Gather and scatter (as jax.numpy): indices are integer arrays of static shape; negative
// indices count from the end, as in numpy (but take in clip mode clamps them to 0, as numpy's
// and JAX's take do). Out-of-bounds indices follow `mode`: take and take_along_axis default to
// fill (NaN for floats, as JAX), at(...).get to clip, updates drop them (JAX's defaults).
Array take(const Array& x, const Array& indices, std::optional<std::int64_t> axis = std::nullopt,
           IndexMode mode = IndexMode::fill, WEFT_LOC_PARAM);
Array take_along_axis(const Array& x, const Array& indices, std::int64_t axis,
                      IndexMode mode = IndexMode::fill, WEFT_LOC_PARAM);
// x.at[indices] as jax.numpy has it, for integer-array indices into x's leading axis:
//   np::at(x, i).add(v)   // x with v added at rows i (repeated rows add up)
// v broadcasts to indices.shape + x.shape[1:] (numpy rules); each returns a new array.
class AtIndex {
 public:
  AtIndex(Array x, Array indices, std::source_location loc)
      : x_(std::move(x)), indices_(std::move(indices)), loc_(loc) {}
  Array get(IndexMode mode = IndexMode::clip) const;  // x[indices]
  Array set(const Array& values, IndexMode mode = IndexMode::fill) const;
  Array add(const Array& values, IndexMode mode = IndexMode::fill) const;
  Array multiply(const Array& values, IndexMode mode = IndexMode::fill) const;
  Array min(const Array& values, IndexMode mode = IndexMode::fill) const;
  Array max(const Array& values, IndexMode mode = IndexMode::fill) const;

 private:
  Array update(OpKind op, const Array& values, IndexMode mode) const;
  Array x_, indices_;
  std::source_location loc_;
};
AtIndex at(const Array& x, const Array& indices, WEFT_LOC_PARAM);
// jax.nn.one_hot: x's shape plus a last axis of `num_classes`; 1 where it equals x.
Array one_hot(const Array& x, std::int64_t num_classes, DType dtype = DType::F32, WEFT_LOC_PARAM);
// jax.ops.segment_sum/max/min: data's rows combined by segment id into `num_segments` rows;
// ids outside [0, num_segments) are dropped; an empty segment holds 0 (sum) or the lowest
// (max) or highest (min) value of the dtype (-inf and inf for floats).
Array segment_sum(const Array& data, const Array& segment_ids, std::int64_t num_segments,
                  WEFT_LOC_PARAM);
Array segment_max(const Array& data, const Array& segment_ids, std::int64_t num_segments,
                  WEFT_LOC_PARAM);
Array segment_min(const Array& data, const Array& segment_ids, std::int64_t num_segments,
                  WEFT_LOC_PARAM);
// jnp.repeat with a static count: each element `repeats` times along `axis` (none: x
// flattened first); jnp.tile: x repeated reps[i] times along axis i (the shorter of x's shape
// and reps is padded with leading 1s).
Array repeat(const Array& x, std::int64_t repeats, std::optional<std::int64_t> axis = std::nullopt,
             WEFT_LOC_PARAM);
// jnp.repeat with a count per element along `axis` (one count applies to every element), known
// when tracing: the result's length is their sum.
Array repeat(const Array& x, const std::vector<std::int64_t>& repeats,
             std::optional<std::int64_t> axis = std::nullopt, WEFT_LOC_PARAM);
// jnp.repeat(x, repeats, axis, total_repeat_length=...) with traced integer counts: the result
// has total_repeat_length elements along the axis; counts summing to less repeat the last
// element to fill it, counts summing to more are cut off (as JAX).
Array repeat(const Array& x, const Array& repeats, std::int64_t total_repeat_length,
             std::optional<std::int64_t> axis = std::nullopt, WEFT_LOC_PARAM);
Array tile(const Array& x, const std::vector<std::int64_t>& reps, WEFT_LOC_PARAM);

// Sort family (np_sort_family.cpp): functions built on sorting and on masks with static sizes.
// jnp.searchsorted (its default binary search): for each element of v, the i32 index in the 1-D
// ascending `a` where it would be inserted, before equal elements (left) or after them (right).
// NaN sorts last and -0.0 equals 0.0, as in sort; a and v promote.
enum class Side { left, right };
Array searchsorted(const Array& a, const Array& v, Side side = Side::left, WEFT_LOC_PARAM);
// jnp.searchsorted(a, v, side, sorter=sorter): `a` is searched in the order of the integer
// indices `sorter` (such as argsort(a)), that is a[sorter].
Array searchsorted(const Array& a, const Array& v, Side side, const Array& sorter, WEFT_LOC_PARAM);
// jnp.nonzero(a, size=size, fill_value=fill_value): per axis of a, the i32 indices of its
// nonzero elements in row-major order, the first `size` of them, padded with fill_value.
std::vector<Array> nonzero(const Array& a, std::int64_t size, std::int64_t fill_value = 0,
                           WEFT_LOC_PARAM);
// jnp.argwhere: those indices as the columns of an i32 [size, a's rank] array; jnp.flatnonzero:
// the indices into the flattened a.
Array argwhere(const Array& a, std::int64_t size, std::int64_t fill_value = 0, WEFT_LOC_PARAM);
Array flatnonzero(const Array& a, std::int64_t size, std::int64_t fill_value = 0, WEFT_LOC_PARAM);
// jnp.unique(x, size=size, fill_value=fill_value): the first `size` sorted distinct values of
// the flattened x (NaNs count as one value, last; -0.0 equals 0.0), padded with fill_value, or
// without one with the smallest value.
Array unique(const Array& x, std::int64_t size, std::optional<WeakScalar> fill_value = std::nullopt,
             WEFT_LOC_PARAM);
// jnp.unique(x, return_index, return_inverse, return_counts, size, fill_value): the values as
// unique gives them, the i32 position in the flattened x of each value's first occurrence (0
// for padding), each element's index into the values (x's shape) and each value's count (0 for
// padding).
struct Unique {
  Array values, indices, inverse, counts;
};
Unique unique_all(const Array& x, std::int64_t size,
                  std::optional<WeakScalar> fill_value = std::nullopt, WEFT_LOC_PARAM);
// jnp.compress(condition, a, axis, size=size, fill_value=fill_value): the first `size` slices
// of a along axis (none: of the flattened a) where condition holds, padded with fill_value.
Array compress(const Array& condition, const Array& a, std::optional<std::int64_t> axis,
               std::int64_t size, WeakScalar fill_value = 0, WEFT_LOC_PARAM);

}  // namespace np

// Operators follow jax.numpy: broadcasting, promotion, comparisons give bool arrays, `%` is
// np::remainder (the divisor's sign), `&` `|` `^` `~` are bitwise (logical on bool), and `!`
// is np::logical_not. There is no `//`: use np::floor_divide.
Array operator+(Located x, const Array& y);
Array operator-(Located x, const Array& y);
Array operator*(Located x, const Array& y);
Array operator/(Located x, const Array& y);
Array operator%(Located x, const Array& y);
// Both sides Located: C++20 also tries `y == x`, and with two equal parameter types that
// reversed form can never tie with this one (which clang would warn about).
Array operator==(Located x, Located y);
Array operator!=(Located x, const Array& y);
Array operator<(Located x, const Array& y);
Array operator<=(Located x, const Array& y);
Array operator>(Located x, const Array& y);
Array operator>=(Located x, const Array& y);
Array operator&(Located x, const Array& y);
Array operator|(Located x, const Array& y);
Array operator^(Located x, const Array& y);
Array operator-(Located x);
Array operator~(Located x);
// Takes the Array itself: through Located it would tie with the built-in `!` on the explicit
// operator bool. So it records no source line; np::logical_not(x) does.
Array operator!(const Array& x);

// An array with a C++ scalar on either side; the scalar is weakly typed (WeakScalar).
#define WEFT_SCALAR_OPERATOR(OP, FN)                                   \
  template <Scalar S>                                                  \
  Array operator OP(Located x, S y) {                                  \
    return np::FN(x.array, np::scalar_like(y, x.array, x.loc), x.loc); \
  }                                                                    \
  template <Scalar S>                                                  \
  Array operator OP(S y, Located x) {                                  \
    return np::FN(np::scalar_like(y, x.array, x.loc), x.array, x.loc); \
  }
WEFT_SCALAR_OPERATOR(+, add)
WEFT_SCALAR_OPERATOR(-, subtract)
WEFT_SCALAR_OPERATOR(*, multiply)
WEFT_SCALAR_OPERATOR(/, divide)
WEFT_SCALAR_OPERATOR(%, remainder)
WEFT_SCALAR_OPERATOR(&, bitwise_and)
WEFT_SCALAR_OPERATOR(|, bitwise_or)
WEFT_SCALAR_OPERATOR(^, bitwise_xor)
WEFT_SCALAR_OPERATOR(==, equal)
WEFT_SCALAR_OPERATOR(!=, not_equal)
WEFT_SCALAR_OPERATOR(<, less)
WEFT_SCALAR_OPERATOR(<=, less_equal)
WEFT_SCALAR_OPERATOR(>, greater)
WEFT_SCALAR_OPERATOR(>=, greater_equal)
#undef WEFT_SCALAR_OPERATOR

}  // namespace weft
