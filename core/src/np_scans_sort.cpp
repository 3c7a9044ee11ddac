// weft::np's cumulative ops, flip and sorting, over weft::lax's (scans_sort_ops.cpp).
#include <numeric>

#include "np_internal.h"
#include "weft/np.h"

namespace weft::np {

using namespace internal;

namespace {

using CumulativeFn = Array (*)(const Array&, std::int64_t, bool, std::source_location);

Array cumulative(CumulativeFn fn, const char* op, const Array& x, std::optional<std::int64_t> axis,
                 const std::source_location& loc) {
  return fused(op, loc, [&] {
    Array v = x.dtype() == DType::Bool ? lax::convert_element_type(x, DType::I32, loc) : x;
    if (!axis) v = lax::reshape(v, {num_elements(v.shape())}, loc);
    const std::int64_t a = axis ? normalize_axis(*axis, v.shape().size(), op, loc) : 0;
    return fn(v, a, false, loc);
  });
}

}  // namespace

Array cumsum(const Array& x, std::optional<std::int64_t> axis, std::source_location loc) {
  return cumulative(lax::cumsum, "cumsum", x, axis, loc);
}
Array cumprod(const Array& x, std::optional<std::int64_t> axis, std::source_location loc) {
  return cumulative(lax::cumprod, "cumprod", x, axis, loc);
}

namespace {

// x along a normalized axis, or flattened without one.
std::pair<Array, std::int64_t> sort_operand(const Array& x, std::optional<std::int64_t> axis,
                                            const char* op, const std::source_location& loc) {
  if (!axis) return {lax::reshape(x, {num_elements(x.shape())}, loc), 0};
  return {x, normalize_axis(*axis, x.shape().size(), op, loc)};
}

}  // namespace

Array sort(const Array& x, std::optional<std::int64_t> axis, std::source_location loc) {
  return fused("sort", loc, [&] {
    const auto [v, a] = sort_operand(x, axis, "sort", loc);
    return lax::sort(v, a, loc);
  });
}

Array argsort(const Array& x, std::optional<std::int64_t> axis, std::source_location loc) {
  return fused("argsort", loc, [&] {
    const auto [v, a] = sort_operand(x, axis, "argsort", loc);
    return lax::argsort({v}, a, loc);
  });
}

Array flip(const Array& x, Axes axes, std::source_location loc) {
  return fused("flip", loc, [&] {
    Axes dims;
    if (axes.empty()) {
      dims.resize(x.shape().size());
      std::iota(dims.begin(), dims.end(), std::int64_t{0});
    } else {
      dims = normalize_axes(std::move(axes), x.shape().size(), "flip", loc);
    }
    return lax::rev(x, dims, loc);
  });
}

}  // namespace weft::np
