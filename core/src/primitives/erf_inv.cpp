// erf_inv: the inverse of erf on (-1, 1); +-inf at +-1 and NaN beyond. The reference computes
// it to double precision (Newton's method on erf, or on log erfc near +-1 where erf is flat,
// from Giles' approximation) and rounds once; the device's f32 function follows XLA's (Giles'
// polynomial; codegen/lowerings/erf_inv.cpp). Its derivative is sqrt(pi)/2 exp(erf_inv(x)^2).
#include <cmath>
#include <limits>
#include <numbers>

#include "primitives/elementwise_family.h"
#include "weft/ops.h"

namespace weft::prim {

using namespace lax;
using namespace elementwise;

namespace {

// Giles, "Approximating the erfinv function" (GPU Computing Gems, 2011), single precision:
// a start within a few f32 ulps, for 0 <= a < 1.
double giles_start(double a) {
  double w = -std::log((1.0 - a) * (1.0 + a));
  double p;
  if (w < 5.0) {
    w -= 2.5;
    p = 2.81022636e-08;
    for (double c : {3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087, -0.00125372503,
                     -0.00417768164, 0.246640727, 1.50140941})
      p = c + p * w;
  } else {
    w = std::sqrt(w) - 3.0;
    p = -0.000200214257;
    for (double c : {0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773, -0.0076224613,
                     0.00943887047, 1.00167406, 2.83297682})
      p = c + p * w;
  }
  return p * a;
}

double erf_inv(double x) {
  if (std::isnan(x)) return x;
  const double a = std::fabs(x);
  if (a > 1) return std::numeric_limits<double>::quiet_NaN();
  if (a == 1) return std::copysign(std::numeric_limits<double>::infinity(), x);
  if (a == 0) return x;
  double y = giles_start(a);
  const double slope = 2.0 * std::numbers::inv_sqrtpi;  // erf'(y) = slope exp(-y^2)
  if (a < 0.5) {
    // Newton on erf(y) = a: each step about doubles the correct digits.
    for (int step = 0; step < 3; ++step) y -= (std::erf(y) - a) / (slope * std::exp(-y * y));
  } else {
    // Where erf is within 1/2 of 1, Newton on log erfc(y) = log(1 - a) (1 - a is exact there):
    // nearly linear in y^2, so it converges from the start's 1e-2 error near 1 - 2^-53 too.
    const double log_target = std::log(1.0 - a);
    for (int step = 0; step < 5; ++step) {
      const double e = std::erfc(y);
      y += (std::log(e) - log_target) * e / (slope * std::exp(-y * y));
    }
  }
  return std::copysign(y, x);
}

}  // namespace

void define_erf_inv_primitive(Definitions& defs) {
  struct ErfInv {
    static double on_float(double x) { return erf_inv(x); }
    // sqrt(pi)/2 exp(z^2), z = erf_inv(x)
    static Tangent jvp(const Array& x, const Array& t, const Array& z, const Loc& loc) {
      return mul(t,
                 mul(full(x, std::sqrt(std::numbers::pi) / 2, loc), exp(mul(z, z, loc), loc), loc),
                 loc);
    }
  };
  defs.add(math_call(float_unary<ErfInv>(OpKind::ErfInv, "erf_inv")));
}

}  // namespace weft::prim
