// The samplers built on random bits, each as jax.random's default path for 32-bit dtypes.
#include <cmath>
#include <limits>
#include <string>

#include "random_internal.h"
#include "weft/error.h"
#include "weft/np.h"

namespace weft::random {

namespace {

using detail::full;

std::string where(const char* api, std::source_location loc) {
  return std::string("random::") + api + " at " + loc.file_name() + ":" +
         std::to_string(loc.line()) + ": ";
}

Array f32_scalar(double value, std::source_location loc) {
  return lax::constant(value, DType::F32, loc);
}

// The f32 sqrt(2) JAX multiplies erf_inv by.
constexpr double kSqrt2F32 = static_cast<double>(static_cast<float>(1.4142135623730951));

}  // namespace

Array detail::uniform_between(const Array& key, const Shape& shape, const Array& minval,
                              const Array& maxval, std::source_location loc) {
  // 23 random mantissa bits under the exponent of 1.0 give a float in [1, 2); minus 1, [0, 1).
  const Array mantissa =
      lax::shift_right_logical(bits(key, shape, loc), full(32 - 23, DType::U32, shape, loc), loc);
  const Array one_to_two = lax::bitcast_convert_type(
      lax::logical_or(mantissa, full(0x3f800000, DType::U32, shape, loc), loc), DType::F32, loc);
  const Array floats = lax::sub(one_to_two, full(1.0, DType::F32, shape, loc), loc);
  const Array low = lax::broadcast_in_dim(minval, shape, {}, loc);
  const Array span = lax::broadcast_in_dim(lax::sub(maxval, minval, loc), shape, {}, loc);
  return lax::max(low, detail::fused_multiply_add(floats, span, low, loc), loc);
}

namespace {

// JAX's uniform for f64 (x64 on): 52 random mantissa bits under 1.0's exponent, minus 1, then
// scaled between f64 bounds by one multiply-add, which XLA fuses into an FMA (emulated here:
// see fused_multiply_add).
Array uniform_f64_between(const Array& key, const Shape& shape, const Array& minval,
                          const Array& maxval, std::source_location loc) {
  const Array mantissa = lax::shift_right_logical(bits(key, shape, DType::U64, loc),
                                                  full(64 - 52, DType::U64, shape, loc), loc);
  const Array one_bits =
      full(static_cast<double>(std::uint64_t{0x3ff0000000000000}), DType::U64, shape, loc);
  const Array one_to_two =
      lax::bitcast_convert_type(lax::logical_or(mantissa, one_bits, loc), DType::F64, loc);
  const Array floats = lax::sub(one_to_two, full(1.0, DType::F64, shape, loc), loc);
  const Array low = lax::broadcast_in_dim(minval, shape, {}, loc);
  const Array span = lax::broadcast_in_dim(lax::sub(maxval, minval, loc), shape, {}, loc);
  return lax::max(low, detail::fused_multiply_add(floats, span, low, loc), loc);
}

Array uniform_f64(const Array& key, const Shape& shape, double minval, double maxval,
                  std::source_location loc) {
  return uniform_f64_between(key, shape, lax::constant(minval, DType::F64, loc),
                             lax::constant(maxval, DType::F64, loc), loc);
}

// JAX's truncated_normal with x64 on: the bounds' erf (JAX 0.10's CPU f64 erf gives glibc's
// erf bit for bit, which the interpreter's erf primitive calls; the device uses its OpenCL erf),
// a uniform between them, sqrt(2) * erf_inv, clamped inside (lower, upper).
Array truncated_normal_f64(const Array& key, double lower, double upper, const Shape& shape,
                           std::source_location loc) {
  const Array sqrt2 = lax::constant(std::sqrt(2.0), DType::F64, loc);
  const Array a = lax::erf(lax::div(lax::constant(lower, DType::F64, loc), sqrt2, loc), loc);
  const Array b = lax::erf(lax::div(lax::constant(upper, DType::F64, loc), sqrt2, loc), loc);
  const Array u = uniform_f64_between(key, shape, a, b, loc);
  const Array out =
      lax::mul(full(std::sqrt(2.0), DType::F64, shape, loc), detail::erf_inv_f64(u, loc), loc);
  return lax::min(lax::max(out, full(std::nextafter(lower, INFINITY), DType::F64, shape, loc), loc),
                  full(std::nextafter(upper, -INFINITY), DType::F64, shape, loc), loc);
}

}  // namespace

Array uniform(const Array& key, const Shape& shape, DType dtype, double minval, double maxval,
              std::source_location loc) {
  if (dtype == DType::F64)
    return detail::map_keys(
        key, {},
        [&](const Array& k, const std::vector<Array>&) {
          return uniform_f64(k, shape, minval, maxval, loc);
        },
        "uniform", loc);
  detail::require_f32(dtype, "uniform", loc);
  return detail::map_keys(
      key, {},
      [&](const Array& k, const std::vector<Array>&) {
        return detail::uniform_between(k, shape, f32_scalar(minval, loc), f32_scalar(maxval, loc),
                                       loc);
      },
      "uniform", loc);
}

Array normal(const Array& key, const Shape& shape, DType dtype, std::source_location loc) {
  if (dtype == DType::F64)
    return detail::map_keys(
        key, {},
        [&](const Array& k, const std::vector<Array>&) {
          // The span 1 - nextafter(-1, 0) rounds to 2, so the uniform's scaling is exact.
          const Array u = uniform_f64(k, shape, std::nextafter(-1.0, 0.0), 1.0, loc);
          return lax::mul(full(std::sqrt(2.0), DType::F64, shape, loc), detail::erf_inv_f64(u, loc),
                          loc);
        },
        "normal", loc);
  detail::require_f32(dtype, "normal", loc);
  // The open interval (-1, 1): erf_inv(-1) would be -inf.
  const double above_minus_one = std::nextafter(-1.0f, 0.0f);
  return detail::map_keys(
      key, {},
      [&](const Array& k, const std::vector<Array>&) {
        const Array u = detail::uniform_between(k, shape, f32_scalar(above_minus_one, loc),
                                                f32_scalar(1.0, loc), loc);
        return lax::mul(full(kSqrt2F32, DType::F32, shape, loc), detail::erf_inv_f32(u, loc), loc);
      },
      "normal", loc);
}

Array truncated_normal(const Array& key, double lower, double upper, const Shape& shape,
                       DType dtype, std::source_location loc) {
  if (dtype == DType::F64)
    return detail::map_keys(
        key, {},
        [&](const Array& k, const std::vector<Array>&) {
          return truncated_normal_f64(k, lower, upper, shape, loc);
        },
        "truncated_normal", loc);
  detail::require_f32(dtype, "truncated_normal", loc);
  const auto lower_f32 = static_cast<float>(lower);
  const auto upper_f32 = static_cast<float>(upper);
  return detail::map_keys(
      key, {},
      [&](const Array& k, const std::vector<Array>&) {
        const Array sqrt2 = f32_scalar(kSqrt2F32, loc);
        const Array a = lax::erf(lax::div(f32_scalar(lower_f32, loc), sqrt2, loc), loc);
        const Array b = lax::erf(lax::div(f32_scalar(upper_f32, loc), sqrt2, loc), loc);
        const Array u = detail::uniform_between(k, shape, a, b, loc);
        const Array out =
            lax::mul(full(kSqrt2F32, DType::F32, shape, loc), detail::erf_inv_f32(u, loc), loc);
        // Rounding (or u == a) must not leave the open interval (lower, upper).
        const double inside_lower = std::nextafter(lower_f32, INFINITY);
        const double inside_upper = std::nextafter(upper_f32, -INFINITY);
        return lax::min(lax::max(out, full(inside_lower, DType::F32, shape, loc), loc),
                        full(inside_upper, DType::F32, shape, loc), loc);
      },
      "truncated_normal", loc);
}

Array bernoulli(const Array& key, double p, const Shape& shape, std::source_location loc) {
  return detail::map_keys(
      key, {},
      [&](const Array& k, const std::vector<Array>&) {
        const Array u =
            detail::uniform_between(k, shape, f32_scalar(0.0, loc), f32_scalar(1.0, loc), loc);
        return lax::lt(u, full(static_cast<float>(p), DType::F32, shape, loc), loc);
      },
      "bernoulli", loc);
}

Array randint(const Array& key, const Shape& shape, std::int64_t minval, std::int64_t maxval,
              DType dtype, std::source_location loc) {
  if (dtype != DType::I32 && dtype != DType::U32)
    throw DTypeError(where("randint", loc) + "samples i32 or u32, got " +
                     std::string(dtype_name(dtype)));
  const std::int64_t lowest = dtype == DType::I32 ? std::numeric_limits<std::int32_t>::min() : 0;
  const std::int64_t highest = dtype == DType::I32 ? std::numeric_limits<std::int32_t>::max()
                                                   : std::numeric_limits<std::uint32_t>::max();
  if (minval < lowest || minval > highest || maxval < lowest || maxval > highest)
    throw InvalidArgumentError(where("randint", loc) + "bounds [" + std::to_string(minval) + ", " +
                               std::to_string(maxval) + ") must lie within " +
                               std::string(dtype_name(dtype)) + "'s range");
  // The span and 2^32 mod span are constants; JAX computes them the same way in u32.
  const std::uint32_t span =
      maxval <= minval ? 1u
                       : static_cast<std::uint32_t>(static_cast<std::uint64_t>(maxval - minval));
  std::uint32_t multiplier = 65536u % span;
  multiplier = static_cast<std::uint32_t>(multiplier * multiplier) % span;
  return detail::map_keys(
      key, {},
      [&](const Array& k, const std::vector<Array>&) {
        const auto [k1, k2] = split2(k, loc);
        const Array span_u32 = full(span, DType::U32, shape, loc);
        const Array higher = lax::rem(bits(k1, shape, loc), span_u32, loc);
        const Array lower = lax::rem(bits(k2, shape, loc), span_u32, loc);
        const Array offset = lax::rem(
            lax::add(lax::mul(higher, full(multiplier, DType::U32, shape, loc), loc), lower, loc),
            span_u32, loc);
        const Array as_dtype =
            dtype == DType::U32 ? offset : lax::convert_element_type(offset, dtype, loc);
        return lax::add(full(static_cast<double>(minval), dtype, shape, loc), as_dtype, loc);
      },
      "randint", loc);
}

Array gumbel(const Array& key, const Shape& shape, DType dtype, std::source_location loc) {
  if (dtype == DType::F64)
    return detail::map_keys(
        key, {},
        [&](const Array& k, const std::vector<Array>&) {
          // JAX's "low" mode in f64: the span 1 - tiny rounds to 1, so the uniform's scaling
          // is exact and only the logs can differ from XLA's.
          const Array u = uniform_f64(k, shape, std::numeric_limits<double>::min(), 1.0, loc);
          return lax::neg(lax::log(lax::neg(lax::log(u, loc), loc), loc), loc);
        },
        "gumbel", loc);
  detail::require_f32(dtype, "gumbel", loc);
  return detail::map_keys(
      key, {},
      [&](const Array& k, const std::vector<Array>&) {
        const Array u =
            detail::uniform_between(k, shape, f32_scalar(std::numeric_limits<float>::min(), loc),
                                    f32_scalar(1.0, loc), loc);
        return lax::neg(lax::log(lax::neg(lax::log(u, loc), loc), loc), loc);
      },
      "gumbel", loc);
}

Array categorical(const Array& key, const Array& logits, std::int64_t axis,
                  std::optional<Shape> shape, std::source_location loc) {
  // f64 logits draw f64 gumbel noise, as JAX with x64 on.
  if (logits.dtype() != DType::F64) detail::require_f32(logits.dtype(), "categorical", loc);
  const std::int64_t rank = logits.ndim();
  if (rank == 0 || axis < -rank || axis >= rank)
    throw ShapeError(where("categorical", loc) + "axis " + std::to_string(axis) +
                     " is out of range for logits " + std::string(dtype_name(logits.dtype())) +
                     shape_to_string(logits.shape()));
  const std::int64_t from_end = axis >= 0 ? axis - rank : axis;
  const std::size_t axis_index = static_cast<std::size_t>(from_end + rank);
  Shape batch_shape = logits.shape();
  batch_shape.erase(batch_shape.begin() + static_cast<std::ptrdiff_t>(axis_index));
  const Shape sample_shape = shape.value_or(batch_shape);
  if (sample_shape.size() < batch_shape.size() ||
      !std::equal(batch_shape.begin(), batch_shape.end(),
                  sample_shape.end() - static_cast<std::ptrdiff_t>(batch_shape.size())))
    throw ShapeError(where("categorical", loc) + "shape " + shape_to_string(sample_shape) +
                     " must end with the logits' batch shape " + shape_to_string(batch_shape));
  Shape noise_shape = sample_shape;
  noise_shape.insert(noise_shape.end() - static_cast<std::ptrdiff_t>(batch_shape.size()) +
                         static_cast<std::ptrdiff_t>(axis_index),
                     logits.shape()[axis_index]);
  return detail::map_keys(
      key, {logits},
      [&, noise_shape](const Array& k, const std::vector<Array>& shared) {
        const Array noisy = np::add(gumbel(k, noise_shape, shared[0].dtype(), loc), shared[0], loc);
        return np::argmax(noisy, from_end, false, loc);
      },
      "categorical", loc);
}

}  // namespace weft::random
