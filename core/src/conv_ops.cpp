// weft::lax's convolution (its primitive: primitives/conv.cpp): the attributes from JAX's
// arguments, layout strings and padding modes.
#include <algorithm>

#include "control_flow_internal.h"
#include "weft/error.h"
#include "weft/ir/op_attrs.h"
#include "weft/ops.h"
#include "weft/trace/trace.h"

namespace weft::lax {

namespace {

std::int64_t dilated(std::int64_t size, std::int64_t dilation) {
  return size == 0 ? 0 : 1 + dilation * (size - 1);
}

// jax.lax.padtype_to_pads.
std::vector<std::pair<std::int64_t, std::int64_t>> pads_of_mode(const std::string& mode,
                                                                const Axes& in, const Axes& window,
                                                                const Axes& strides,
                                                                const std::source_location& loc) {
  std::vector<std::pair<std::int64_t, std::int64_t>> pads;
  if (mode == "VALID") return std::vector<std::pair<std::int64_t, std::int64_t>>(in.size(), {0, 0});
  if (mode != "SAME" && mode != "SAME_LOWER")
    throw ShapeError(detail::at("lax::conv_general_dilated", loc) + "padding \"" + mode +
                     "\" is not a padding mode; use \"SAME\", \"SAME_LOWER\", \"VALID\" or "
                     "explicit (low, high) pairs");
  for (std::size_t i = 0; i < in.size(); ++i) {
    const std::int64_t out = (in[i] + strides[i] - 1) / strides[i];
    const std::int64_t total =
        std::max<std::int64_t>(0, (out - 1) * strides[i] + window[i] - in[i]);
    const std::int64_t half = total / 2;
    pads.emplace_back(mode == "SAME" ? half : total - half, mode == "SAME" ? total - half : half);
  }
  return pads;
}

Axes ones_or(const Axes& given, std::size_t n) {
  return given.empty() ? Axes(n, 1) : given;
}

}  // namespace

Array conv_general_dilated(const Array& lhs, const Array& rhs, const ConvAttrs& attrs,
                           std::source_location loc) {
  const Array operands[] = {lhs, rhs};
  return detail::bind(OpKind::ConvGeneralDilated, operands, attrs.write(), {}, loc);
}

ConvDimensionNumbers conv_dimension_numbers(std::string_view lhs, std::string_view rhs,
                                            std::string_view out, std::source_location loc) {
  auto fail = [&](const std::string& what) -> void {
    throw ShapeError(detail::at("lax::conv_dimension_numbers", loc) + "(\"" + std::string(lhs) +
                     "\", \"" + std::string(rhs) + "\", \"" + std::string(out) + "\"): " + what +
                     "; write each layout with one letter per axis, e.g. (\"NHWC\", \"HWIO\", "
                     "\"NHWC\")");
  };
  if (lhs.size() != rhs.size() || lhs.size() != out.size() || lhs.size() < 2)
    fail("the three layouts must have one length of at least 2");
  auto distinct = [](std::string_view s) {
    std::string sorted(s);
    std::sort(sorted.begin(), sorted.end());
    return std::adjacent_find(sorted.begin(), sorted.end()) == sorted.end();
  };
  if (!distinct(lhs) || !distinct(rhs) || !distinct(out)) fail("a layout repeats a letter");
  auto find = [&](std::string_view s, char c) -> std::int64_t {
    const auto at = s.find(c);
    if (at == std::string_view::npos) fail(std::string("a layout lacks '") + c + "'");
    return static_cast<std::int64_t>(at);
  };
  ConvDimensionNumbers dn{{find(lhs, 'N'), find(lhs, 'C')},
                          {find(rhs, 'O'), find(rhs, 'I')},
                          {find(out, 'N'), find(out, 'C')}};
  // Spatial axes in the order the rhs layout lists them, matched by letter.
  for (char c : rhs) {
    if (c == 'O' || c == 'I') continue;
    if (c == 'N' || c == 'C') fail("the rhs layout uses N or C (use O and I)");
    dn.lhs_spec.push_back(find(lhs, c));
    dn.rhs_spec.push_back(find(rhs, c));
    dn.out_spec.push_back(find(out, c));
  }
  return dn;
}

Array conv_general_dilated(const Array& lhs, const Array& rhs, const Axes& window_strides,
                           const ConvPadding& padding, const Axes& lhs_dilation,
                           const Axes& rhs_dilation,
                           const std::optional<ConvDimensionNumbers>& dimension_numbers,
                           std::int64_t feature_group_count, std::int64_t batch_group_count,
                           std::source_location loc) {
  const std::size_t rank = lhs.shape().size();
  const std::size_t spatial = rank < 2 ? 0 : rank - 2;
  ConvAttrs a;
  if (dimension_numbers) {
    a.lhs_spec = dimension_numbers->lhs_spec;
    a.rhs_spec = dimension_numbers->rhs_spec;
    a.out_spec = dimension_numbers->out_spec;
  } else {
    for (std::size_t d = 0; d < rank; ++d) a.lhs_spec.push_back(static_cast<std::int64_t>(d));
    a.rhs_spec = a.out_spec = a.lhs_spec;
  }
  a.window_strides = window_strides;
  a.lhs_dilation = ones_or(lhs_dilation, spatial);
  a.rhs_dilation = ones_or(rhs_dilation, spatial);
  a.feature_group_count = feature_group_count;
  a.batch_group_count = batch_group_count;
  std::vector<std::pair<std::int64_t, std::int64_t>> pads = padding.pairs;
  if (!padding.mode.empty()) {
    // Resolved as JAX does: the undilated input against the dilated window.
    const bool specs_fit = a.lhs_spec.size() == rank && a.rhs_spec.size() == rank &&
                           rhs.shape().size() == rank && window_strides.size() == spatial &&
                           a.rhs_dilation.size() == spatial;
    if (!specs_fit)
      throw ShapeError(detail::at("lax::conv_general_dilated", loc) + "window_strides (" +
                       std::to_string(window_strides.size()) +
                       " entries), lhs_dilation and rhs_dilation need one entry per spatial axis "
                       "of the rank-" +
                       std::to_string(rank) + " operands (" + std::to_string(spatial) +
                       "), the rhs that rank and the dimension numbers one axis each, to resolve "
                       "padding \"" +
                       padding.mode + "\"");
    Axes in, window;
    for (std::size_t i = 0; i < spatial; ++i) {
      in.push_back(lhs.shape()[a.lhs_spec[2 + i]]);
      window.push_back(dilated(rhs.shape()[a.rhs_spec[2 + i]], a.rhs_dilation[i]));
    }
    for (std::int64_t s : window_strides)
      if (s < 1)
        throw ShapeError(detail::at("lax::conv_general_dilated", loc) +
                         "window_strides must be at least 1");
    pads = pads_of_mode(padding.mode, in, window, window_strides, loc);
  }
  for (const auto& [low, high] : pads) {
    a.padding_low.push_back(low);
    a.padding_high.push_back(high);
  }
  return conv_general_dilated(lhs, rhs, a, loc);
}

Array conv(const Array& lhs, const Array& rhs, const Axes& window_strides,
           const ConvPadding& padding, std::source_location loc) {
  return conv_general_dilated(lhs, rhs, window_strides, padding, {}, {}, std::nullopt, 1, 1, loc);
}

}  // namespace weft::lax
