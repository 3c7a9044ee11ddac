// Helpers shared by the numpy layer's source files (private to core).
#pragma once

#include <cstdint>
#include <source_location>
#include <string>
#include <utility>

#include "weft/error.h"
#include "weft/np.h"
#include "weft/trace/trace.h"

namespace weft::np::internal {

std::string loc_str(const std::source_location& loc);

// A literal of dtype t holding `value` (floats convert as convert does; an integer must fit t).
Array scalar_of(WeakScalar value, DType t, const std::source_location& loc);
// Converts x to dtype t; literals convert on the host (with convert's rules: truncation,
// saturation, NaN to 0) so scalars stay constants rather than convert ops.
Array cast(const Array& x, DType t, const std::source_location& loc);
// Broadcasts x to `shape` numpy-style (trailing axes aligned).
Array bcast(const Array& x, const Shape& shape, const std::source_location& loc);
// A constant of x's dtype and shape.
Array full_of(double value, const Array& like, const std::source_location& loc);
// Promotes and broadcasts two operands of a binary function.
std::pair<Array, Array> align(const Array& x, const Array& y, const char* op,
                              const std::source_location& loc);
// The dtype that transcendental functions compute in: x's if floating, else f32.
DType inexact_type(DType t);

std::int64_t normalize_axis(std::int64_t axis, std::size_t rank, const char* op,
                            const std::source_location& loc);
Axes normalize_axes(Axes axes, std::size_t rank, const char* op, const std::source_location& loc);

// Runs `body` as one fused program when eager, and names the user's line in shape errors.
template <typename Body>
Array fused(const char* op, const std::source_location& loc, Body&& body) {
  try {
    return weft::detail::run_fused_eagerly(body, op, loc);
  } catch (const ShapeError& e) {
    std::string msg = e.what();
    if (msg.find(" at ") == std::string::npos) msg += " at " + loc_str(loc);
    throw ShapeError(msg);
  }
}

// Applies a same-dtype lax function to two aligned operands.
template <typename Fn>
Array binary(Fn fn, const Array& x, const Array& y, const char* op,
             const std::source_location& loc) {
  return fused(op, loc, [&] {
    auto [a, b] = align(x, y, op, loc);
    return fn(a, b, loc);
  });
}

}  // namespace weft::np::internal
