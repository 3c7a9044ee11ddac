// Elementwise numpy functions and the operators. Where jax.numpy's semantics differ from the
// primitives' (floor division, Python's remainder, round half to even, bool arithmetic), the
// function composes existing primitives exactly as jax.numpy does, so no new IR is needed.
#include <limits>

#include "np_internal.h"

namespace weft {
namespace np {

using internal::align;
using internal::binary;
using internal::cast;
using internal::full_of;
using internal::fused;
using internal::inexact_type;

namespace {

// Like align, then computes bool operands as i32 (jax.numpy's promote_args_numeric).
std::pair<Array, Array> align_numeric(const Array& x, const Array& y, const char* op,
                                      const std::source_location& loc) {
  auto [a, b] = align(x, y, op, loc);
  if (a.dtype() == DType::Bool) return {cast(a, DType::I32, loc), cast(b, DType::I32, loc)};
  return {a, b};
}

// Like align, then computes integer and bool operands as f32 (promote_args_inexact).
std::pair<Array, Array> align_inexact(const Array& x, const Array& y, const char* op,
                                      const std::source_location& loc) {
  auto [a, b] = align(x, y, op, loc);
  const DType t = inexact_type(a.dtype());
  return {cast(a, t, loc), cast(b, t, loc)};
}

Array as_bool(const Array& x, const std::source_location& loc) {
  if (x.dtype() == DType::Bool) return x;
  return lax::ne(x, full_of(0, x, loc), loc);  // NaN is true, as in numpy
}

Array constant_bool(bool value, const Array& like, const std::source_location& loc) {
  return internal::bcast(Array::scalar_int(value ? 1 : 0, DType::Bool), like.shape(), loc);
}

// A unary function that jax.numpy computes in floating point: ints and bools become f32.
using LaxUnary = Array (*)(const Array&, std::source_location);
Array inexact_unary(LaxUnary fn, const Array& x, const char* op, const std::source_location& loc) {
  if (is_float(x.dtype())) return fn(x, loc);
  return fused(op, loc, [&] { return fn(cast(x, DType::F32, loc), loc); });
}

// Ordering comparisons of bools compare them as 0 and 1.
using LaxBinary = Array (*)(const Array&, const Array&, std::source_location);
Array compare(LaxBinary fn, bool ordering, const Array& x, const Array& y, const char* op,
              const std::source_location& loc) {
  return fused(op, loc, [&] {
    auto [a, b] = align(x, y, op, loc);
    if (a.dtype() == DType::Bool && ordering) {
      a = cast(a, DType::I32, loc);
      b = cast(b, DType::I32, loc);
    }
    return fn(a, b, loc);
  });
}

}  // namespace

Array add(const Array& x, const Array& y, std::source_location loc) {
  return fused("add", loc, [&] {
    auto [a, b] = align(x, y, "add", loc);
    return a.dtype() == DType::Bool ? lax::logical_or(a, b, loc) : lax::add(a, b, loc);
  });
}
Array subtract(const Array& x, const Array& y, std::source_location loc) {
  return binary(lax::sub, x, y, "subtract", loc);
}
Array multiply(const Array& x, const Array& y, std::source_location loc) {
  return fused("multiply", loc, [&] {
    auto [a, b] = align(x, y, "multiply", loc);
    return a.dtype() == DType::Bool ? lax::logical_and(a, b, loc) : lax::mul(a, b, loc);
  });
}
Array maximum(const Array& x, const Array& y, std::source_location loc) {
  return fused("maximum", loc, [&] {
    auto [a, b] = align(x, y, "maximum", loc);
    return a.dtype() == DType::Bool ? lax::logical_or(a, b, loc) : lax::max(a, b, loc);
  });
}
Array minimum(const Array& x, const Array& y, std::source_location loc) {
  return fused("minimum", loc, [&] {
    auto [a, b] = align(x, y, "minimum", loc);
    return a.dtype() == DType::Bool ? lax::logical_and(a, b, loc) : lax::min(a, b, loc);
  });
}

Array divide(const Array& x, const Array& y, std::source_location loc) {
  return fused("divide", loc, [&] {
    auto [a, b] = align_inexact(x, y, "divide", loc);
    return lax::div(a, b, loc);
  });
}

Array floor_divide(const Array& x, const Array& y, std::source_location loc) {
  return fused("floor_divide", loc, [&] {
    auto [a, b] = align_numeric(x, y, "floor_divide", loc);
    const DType t = a.dtype();
    if (is_unsigned_integer(t)) return lax::div(a, b, loc);
    if (is_signed_integer(t)) {
      // Truncated quotient, one less where the signs differ and the division is inexact.
      // lax::div's x / 0 == -1 makes x // 0 == -2 for x != 0, as in JAX.
      Array quotient = lax::div(a, b, loc);
      Array inexact = lax::ne(lax::rem(a, b, loc), full_of(0, a, loc), loc);
      Array signs_differ = lax::ne(lax::sign(a, loc), lax::sign(b, loc), loc);
      return lax::select(lax::logical_and(signs_differ, inexact, loc),
                         lax::sub(quotient, full_of(1, quotient, loc), loc), quotient, loc);
    }
    // Floats: CPython's float_divmod, as jax.numpy computes it.
    Array zero = full_of(0, a, loc);
    Array mod = lax::rem(a, b, loc);
    Array dividend = lax::select(lax::eq(b, zero, loc), a, lax::sub(a, mod, loc), loc);
    Array quotient = lax::div(dividend, b, loc);
    Array adjust = lax::logical_and(lax::ne(mod, zero, loc),
                                    lax::ne(lax::sign(b, loc), lax::sign(mod, loc), loc), loc);
    quotient =
        lax::select(adjust, lax::sub(quotient, full_of(1, quotient, loc), loc), quotient, loc);
    return lax::round(quotient, loc);
  });
}

Array remainder(const Array& x, const Array& y, std::source_location loc) {
  return fused("remainder", loc, [&] {
    auto [a, b] = align_numeric(x, y, "remainder", loc);
    const DType t = a.dtype();
    // Integer x % 0 is 0: divide by 1 instead.
    if (is_integer(t))
      b = lax::select(lax::eq(b, full_of(0, b, loc), loc), full_of(1, b, loc), b, loc);
    Array truncated = lax::rem(a, b, loc);
    if (is_unsigned_integer(t)) return truncated;
    // Move a nonzero truncated remainder whose sign differs from the divisor's by one divisor.
    Array zero = full_of(0, a, loc);
    Array signs_differ = lax::ne(lax::lt(truncated, zero, loc), lax::lt(b, zero, loc), loc);
    Array move = lax::logical_and(signs_differ, lax::ne(truncated, zero, loc), loc);
    return lax::select(move, lax::add(truncated, b, loc), truncated, loc);
  });
}

Array mod(const Array& x, const Array& y, std::source_location loc) {
  return remainder(x, y, loc);
}

Array fmod(const Array& x, const Array& y, std::source_location loc) {
  return fused("fmod", loc, [&] {
    auto [a, b] = align_numeric(x, y, "fmod", loc);
    if (is_integer(a.dtype()))
      b = lax::select(lax::eq(b, full_of(0, b, loc), loc), full_of(1, b, loc), b, loc);
    return lax::rem(a, b, loc);
  });
}

Array power(const Array& x, const Array& y, std::source_location loc) {
  return fused("power", loc, [&] {
    auto [a, b] = align_numeric(x, y, "power", loc);
    return lax::pow(a, b, loc);
  });
}

Array arctan2(const Array& y, const Array& x, std::source_location loc) {
  return fused("arctan2", loc, [&] {
    auto [a, b] = align_inexact(y, x, "arctan2", loc);
    return lax::atan2(a, b, loc);
  });
}

Array bitwise_and(const Array& x, const Array& y, std::source_location loc) {
  return binary(lax::logical_and, x, y, "bitwise_and", loc);
}
Array bitwise_or(const Array& x, const Array& y, std::source_location loc) {
  return binary(lax::logical_or, x, y, "bitwise_or", loc);
}
Array bitwise_xor(const Array& x, const Array& y, std::source_location loc) {
  return binary(lax::logical_xor, x, y, "bitwise_xor", loc);
}
Array invert(const Array& x, std::source_location loc) {
  return lax::logical_not(x, loc);
}

Array logical_and(const Array& x, const Array& y, std::source_location loc) {
  return fused("logical_and", loc, [&] {
    auto [a, b] = align(as_bool(x, loc), as_bool(y, loc), "logical_and", loc);
    return lax::logical_and(a, b, loc);
  });
}
Array logical_or(const Array& x, const Array& y, std::source_location loc) {
  return fused("logical_or", loc, [&] {
    auto [a, b] = align(as_bool(x, loc), as_bool(y, loc), "logical_or", loc);
    return lax::logical_or(a, b, loc);
  });
}
Array logical_xor(const Array& x, const Array& y, std::source_location loc) {
  return fused("logical_xor", loc, [&] {
    auto [a, b] = align(as_bool(x, loc), as_bool(y, loc), "logical_xor", loc);
    return lax::logical_xor(a, b, loc);
  });
}
Array logical_not(const Array& x, std::source_location loc) {
  if (x.dtype() == DType::Bool) return lax::logical_not(x, loc);
  return fused("logical_not", loc, [&] { return lax::eq(x, full_of(0, x, loc), loc); });
}

Array equal(const Array& x, const Array& y, std::source_location loc) {
  return compare(lax::eq, false, x, y, "equal", loc);
}
Array not_equal(const Array& x, const Array& y, std::source_location loc) {
  return compare(lax::ne, false, x, y, "not_equal", loc);
}
Array less(const Array& x, const Array& y, std::source_location loc) {
  return compare(lax::lt, true, x, y, "less", loc);
}
Array less_equal(const Array& x, const Array& y, std::source_location loc) {
  return compare(lax::le, true, x, y, "less_equal", loc);
}
Array greater(const Array& x, const Array& y, std::source_location loc) {
  return compare(lax::gt, true, x, y, "greater", loc);
}
Array greater_equal(const Array& x, const Array& y, std::source_location loc) {
  return compare(lax::ge, true, x, y, "greater_equal", loc);
}

Array where(const Array& cond, const Array& x, const Array& y, std::source_location loc) {
  return fused("where", loc, [&] {
    Array c = as_bool(cond, loc);
    DType t = promote_types(x.dtype(), y.dtype());
    Shape s = broadcast_shapes(broadcast_shapes(c.shape(), x.shape(), "where"), y.shape(), "where");
    return lax::select(internal::bcast(c, s, loc), internal::bcast(cast(x, t, loc), s, loc),
                       internal::bcast(cast(y, t, loc), s, loc), loc);
  });
}
Array where(const Array& cond, const Array& x, WeakScalar y, std::source_location loc) {
  return where(cond, x, scalar_like(y, x, loc), loc);
}
Array where(const Array& cond, WeakScalar x, const Array& y, std::source_location loc) {
  return where(cond, scalar_like(x, y, loc), y, loc);
}

Array clip(const Array& x, WeakScalar lo, WeakScalar hi, std::source_location loc) {
  // jax.numpy.clip: maximum(lo, x), then minimum(hi, ...); each bound is weakly typed.
  return fused("clip", loc, [&] {
    Array low = maximum(scalar_like(lo, x, loc), x, loc);
    return minimum(scalar_like(hi, low, loc), low, loc);
  });
}

Array exp(const Array& x, std::source_location loc) {
  return inexact_unary(lax::exp, x, "exp", loc);
}
Array log(const Array& x, std::source_location loc) {
  return inexact_unary(lax::log, x, "log", loc);
}
Array sqrt(const Array& x, std::source_location loc) {
  return inexact_unary(lax::sqrt, x, "sqrt", loc);
}
Array tanh(const Array& x, std::source_location loc) {
  return inexact_unary(lax::tanh, x, "tanh", loc);
}
Array sin(const Array& x, std::source_location loc) {
  return inexact_unary(lax::sin, x, "sin", loc);
}
Array cos(const Array& x, std::source_location loc) {
  return inexact_unary(lax::cos, x, "cos", loc);
}
Array tan(const Array& x, std::source_location loc) {
  return inexact_unary(lax::tan, x, "tan", loc);
}
Array exp2(const Array& x, std::source_location loc) {
  return inexact_unary(lax::exp2, x, "exp2", loc);
}
Array log1p(const Array& x, std::source_location loc) {
  return inexact_unary(lax::log1p, x, "log1p", loc);
}
Array expm1(const Array& x, std::source_location loc) {
  return inexact_unary(lax::expm1, x, "expm1", loc);
}
Array rsqrt(const Array& x, std::source_location loc) {
  return inexact_unary(lax::rsqrt, x, "rsqrt", loc);
}
Array erf(const Array& x, std::source_location loc) {
  return inexact_unary(lax::erf, x, "erf", loc);
}
Array sigmoid(const Array& x, std::source_location loc) {
  return lax::logistic(x, loc);  // jax.nn.sigmoid rejects integers too
}

Array abs(const Array& x, std::source_location loc) {
  return x.dtype() == DType::Bool ? x : lax::abs(x, loc);
}
Array sign(const Array& x, std::source_location loc) {
  return lax::sign(x, loc);
}
Array negative(const Array& x, std::source_location loc) {
  return lax::neg(x, loc);
}
Array floor(const Array& x, std::source_location loc) {
  return is_float(x.dtype()) ? lax::floor(x, loc) : x;
}
Array ceil(const Array& x, std::source_location loc) {
  return is_float(x.dtype()) ? lax::ceil(x, loc) : x;
}

Array round(const Array& x, std::source_location loc) {
  if (is_integer(x.dtype())) return x;
  return lax::round(x, lax::RoundingMethod::ToNearestEven, loc);  // bool: the primitive's error
}

Array isnan(const Array& x, std::source_location loc) {
  if (!is_float(x.dtype())) return constant_bool(false, x, loc);
  return lax::ne(x, x, loc);
}
Array isinf(const Array& x, std::source_location loc) {
  if (!is_float(x.dtype())) return constant_bool(false, x, loc);
  return fused("isinf", loc, [&] {
    return lax::eq(lax::abs(x, loc), full_of(std::numeric_limits<double>::infinity(), x, loc), loc);
  });
}
Array isfinite(const Array& x, std::source_location loc) {
  if (!is_float(x.dtype())) return constant_bool(true, x, loc);
  return fused("isfinite", loc, [&] {
    return lax::lt(lax::abs(x, loc), full_of(std::numeric_limits<double>::infinity(), x, loc), loc);
  });
}

Array relu(const Array& x, std::source_location loc) {
  return maximum(x, scalar_like(0, x, loc), loc);
}
Array astype(const Array& x, DType dtype, std::source_location loc) {
  return cast(x, dtype, loc);
}

}  // namespace np

Array operator+(Located x, const Array& y) {
  return np::add(x.array, y, x.loc);
}
Array operator-(Located x, const Array& y) {
  return np::subtract(x.array, y, x.loc);
}
Array operator*(Located x, const Array& y) {
  return np::multiply(x.array, y, x.loc);
}
Array operator/(Located x, const Array& y) {
  return np::divide(x.array, y, x.loc);
}
Array operator%(Located x, const Array& y) {
  return np::remainder(x.array, y, x.loc);
}
Array operator==(Located x, Located y) {
  return np::equal(x.array, y.array, x.loc);
}
Array operator!=(Located x, const Array& y) {
  return np::not_equal(x.array, y, x.loc);
}
Array operator<(Located x, const Array& y) {
  return np::less(x.array, y, x.loc);
}
Array operator<=(Located x, const Array& y) {
  return np::less_equal(x.array, y, x.loc);
}
Array operator>(Located x, const Array& y) {
  return np::greater(x.array, y, x.loc);
}
Array operator>=(Located x, const Array& y) {
  return np::greater_equal(x.array, y, x.loc);
}
Array operator&(Located x, const Array& y) {
  return np::bitwise_and(x.array, y, x.loc);
}
Array operator|(Located x, const Array& y) {
  return np::bitwise_or(x.array, y, x.loc);
}
Array operator^(Located x, const Array& y) {
  return np::bitwise_xor(x.array, y, x.loc);
}
Array operator-(Located x) {
  return np::negative(x.array, x.loc);
}
Array operator!(const Array& x) {
  return np::logical_not(x, std::source_location{});
}
Array operator~(Located x) {
  return np::invert(x.array, x.loc);
}

}  // namespace weft
