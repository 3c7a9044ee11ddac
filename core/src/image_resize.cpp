// weft::image::resize, as jax.image.resize (jax/_src/image/scale.py): "nearest" gathers the
// input element under each output cell's centre; "linear" contracts each changed axis with a
// weight matrix computed here on the host exactly as JAX computes it (compute_weight_mat, in
// f32 for f32 images), so results agree with JAX to the rounding of the contractions.
#include <algorithm>
#include <cmath>
#include <limits>

#include "control_flow_internal.h"
#include "weft/error.h"
#include "weft/host_array.h"
#include "weft/image.h"
#include "weft/np.h"

namespace weft::image {

namespace {

// JAX's compute_weight_mat with the triangle kernel, scale n/m and no translation: weight
// [i][j] of input position i for output position j, in the arithmetic of `Real`.
template <typename Real>
std::vector<double> linear_weights(std::int64_t m, std::int64_t n, bool antialias) {
  const double inv_scale = static_cast<double>(m) / static_cast<double>(n);
  const Real kernel_scale = antialias ? std::max(static_cast<Real>(inv_scale), Real(1)) : Real(1);
  std::vector<Real> sample(static_cast<std::size_t>(n));
  for (std::int64_t j = 0; j < n; ++j)
    sample[j] = (static_cast<Real>(j) + Real(0.5)) * static_cast<Real>(inv_scale) - Real(0.5);
  std::vector<Real> w(static_cast<std::size_t>(m * n));
  std::vector<Real> total(static_cast<std::size_t>(n), Real(0));
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < n; ++j) {
      const Real x = std::abs(sample[j] - static_cast<Real>(i)) / kernel_scale;
      const Real k = std::max(Real(0), Real(1) - std::abs(x));
      w[i * n + j] = k;
      total[j] += k;
    }
  const Real tiny = Real(1000) * std::numeric_limits<float>::epsilon();
  std::vector<double> out(w.size());
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < n; ++j) {
      Real v =
          std::abs(total[j]) > tiny ? w[i * n + j] / (total[j] != 0 ? total[j] : Real(1)) : Real(0);
      // A sample wholly outside the input gets no weight.
      if (!(sample[j] >= Real(-0.5) && sample[j] <= static_cast<Real>(m) - Real(0.5))) v = 0;
      out[i * n + j] = static_cast<double>(v);
    }
  return out;
}

// `x` contracted along `axis` with the [m, n] matrix `weights`; the new axis of size n takes
// the old one's place.
Array contract_axis(const Array& x, std::int64_t axis, const std::vector<double>& weights,
                    std::int64_t m, std::int64_t n, const std::source_location& loc) {
  HostArray w(x.dtype(), {m, n});
  for (std::int64_t k = 0; k < m * n; ++k) w.set_f64(k, weights[k]);
  const Array y = lax::dot_general(
      x, Array::from_host(w),
      {.lhs_contracting = {axis}, .rhs_contracting = {0}, .lhs_batch = {}, .rhs_batch = {}}, loc);
  // y's axes: x's others in order, then n.
  const auto rank = static_cast<std::int64_t>(x.shape().size());
  if (axis == rank - 1) return y;
  lax::Axes perm;
  for (std::int64_t d = 0; d < rank - 1; ++d) {
    if (d == axis) perm.push_back(rank - 1);
    perm.push_back(d);
  }
  return lax::transpose(y, perm, loc);
}

}  // namespace

Array resize(const Array& image, const Shape& shape, ResizeMethod method, bool antialias,
             std::source_location loc) {
  const Shape& in = image.shape();
  auto fail = [&](const std::string& what) {
    throw ShapeError(detail::at("image::resize", loc) + "from " + shape_to_string(in) + " to " +
                     shape_to_string(shape) + ": " + what);
  };
  if (shape.size() != in.size())
    fail("the shape must have the image's rank; give every axis a size (the same size keeps it)");
  for (std::size_t d = 0; d < in.size(); ++d) {
    if (shape[d] < 0) fail("sizes must not be negative");
    if (in[d] == 0 && shape[d] > 0)
      fail("axis " + std::to_string(d) + " is empty, so there is nothing to interpolate from");
  }
  Array x = image;
  if (method == ResizeMethod::Nearest) {
    for (std::size_t d = 0; d < in.size(); ++d) {
      const std::int64_t m = in[d], n = shape[d];
      if (m == n) continue;
      // JAX's offsets: floor((j + 0.5) * m / n), in f32.
      std::vector<std::int32_t> at(static_cast<std::size_t>(n));
      for (std::int64_t j = 0; j < n; ++j)
        at[j] = static_cast<std::int32_t>(std::floor(
            (static_cast<float>(j) + 0.5f) * static_cast<float>(m) / static_cast<float>(n)));
      x = np::take(x, Array::from_vector<std::int32_t>({n}, at), static_cast<std::int64_t>(d),
                   IndexMode::promise_in_bounds, loc);
    }
    return x;
  }
  if (!is_float(x.dtype())) x = lax::convert_element_type(x, DType::F32, loc);
  for (std::size_t d = 0; d < in.size(); ++d) {
    const std::int64_t m = in[d], n = shape[d];
    if (m == n) continue;
    const std::vector<double> w = x.dtype() == DType::F64 ? linear_weights<double>(m, n, antialias)
                                                          : linear_weights<float>(m, n, antialias);
    x = contract_axis(x, static_cast<std::int64_t>(d), w, m, n, loc);
  }
  return x;
}

}  // namespace weft::image
