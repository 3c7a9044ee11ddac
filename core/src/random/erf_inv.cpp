// The f32 and f64 inverse error functions of XLA (and StableHLO's chlo.erf_inv expansion),
// which jax.lax.erf_inv lowers to: Giles' polynomials in w = -log1p(-x^2).
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

// XLA's f64 erf_inv: Giles' double-precision polynomials in w = -log1p(-x^2) on three ranges
// of w. The shorter polynomials are padded with leading zeros so one Horner loop over selected
// coefficients evaluates all three (a leading 0 * t + 0 is exact).
Array erf_inv_f64(const Array& x, std::source_location loc) {
  static constexpr std::array<double, 23> kCentral = {
      -3.6444120640178196996e-21, -1.685059138182016589e-19,  1.2858480715256400167e-18,
      1.115787767802518096e-17,   -1.333171662854620906e-16,  2.0972767875968561637e-17,
      6.6376381343583238325e-15,  -4.0545662729752068639e-14, -8.1519341976054721522e-14,
      2.6335093153082322977e-12,  -1.2975133253453532498e-11, -5.4154120542946279317e-11,
      1.051212273321532285e-09,   -4.1126339803469836976e-09, -2.9070369957882005086e-08,
      4.2347877827932403518e-07,  -1.3654692000834678645e-06, -1.3882523362786468719e-05,
      0.0001867342080340571352,   -0.00074070253416626697512, -0.0060336708714301490533,
      0.24015818242558961693,     1.6536545626831027356};
  static constexpr std::array<double, 23> kMiddle = {0.0,
                                                     0.0,
                                                     0.0,
                                                     0.0,
                                                     2.2137376921775787049e-09,
                                                     9.0756561938885390979e-08,
                                                     -2.7517406297064545428e-07,
                                                     1.8239629214389227755e-08,
                                                     1.5027403968909827627e-06,
                                                     -4.013867526981545969e-06,
                                                     2.9234449089955446044e-06,
                                                     1.2475304481671778723e-05,
                                                     -4.7318229009055733981e-05,
                                                     6.8284851459573175448e-05,
                                                     2.4031110387097893999e-05,
                                                     -0.0003550375203628474796,
                                                     0.00095328937973738049703,
                                                     -0.0016882755560235047313,
                                                     0.0024914420961078508066,
                                                     -0.0037512085075692412107,
                                                     0.005370914553590063617,
                                                     1.0052589676941592334,
                                                     3.0838856104922207635};
  static constexpr std::array<double, 23> kTail = {0.0,
                                                   0.0,
                                                   0.0,
                                                   0.0,
                                                   0.0,
                                                   0.0,
                                                   -2.7109920616438573243e-11,
                                                   -2.5556418169965252055e-10,
                                                   1.5076572693500548083e-09,
                                                   -3.7894654401267369937e-09,
                                                   7.6157012080783393804e-09,
                                                   -1.4960026627149240478e-08,
                                                   2.9147953450901080826e-08,
                                                   -6.7711997758452339498e-08,
                                                   2.2900482228026654717e-07,
                                                   -9.9298272942317002539e-07,
                                                   4.5260625972231537039e-06,
                                                   -1.9681778105531670567e-05,
                                                   7.5995277030017761139e-05,
                                                   -0.00021503011930044477347,
                                                   -0.00013871931833623122026,
                                                   1.0103004648645343977,
                                                   4.8499064014085844221};
  const Shape& shape = x.shape();
  auto f64 = [&](double v) { return full(v, DType::F64, shape, loc); };
  const Array w = lax::neg(lax::log1p(lax::mul(x, lax::neg(x, loc), loc), loc), loc);
  const Array central = lax::lt(w, f64(6.25), loc);
  const Array middle = lax::lt(w, f64(16.0), loc);
  const Array root = lax::sqrt(w, loc);
  const Array t =
      lax::select(central, lax::sub(w, f64(3.125), loc),
                  lax::sub(root, lax::select(middle, f64(3.25), f64(5.0), loc), loc), loc);
  auto coefficient = [&](std::size_t i) {
    return lax::select(central, f64(kCentral[i]),
                       lax::select(middle, f64(kMiddle[i]), f64(kTail[i]), loc), loc);
  };
  Array p = coefficient(0);
  for (std::size_t i = 1; i < kCentral.size(); ++i)
    p = lax::add(lax::mul(p, t, loc), coefficient(i), loc);
  const Array at_one = lax::eq(lax::abs(x, loc), f64(1.0), loc);
  return lax::select(at_one, lax::mul(x, f64(INFINITY), loc), lax::mul(p, x, loc), loc);
}

}  // namespace weft::random::detail
