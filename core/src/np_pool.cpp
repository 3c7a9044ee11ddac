// weft::np's pooling, as flax.linen.max_pool and avg_pool, over weft::lax's windowed reductions:
// the batch axes and the features get windows of 1, the spatial axes `window_shape`.
#include <algorithm>

#include "np_internal.h"
#include "weft/np.h"

namespace weft::np {

using namespace internal;

namespace {

// The reduce_window attributes of a pool over x (flax's, with "SAME" padding as
// lax.padtype_to_pads: the output ceil(size / stride), the padding split low-first).
WindowAttrs pool_window(const Array& x, const Shape& window_shape, const Shape& strides,
                        const PoolPadding& padding, const char* op,
                        const std::source_location& loc) {
  const std::size_t spatial = window_shape.size();
  const std::size_t rank = x.shape().size();
  auto fail = [&](const std::string& what) {
    throw ShapeError(std::string("np::") + op + ": " + what + " (x " + shape_to_string(x.shape()) +
                     ", window_shape " + shape_to_string(window_shape) + ") at " + loc_str(loc));
  };
  if (rank < spatial + 1)
    fail("x must be [batch..., spatial..., features] with one spatial axis per window axis");
  if (!strides.empty() && strides.size() != spatial) fail("strides need one entry per window axis");
  if (padding.mode.empty() ? padding.pairs.size() != spatial
                           : padding.mode != "VALID" && padding.mode != "SAME")
    fail("padding must be \"VALID\", \"SAME\" or one (low, high) pair per window axis");
  const std::size_t batch = rank - spatial - 1;
  WindowAttrs a;
  a.window_dimensions.assign(rank, 1);
  a.window_strides.assign(rank, 1);
  a.padding_low.assign(rank, 0);
  a.padding_high.assign(rank, 0);
  a.base_dilation.assign(rank, 1);
  a.window_dilation.assign(rank, 1);
  for (std::size_t d = 0; d < spatial; ++d) {
    const std::size_t axis = batch + d;
    const std::int64_t window = window_shape[d], stride = strides.empty() ? 1 : strides[d];
    a.window_dimensions[axis] = window;
    a.window_strides[axis] = stride;
    if (!padding.mode.empty()) {
      if (padding.mode == "VALID" || stride < 1) continue;  // the type rule names a bad stride
      const std::int64_t size = x.shape()[axis];
      const std::int64_t out = (size + stride - 1) / stride;
      const std::int64_t total = std::max<std::int64_t>((out - 1) * stride + window - size, 0);
      a.padding_low[axis] = total / 2;
      a.padding_high[axis] = total - total / 2;
    } else {
      a.padding_low[axis] = padding.pairs[d].first;
      a.padding_high[axis] = padding.pairs[d].second;
    }
  }
  return a;
}

}  // namespace

Array max_pool(const Array& x, const Shape& window_shape, const Shape& strides,
               const PoolPadding& padding, std::source_location loc) {
  const WindowAttrs a = pool_window(x, window_shape, strides, padding, "max_pool", loc);
  return fused("max_pool", loc, [&] { return lax::reduce_window_max(x, a, loc); });
}

Array avg_pool(const Array& x, const Shape& window_shape, const Shape& strides,
               const PoolPadding& padding, bool count_include_pad, std::source_location loc) {
  const WindowAttrs a = pool_window(x, window_shape, strides, padding, "avg_pool", loc);
  return fused("avg_pool", loc, [&] {
    const DType t = inexact_type(x.dtype());
    const Array sums = lax::reduce_window_sum(cast(x, t, loc), a, loc);
    if (count_include_pad) {
      std::int64_t size = 1;
      for (std::int64_t w : window_shape) size *= w;
      return lax::div(sums, full_of(static_cast<double>(size), sums, loc), loc);
    }
    // The count of x's elements in each window: the same windows over ones of the spatial
    // axes' shape (1 on the batch axes and the features), broadcast.
    Shape ones_shape(x.shape().size(), 1);
    const std::size_t batch = x.shape().size() - window_shape.size() - 1;
    for (std::size_t d = 0; d < window_shape.size(); ++d)
      ones_shape[batch + d] = x.shape()[batch + d];
    const Array ones = lax::broadcast_in_dim(lax::constant(1, t, loc), ones_shape, {}, loc);
    return lax::div(sums, bcast(lax::reduce_window_sum(ones, a, loc), sums.shape(), loc), loc);
  });
}

}  // namespace weft::np
