// weft::nn::group_norm, as flax.linen.GroupNorm (use_fast_variance): statistics of each batch
// entry's group over all its axes but the batch, in the input's dtype.
#include "control_flow_internal.h"
#include "weft/error.h"
#include "weft/nn.h"
#include "weft/np.h"

namespace weft::nn {

Array group_norm(const Array& x, std::int64_t num_groups, const std::optional<Array>& scale,
                 const std::optional<Array>& bias, double epsilon, std::source_location loc) {
  const Shape& shape = x.shape();
  auto fail = [&](const std::string& what) {
    throw ShapeError(detail::at("nn::group_norm", loc) + "x " + shape_to_string(shape) +
                     ", num_groups " + std::to_string(num_groups) + ": " + what);
  };
  if (!is_float(x.dtype()))
    throw DTypeError(detail::at("nn::group_norm", loc) + "x is " +
                     std::string(dtype_name(x.dtype())) + "; normalise a float array (astype)");
  if (shape.size() < 2) fail("x needs a batch axis and a feature axis at least");
  const std::int64_t features = shape.back();
  if (num_groups < 1 || features % num_groups != 0)
    fail("num_groups must divide the " + std::to_string(features) + " features");
  for (const auto* p : {&scale, &bias})
    if (*p && (*p)->shape() != Shape{features})
      fail("scale and bias must have shape [" + std::to_string(features) + "], not " +
           shape_to_string((*p)->shape()));
  // [batch, ..., groups, features per group]: statistics over every axis but batch and group.
  Shape grouped = shape;
  grouped.back() = num_groups;
  grouped.push_back(features / num_groups);
  const Array g = lax::reshape(x, grouped, loc);
  np::Axes axes;
  for (std::size_t d = 1; d + 2 < grouped.size(); ++d) axes.push_back(static_cast<std::int64_t>(d));
  axes.push_back(static_cast<std::int64_t>(grouped.size()) - 1);
  const Array mean = np::mean(g, axes, true, loc);
  const Array mean_sq = np::mean(g * g, axes, true, loc);
  const Array var = np::maximum(mean_sq - mean * mean, np::zeros_like(mean_sq, loc), loc);
  const Array normed = (g - mean) * np::rsqrt(var + epsilon, loc);
  Array y = lax::reshape(normed, shape, loc);
  const auto per_feature = [&](const Array& v) {
    return lax::broadcast_in_dim(lax::convert_element_type(v, x.dtype(), loc), shape,
                                 {static_cast<std::int64_t>(shape.size()) - 1}, loc);
  };
  if (scale) y = y * per_feature(*scale);
  if (bias) y = y + per_feature(*bias);
  return y;
}

}  // namespace weft::nn
