// The numpy layer's bit operations and the functions built on the remaining elementwise
// primitives, as jax.numpy writes them.
#include "np_internal.h"

namespace weft {
namespace np {

using internal::align;
using internal::bcast;
using internal::cast;
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

}  // namespace

Array left_shift(const Array& x, const Array& y, std::source_location loc) {
  return fused("left_shift", loc, [&] {
    auto [a, b] = align_numeric(x, y, "left_shift", loc);
    return lax::shift_left(a, b, loc);
  });
}

// Arithmetic for signed integers, logical for unsigned ones.
Array right_shift(const Array& x, const Array& y, std::source_location loc) {
  return fused("right_shift", loc, [&] {
    auto [a, b] = align_numeric(x, y, "right_shift", loc);
    if (is_integer(a.dtype()) && !is_signed_integer(a.dtype()))
      return lax::shift_right_logical(a, b, loc);
    return lax::shift_right_arithmetic(a, b, loc);
  });
}

Array nextafter(const Array& x, const Array& y, std::source_location loc) {
  return fused("nextafter", loc, [&] {
    auto [a, b] = align(x, y, "nextafter", loc);
    const DType t = inexact_type(a.dtype());
    return lax::nextafter(cast(a, t, loc), cast(b, t, loc), loc);
  });
}

// A concrete integer exponent: integer_pow, as jax.numpy (bool bases compute as i32).
Array power(const Array& x, std::int64_t y, std::source_location loc) {
  return fused("power", loc, [&] {
    const Array base = x.dtype() == DType::Bool ? cast(x, DType::I32, loc) : x;
    return lax::integer_pow(base, y, loc);
  });
}

// The first choice whose condition holds, else the default: select_n on the index of that
// choice, counting the default as 0 (jax.numpy's select).
Array select(const std::vector<Array>& conditions, const std::vector<Array>& choices,
             WeakScalar default_value, std::source_location loc) {
  if (conditions.size() != choices.size())
    throw ShapeError("select: " + std::to_string(conditions.size()) + " conditions but " +
                     std::to_string(choices.size()) + " choices at " + internal::loc_str(loc) +
                     "; give one choice per condition");
  if (choices.empty())
    throw ShapeError("select: no choices at " + internal::loc_str(loc) +
                     "; give at least one condition and choice");
  return fused("select", loc, [&] {
    DType t = choices[0].dtype();
    for (const Array& c : choices) t = promote_types(t, c.dtype());
    t = weak_result_type(default_value, t);
    Shape shape;
    for (const Array& a : conditions) shape = broadcast_shapes(shape, a.shape(), "select");
    for (const Array& a : choices) shape = broadcast_shapes(shape, a.shape(), "select");
    std::vector<Array> cases{bcast(internal::scalar_of(default_value, t, loc), shape, loc)};
    for (const Array& c : choices) cases.push_back(bcast(cast(c, t, loc), shape, loc));
    Array which = bcast(Array::scalar_int(0, DType::I32), shape, loc);
    for (std::size_t i = conditions.size(); i-- > 0;) {
      const Array chosen = bcast(Array::scalar_int(static_cast<std::int64_t>(i) + 1), shape, loc);
      which =
          lax::select(bcast(cast(conditions[i], DType::Bool, loc), shape, loc), chosen, which, loc);
    }
    return lax::select_n(which, cases, loc);
  });
}

}  // namespace np
}  // namespace weft
