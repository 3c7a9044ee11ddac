// The f32 inverse error function of XLA (and StableHLO's chlo.erf_inv expansion), which
// jax.lax.erf_inv lowers to: Giles' single-precision polynomial in w = -log1p(-x^2).
#include <array>
#include <cmath>

#include "random_internal.h"

namespace weft::random::detail {

Array erf_inv_f32(const Array& x, std::source_location loc) {
  static constexpr std::array<float, 9> kCentral = {
      2.81022636e-08f, 3.43273939e-07f, -3.5233877e-06f, -4.39150654e-06f, 0.00021858087f,
      -0.00125372503f, -0.00417768164f, 0.246640727f,    1.50140941f};
  static constexpr std::array<float, 9> kTail = {-0.000200214257f, 0.000100950558f, 0.00134934322f,
                                                 -0.00367342844f,  0.00573950773f,  -0.0076224613f,
                                                 0.00943887047f,   1.00167406f,     2.83297682f};
  const Shape& shape = x.shape();
  auto f32 = [&](double v) { return full(v, DType::F32, shape, loc); };
  Array w = lax::neg(lax::log1p(lax::mul(x, lax::neg(x, loc), loc), loc), loc);
  const Array central = lax::lt(w, f32(5.0), loc);
  w = lax::select(central, lax::sub(w, f32(2.5), loc), lax::sub(lax::sqrt(w, loc), f32(3.0), loc),
                  loc);
  auto coefficient = [&](std::size_t i) {
    return lax::select(central, f32(kCentral[i]), f32(kTail[i]), loc);
  };
  Array p = coefficient(0);
  for (std::size_t i = 1; i < kCentral.size(); ++i)
    p = fused_multiply_add(p, w, coefficient(i), loc);
  // erf_inv(+-1) is +-inf; the polynomial gives something else there.
  const Array at_one = lax::eq(lax::abs(x, loc), f32(1.0), loc);
  return lax::select(at_one, lax::mul(x, f32(INFINITY), loc), lax::mul(p, x, loc), loc);
}

}  // namespace weft::random::detail
