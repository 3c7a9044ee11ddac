// weft::lax's windowed reductions and their select_and_* companions: each binds its primitive
// with WindowAttrs, its empty entries filled with the defaults.
#include "weft/ops.h"
#include "weft/trace/trace.h"

namespace weft::lax {

namespace {

// `window` with an empty strides, padding or dilation list given its default for x's rank.
WindowAttrs with_defaults(WindowAttrs window, std::size_t rank) {
  auto fill = [rank](std::vector<std::int64_t>& v, std::int64_t value) {
    if (v.empty()) v.assign(rank, value);
  };
  fill(window.window_strides, 1);
  fill(window.padding_low, 0);
  fill(window.padding_high, 0);
  fill(window.base_dilation, 1);
  fill(window.window_dilation, 1);
  return window;
}

Array reduce_window(OpKind op, const Array& x, const WindowAttrs& window,
                    const std::source_location& loc) {
  const Array operands[] = {x};
  return detail::bind(op, operands, with_defaults(window, x.shape().size()).write(), {}, loc);
}

}  // namespace

Array reduce_window_sum(const Array& x, const WindowAttrs& window, std::source_location loc) {
  return reduce_window(OpKind::ReduceWindowSum, x, window, loc);
}
Array reduce_window_max(const Array& x, const WindowAttrs& window, std::source_location loc) {
  return reduce_window(OpKind::ReduceWindowMax, x, window, loc);
}
Array reduce_window_min(const Array& x, const WindowAttrs& window, std::source_location loc) {
  return reduce_window(OpKind::ReduceWindowMin, x, window, loc);
}

Array select_and_gather_add(const Array& tangents, const Array& operand, bool chooses_max,
                            const WindowAttrs& window, std::source_location loc) {
  const Array operands[] = {tangents, operand};
  const SelectWindowAttrs a{with_defaults(window, operand.shape().size()), chooses_max};
  return detail::bind(OpKind::SelectAndGatherAdd, operands, a.write(true), {}, loc);
}

Array select_and_scatter_add(const Array& source, const Array& operand, bool chooses_max,
                             const WindowAttrs& window, std::source_location loc) {
  const Array operands[] = {source, operand};
  const SelectWindowAttrs a{with_defaults(window, operand.shape().size()), chooses_max};
  // select_and_scatter_add has no dilations: its type rule refuses any the caller passed.
  Attrs attrs = a.write(false);
  const std::vector<std::int64_t> ones(a.window.window_dimensions.size(), 1);
  if (a.window.base_dilation != ones) attrs.set(WindowAttrs::kBaseDilation, a.window.base_dilation);
  if (a.window.window_dilation != ones)
    attrs.set(WindowAttrs::kWindowDilation, a.window.window_dilation);
  return detail::bind(OpKind::SelectAndScatterAdd, operands, attrs, {}, loc);
}

}  // namespace weft::lax
