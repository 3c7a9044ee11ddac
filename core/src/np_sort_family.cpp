// weft::np's functions built on sorting and masks with static sizes (searchsorted, nonzero,
// unique, compress), each written as jax.numpy writes it so that results agree exactly.
#include <cmath>
#include <numeric>

#include "np_internal.h"
#include "weft/np.h"

namespace weft::np {

using namespace internal;

namespace {

// lax's sort order, as its comparators have it: -0.0 equals 0.0 and NaN is above everything
// (and equal to NaN). x < y in that order:
Array sort_less(const Array& x, const Array& y, const std::source_location& loc) {
  if (!is_float(x.dtype())) return lax::lt(x, y, loc);
  return lax::logical_or(lax::lt(x, y, loc),
                         lax::logical_and(lax::ne(y, y, loc), lax::eq(x, x, loc), loc), loc);
}
// x <= y in that order.
Array sort_less_equal(const Array& x, const Array& y, const std::source_location& loc) {
  if (!is_float(x.dtype())) return lax::le(x, y, loc);
  return lax::logical_or(lax::le(x, y, loc), lax::ne(y, y, loc), loc);
}

}  // namespace

Array searchsorted(const Array& a, const Array& v, Side side, std::source_location loc) {
  if (a.shape().size() != 1)
    throw ShapeError("searchsorted: a " + shape_to_string(a.shape()) +
                     " must be one-dimensional (sorted ascending) at " + loc_str(loc));
  return fused("searchsorted", loc, [&] {
    const DType t = promote_types(a.dtype(), v.dtype());
    const Array sorted = cast(a, t, loc), query = cast(v, t, loc);
    const std::int64_t n = a.shape()[0];
    if (n == 0) return lax::broadcast_in_dim(lax::constant(0, DType::I32, loc), v.shape(), {}, loc);
    // jnp's default method: a binary search of ceil(log2(n + 1)) halvings, unrolled here, so
    // that even an unsorted `a` gives JAX's answer.
    const auto levels = static_cast<int>(std::ceil(std::log2(static_cast<double>(n) + 1)));
    const Array two = lax::broadcast_in_dim(lax::constant(2, DType::I32, loc), v.shape(), {}, loc);
    Array low = lax::broadcast_in_dim(lax::constant(0, DType::I32, loc), v.shape(), {}, loc);
    Array high = lax::broadcast_in_dim(lax::constant(static_cast<double>(n), DType::I32, loc),
                                       v.shape(), {}, loc);
    for (int level = 0; level < levels; ++level) {
      const Array mid = lax::add(low, lax::div(lax::sub(high, low, loc), two, loc), loc);
      // mid == n only once low == high, where the comparison no longer matters.
      const Array probe = take(sorted, mid, 0, IndexMode::clip, loc);
      const Array go_left =
          side == Side::left ? sort_less_equal(query, probe, loc) : sort_less(query, probe, loc);
      low = lax::select(go_left, low, mid, loc);
      high = lax::select(go_left, mid, high, loc);
    }
    return high;
  });
}

}  // namespace weft::np
