// The primitives, one function each (weft::lax, after jax.lax): strict about shapes and
// dtypes, no implicit broadcasting or promotion. Every function records the caller's source
// line, which shape errors and concretization errors name.
#pragma once

#include <cstdint>
#include <optional>
#include <source_location>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "weft/array.h"
#include "weft/ir/op_attrs.h"

namespace weft::lax {

using Axes = std::vector<std::int64_t>;
#define WEFT_LOC_PARAM std::source_location loc = std::source_location::current()

// Unary.
Array neg(const Array& x, WEFT_LOC_PARAM);
Array abs(const Array& x, WEFT_LOC_PARAM);
Array sign(const Array& x, WEFT_LOC_PARAM);
Array floor(const Array& x, WEFT_LOC_PARAM);
Array ceil(const Array& x, WEFT_LOC_PARAM);
Array round(const Array& x, WEFT_LOC_PARAM);  // halves away from zero (np::round: to even)
// jax.lax.RoundingMethod.
enum class RoundingMethod : std::int64_t { AwayFromZero = 0, ToNearestEven = 1 };
Array round(const Array& x, RoundingMethod method, WEFT_LOC_PARAM);
Array exp(const Array& x, WEFT_LOC_PARAM);
Array exp2(const Array& x, WEFT_LOC_PARAM);
Array log(const Array& x, WEFT_LOC_PARAM);
Array log1p(const Array& x, WEFT_LOC_PARAM);
Array expm1(const Array& x, WEFT_LOC_PARAM);
Array sqrt(const Array& x, WEFT_LOC_PARAM);
Array rsqrt(const Array& x, WEFT_LOC_PARAM);
Array sin(const Array& x, WEFT_LOC_PARAM);
Array cos(const Array& x, WEFT_LOC_PARAM);
Array tan(const Array& x, WEFT_LOC_PARAM);
Array tanh(const Array& x, WEFT_LOC_PARAM);
Array logistic(const Array& x, WEFT_LOC_PARAM);
Array erf(const Array& x, WEFT_LOC_PARAM);
Array logical_not(const Array& x, WEFT_LOC_PARAM);  // bitwise not for integers

// Binary (equal shapes and dtypes).
Array add(const Array& x, const Array& y, WEFT_LOC_PARAM);
Array sub(const Array& x, const Array& y, WEFT_LOC_PARAM);
Array mul(const Array& x, const Array& y, WEFT_LOC_PARAM);
// XLA's truncating division and remainder (np::floor_divide and np::remainder are Python's).
Array div(const Array& x, const Array& y, WEFT_LOC_PARAM);  // integers truncate
Array rem(const Array& x, const Array& y, WEFT_LOC_PARAM);  // sign of x, like fmod
Array pow(const Array& x, const Array& y, WEFT_LOC_PARAM);
Array max(const Array& x, const Array& y, WEFT_LOC_PARAM);  // NaN propagates
Array min(const Array& x, const Array& y, WEFT_LOC_PARAM);
Array atan2(const Array& x, const Array& y, WEFT_LOC_PARAM);
Array logical_and(const Array& x, const Array& y, WEFT_LOC_PARAM);  // bitwise for integers
Array logical_or(const Array& x, const Array& y, WEFT_LOC_PARAM);
Array logical_xor(const Array& x, const Array& y, WEFT_LOC_PARAM);
Array eq(const Array& x, const Array& y, WEFT_LOC_PARAM);
Array ne(const Array& x, const Array& y, WEFT_LOC_PARAM);
Array lt(const Array& x, const Array& y, WEFT_LOC_PARAM);
Array le(const Array& x, const Array& y, WEFT_LOC_PARAM);
Array gt(const Array& x, const Array& y, WEFT_LOC_PARAM);
Array ge(const Array& x, const Array& y, WEFT_LOC_PARAM);

Array select(const Array& pred, const Array& on_true, const Array& on_false, WEFT_LOC_PARAM);
Array convert_element_type(const Array& x, DType dtype, WEFT_LOC_PARAM);

// A literal scalar: staged as a constant inside a trace.
Array constant(double value, DType dtype, WEFT_LOC_PARAM);
Array iota(DType dtype, const Shape& shape, std::int64_t dimension, WEFT_LOC_PARAM);

Array broadcast_in_dim(const Array& x, const Shape& shape, const Axes& dims, WEFT_LOC_PARAM);
Array reshape(const Array& x, const Shape& shape, WEFT_LOC_PARAM);
Array transpose(const Array& x, const Axes& permutation, WEFT_LOC_PARAM);
Array slice(const Array& x, const Axes& start, const Axes& limit, const Axes& stride = {},
            WEFT_LOC_PARAM);
// As jax.lax: a negative start first wraps to start + dimension (a staged select; literal
// starts wrap at once), then the primitive clamps it so the slice stays inside x, as in XLA.
Array dynamic_slice(const Array& x, const std::vector<Array>& starts, const Shape& sizes,
                    WEFT_LOC_PARAM);
Array dynamic_update_slice(const Array& x, const Array& update, const std::vector<Array>& starts,
                           WEFT_LOC_PARAM);
Array concatenate(const std::vector<Array>& xs, std::int64_t dimension, WEFT_LOC_PARAM);
Array pad(const Array& x, const Array& pad_value, const Axes& low, const Axes& high,
          const Axes& interior = {}, WEFT_LOC_PARAM);

Array reduce_sum(const Array& x, const Axes& axes, WEFT_LOC_PARAM);
Array reduce_prod(const Array& x, const Axes& axes, WEFT_LOC_PARAM);
Array reduce_max(const Array& x, const Axes& axes, WEFT_LOC_PARAM);
Array reduce_min(const Array& x, const Axes& axes, WEFT_LOC_PARAM);
Array argmax(const Array& x, const Axes& axes, DType index_dtype = DType::I32, WEFT_LOC_PARAM);
Array argmin(const Array& x, const Axes& axes, DType index_dtype = DType::I32, WEFT_LOC_PARAM);

struct DotDims {
  Axes lhs_contracting, rhs_contracting, lhs_batch, rhs_batch;
};
Array dot_general(const Array& lhs, const Array& rhs, const DotDims& dims, WEFT_LOC_PARAM);

// Bit operations and the remaining elementwise ops (ops_elementwise_bits.cpp).
// Shifts of integers of one dtype and shape, as XLA: an amount outside [0, bit width) (read as
// unsigned) shifts every bit out: 0, or the sign fill for the arithmetic shift.
Array shift_left(const Array& x, const Array& amount, WEFT_LOC_PARAM);
Array shift_right_logical(const Array& x, const Array& amount, WEFT_LOC_PARAM);
Array shift_right_arithmetic(const Array& x, const Array& amount, WEFT_LOC_PARAM);
// x's bits read as `dtype`: a wider x gains a trailing axis of the width ratio (low part first),
// a narrower x loses its trailing axis, which must have that size. Not for bool.
Array bitcast_convert_type(const Array& x, DType dtype, WEFT_LOC_PARAM);
Array population_count(const Array& x, WEFT_LOC_PARAM);  // integers: the bits set
Array clz(const Array& x, WEFT_LOC_PARAM);               // integers: leading zero bits
// min(max(x, lo), hi); lo and hi have x's dtype and its shape or are scalars.
Array clamp(const Array& lo, const Array& x, const Array& hi, WEFT_LOC_PARAM);
// x^y by squaring and multiplying, as JAX; negative y for floats only.
Array integer_pow(const Array& x, std::int64_t y, WEFT_LOC_PARAM);
Array is_finite(const Array& x, WEFT_LOC_PARAM);                  // floats -> bool
Array nextafter(const Array& x, const Array& y, WEFT_LOC_PARAM);  // floats
// cases[which] element by element; which is bool (at most two cases) or i32, of the cases'
// shape or a scalar; out of range, the nearest case.
Array select_n(const Array& which, const std::vector<Array>& cases, WEFT_LOC_PARAM);
Array erf_inv(const Array& x, WEFT_LOC_PARAM);  // floats
// Cumulative ops, rev and sorting.
// As jax.lax: element k combines x's elements 0..k along `axis` (k..n-1 when `reverse`).
Array cumsum(const Array& x, std::int64_t axis = 0, bool reverse = false, WEFT_LOC_PARAM);
Array cumprod(const Array& x, std::int64_t axis = 0, bool reverse = false, WEFT_LOC_PARAM);
Array cummax(const Array& x, std::int64_t axis = 0, bool reverse = false, WEFT_LOC_PARAM);
Array cummin(const Array& x, std::int64_t axis = 0, bool reverse = false, WEFT_LOC_PARAM);
// Floats only: log of the cumulative sum of exp(x), without overflow.
Array cumlogsumexp(const Array& x, std::int64_t axis = 0, bool reverse = false, WEFT_LOC_PARAM);
// The elements in reverse order along each of `dimensions`.
Array rev(const Array& x, const Axes& dimensions, WEFT_LOC_PARAM);
// Stable ascending sort along `dimension`, NaN last (lax.sort of one operand).
Array sort(const Array& x, std::int64_t dimension = -1, WEFT_LOC_PARAM);
// The stable sorting permutation (i32) of the keys along `dimension`, lexicographic.
Array argsort(const std::vector<Array>& keys, std::int64_t dimension = -1, WEFT_LOC_PARAM);
// The k largest elements along the last axis, and their positions (i32; ties lower first).
std::pair<Array, Array> top_k(const Array& x, std::int64_t k, WEFT_LOC_PARAM);

// Gather and scatter (as jax.lax.gather and jax.lax.scatter*): the dimension numbers, mode and
// fill value are the attribute structs' (weft/ir/op_attrs.h), whose default mode is JAX's
// (fill). The index vector runs along the indices' last axis.
Array gather(const Array& operand, const Array& indices, const GatherAttrs& dims, WEFT_LOC_PARAM);
Array scatter(const Array& operand, const Array& indices, const Array& updates,
              const ScatterAttrs& dims, WEFT_LOC_PARAM);
Array scatter_add(const Array& operand, const Array& indices, const Array& updates,
                  const ScatterAttrs& dims, WEFT_LOC_PARAM);
Array scatter_mul(const Array& operand, const Array& indices, const Array& updates,
                  const ScatterAttrs& dims, WEFT_LOC_PARAM);
Array scatter_min(const Array& operand, const Array& indices, const Array& updates,
                  const ScatterAttrs& dims, WEFT_LOC_PARAM);
Array scatter_max(const Array& operand, const Array& indices, const Array& updates,
                  const ScatterAttrs& dims, WEFT_LOC_PARAM);

// Convolution (conv_ops.cpp), as jax.lax.conv_general_dilated. The attributes are ConvAttrs'
// (weft/ir/op_attrs.h); the overload below takes them as jax.lax does.
Array conv_general_dilated(const Array& lhs, const Array& rhs, const ConvAttrs& attrs,
                           WEFT_LOC_PARAM);
// jax.lax.ConvDimensionNumbers: the axes of lhs (batch, feature, spatial...), rhs (output
// feature, input feature, spatial...) and the result (batch, feature, spatial...).
struct ConvDimensionNumbers {
  Axes lhs_spec, rhs_spec, out_spec;
};
// As jax.lax.conv_dimension_numbers from layout strings such as ("NHWC", "HWIO", "NHWC"):
// N and C name the batch and feature axes of lhs and out, O and I the rhs's, every other letter
// a spatial axis, ordered as in the rhs string. Throws ShapeError naming a bad string.
ConvDimensionNumbers conv_dimension_numbers(std::string_view lhs, std::string_view rhs,
                                            std::string_view out, WEFT_LOC_PARAM);
// Padding of each spatial axis: explicit (low, high) pairs (negative crops), or "SAME" (output
// size ceil(input / stride), the odd element of padding at the end), "SAME_LOWER" (at the
// start) or "VALID" (none), as jax.lax.padtype_to_pads resolves them.
struct ConvPadding {
  ConvPadding(const char* mode) : mode(mode) {}             // NOLINT: "SAME" reads as a padding
  ConvPadding(std::string mode) : mode(std::move(mode)) {}  // NOLINT
  ConvPadding(std::vector<std::pair<std::int64_t, std::int64_t>> pairs)  // NOLINT
      : pairs(std::move(pairs)) {}
  std::string mode;
  std::vector<std::pair<std::int64_t, std::int64_t>> pairs;
};
// Empty dilations mean 1 on every spatial axis; no dimension numbers mean lhs and out NCHW...,
// rhs OIHW... (jax.lax's default).
Array conv_general_dilated(const Array& lhs, const Array& rhs, const Axes& window_strides,
                           const ConvPadding& padding, const Axes& lhs_dilation = {},
                           const Axes& rhs_dilation = {},
                           const std::optional<ConvDimensionNumbers>& dimension_numbers = {},
                           std::int64_t feature_group_count = 1, std::int64_t batch_group_count = 1,
                           WEFT_LOC_PARAM);
// jax.lax.conv: NCHW... lhs, OIHW... rhs, no dilation.
Array conv(const Array& lhs, const Array& rhs, const Axes& window_strides,
           const ConvPadding& padding, WEFT_LOC_PARAM);
// Windowed reductions (window_ops.cpp), as jax.lax.reduce_window with +, max or min: each output
// element reduces one window of x; padding and base-dilation holes hold the reduction's
// identity. In `window`, an empty window_strides, padding or dilation means the default (strides
// and dilations 1, no padding).
Array reduce_window_sum(const Array& x, const WindowAttrs& window, WEFT_LOC_PARAM);
Array reduce_window_max(const Array& x, const WindowAttrs& window, WEFT_LOC_PARAM);
Array reduce_window_min(const Array& x, const WindowAttrs& window, WEFT_LOC_PARAM);
// reduce_window_max's (chooses_max) or reduce_window_min's derivatives, as JAX's private
// _select_and_gather_add and _select_and_scatter_add: per window, the tangent at the position
// the operand's fold chooses (ties: the first); and each source element added at the position
// its window chooses (no dilation).
Array select_and_gather_add(const Array& tangents, const Array& operand, bool chooses_max,
                            const WindowAttrs& window, WEFT_LOC_PARAM);
Array select_and_scatter_add(const Array& source, const Array& operand, bool chooses_max,
                             const WindowAttrs& window, WEFT_LOC_PARAM);

// Sort family (sort_family_ops.cpp). jax.lax.sort of several operands of one shape: stable
// along `dimension`, ordered lexicographically by the first num_keys operands (NaN last,
// -0.0 equal to 0.0), every operand permuted alike. sort_key_val: keys sorted, values alike.
std::vector<Array> sort(const std::vector<Array>& operands, std::int64_t dimension,
                        std::int64_t num_keys = 1, WEFT_LOC_PARAM);
std::pair<Array, Array> sort_key_val(const Array& keys, const Array& values,
                                     std::int64_t dimension = -1, WEFT_LOC_PARAM);

// Linear algebra (linalg_ops.cpp), as jax.lax.linalg over the last two axes, the leading ones a
// batch; f32 and f64.
// The lower-triangular L with L L^T = x, reading x's lower triangle only (lax.linalg.cholesky
// with symmetrize_input=False); zeros above the diagonal; NaN in the lower triangle of a matrix
// that is not positive definite.
Array cholesky(const Array& x, WEFT_LOC_PARAM);
// x solving op(a) x = b (attrs.left_side) or x op(a) = b, a triangular (lax.linalg.
// triangular_solve; its keyword arguments are the attrs' fields, defaults alike). b has a's rank,
// or one less: a vector, as JAX's wrapper takes it.
Array triangular_solve(const Array& a, const Array& b, const TriangularSolveAttrs& attrs = {},
                       WEFT_LOC_PARAM);
// LU with partial pivoting of a [..., m, n] (lax.linalg.lu): the packed factors (L below the
// diagonal with a unit diagonal implied, U on and above), the pivots (i32 [..., min(m, n)]: row i
// was swapped with row pivots[i]) and the permutation (i32 [..., m]: a[permutation] = L U).
std::tuple<Array, Array, Array> lu(const Array& a, WEFT_LOC_PARAM);
// The eigendecomposition of symmetric x [..., n, n] (lax.linalg.eigh, eigh_ops.cpp): the
// eigenvectors v in columns [..., n, n] and the eigenvalues w [..., n], x v = v diag(w); w
// ascending with `sort_eigenvalues`. With `symmetrize_input` x becomes (x + x^T) / 2 first;
// without it only x's lower (`lower`) or upper triangle is read.
std::pair<Array, Array> eigh(const Array& x, bool lower = true, bool symmetrize_input = true,
                             bool sort_eigenvalues = true, WEFT_LOC_PARAM);

}  // namespace weft::lax
