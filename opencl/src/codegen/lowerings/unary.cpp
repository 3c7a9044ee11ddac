// Unary elementwise primitives: each one's OpenCL C expression and, for the transcendentals,
// weft's own f32 function (math_library.h), side by side.
#include <string>

#include "codegen/lowerings/families.h"
#include "weft/ir/op_attrs.h"

namespace weft::opencl::lowerings {
namespace {

std::string neg(const ElementOp& op, const std::string& a) {
  if (is_float(op.dtype)) return "(-" + a + ")";
  if (is_unsigned_integer(op.dtype)) return "((" + op.type + ")(0u - " + a + "))";
  return "((" + op.type + ")(-(" + unsigned_of(op.dtype) + ")(" + a + ")))";
}

std::string abs(const ElementOp& op, const std::string& a) {
  if (is_float(op.dtype)) return "fabs(" + a + ")";
  if (is_unsigned_integer(op.dtype)) return a;
  return "((" + op.type + ")abs(" + a + "))";
}

std::string sign(const ElementOp& op, const std::string& a) {
  const std::string& T = op.type;
  if (is_float(op.dtype))
    return "(isnan(" + a + ") ? " + a + " : (" + a + " > 0 ? (" + T + ")1 : (" + a + " < 0 ? (" +
           T + ")-1 : " + a + ")))";
  if (is_unsigned_integer(op.dtype)) return "((" + T + ")(" + a + " > 0u))";
  return "((" + T + ")((" + a + " > 0) - (" + a + " < 0)))";
}

// e^x from the helpers in math_library.cpp: the fast version while every lane has |x| < 87.
const MathFunction kExp{"exp", {"exp_full", "exp_normal"}, R"(
  if ($ANY(!(fabs(x) < 87.0f))) return weft_exp_full_$S(x);
  return weft_exp_normal_$S(x);
)"};

// x = m 2^e with m in [sqrt(1/2), sqrt(2)); log x = e ln2 + log m, log m = m - m^2/2 + m^3 P(m)
// (Cephes' coefficients). Denormals are scaled by 2^23 first.
const MathFunction kLog{"log", {}, R"(
  const $I denormal = x < 1.17549435e-38f;
  const $F xs = select(x, x * 8388608.0f, denormal);
  const $I bits = as_int$N(xs);
  $I e = ((bits >> 23) & 0xff) - 126 - select(($I)0, ($I)23, denormal);
  $F m = as_float$N((bits & 0x007fffff) | 0x3f000000);
  const $I below = m < 0.707106781186547524f;
  e = e - select(($I)0, ($I)1, below);
  m = select(m - 1.0f, m + m - 1.0f, below);
  const $F z = m * m;
  $F p = 7.0376836292e-2f * m - 1.1514610310e-1f;
  p = p * m + 1.1676998740e-1f;
  p = p * m - 1.2420140846e-1f;
  p = p * m + 1.4249322787e-1f;
  p = p * m - 1.6668057665e-1f;
  p = p * m + 2.0000714765e-1f;
  p = p * m - 2.4999993993e-1f;
  p = p * m + 3.3333331174e-1f;
  const $F fe = convert_float$N(e);
  $F y = m * z * p + fe * -2.12194440e-4f - 0.5f * z;
  $F r = m + y + fe * 0.693359375f;
  r = select(r, ($F)(-INFINITY), x == 0.0f);
  r = select(r, ($F)(NAN), x < 0.0f);
  return select(r, x, isnan(x) | (isinf(x) & (x > 0.0f)));
)"};

// log(u) for u = 1 + x, corrected by what rounding u lost: log1p x = log u + (x - (u - 1)) / u.
const MathFunction kLog1p{"log1p", {"log"}, R"(
  const $F u = 1.0f + x;
  const $F c = (x - (u - 1.0f)) / u;
  const $F r = weft_log_$S(u) + select(c, ($F)(0.0f), isinf(u) | (u == 0.0f));
  return select(r, x, x == 0.0f);
)"};

// e^x - 1 = 2 (2^(n-1) em1(r) + 2^(n-1) - 1/2), em1(r) = e^r - 1 by its Taylor series to r^8
// (|r| <= ln2/2: under 0.2 ulp), exact for n = 0 where cancellation would hurt.
const MathFunction kExpm1{"expm1", {}, R"(
  const $F xc = fmin(fmax(x, -30.0f), 89.0f);
  const $F shifted = xc * 1.44269504088896341f + 12582912.0f;
  const $F n = shifted - 12582912.0f;
  $F r = xc - n * 0.693359375f;
  r = r - n * -2.12194440e-4f;
  $F p = 2.48015873e-5f * r + 1.98412698e-4f;
  p = p * r + 1.38888889e-3f;
  p = p * r + 8.33333333e-3f;
  p = p * r + 4.16666667e-2f;
  p = p * r + 1.66666667e-1f;
  p = p * r + 0.5f;
  const $F em1 = p * (r * r) + r;
  const $F s = as_float$N((as_int$N(shifted) - 0x4b400000 + 126) << 23);
  const $F y = (em1 * s + (s - 0.5f)) * 2.0f;
  return select(y, x, isnan(x) | (fabs(x) < 5.9604645e-8f));
)"};

// sin and cos share a reduction by pi/4 (j rounded up to even; pi/4 in four parts, the first
// three short enough that j times each is exact while j <= 8192, i.e. |x| <= 6433) and Cephes'
// two polynomials on [-pi/4, pi/4]; larger |x| (and infinities) take the driver's function.
constexpr const char* kSinCosReduce = R"(
  const $F ax = fabs(x);
  $I j = convert_int$N(ax * 1.27323954473516f);
  j = (j + 1) & ~1;
  const $F y = convert_float$N(j);
  const $F r = (((ax - y * 0.78515625f) - y * 2.4187564849853515625e-4f) -
                y * 3.7747668102383614e-8f) - y * 1.2816414596272807e-12f;
  const $F z = r * r;
  $F s = -1.9515295891e-4f * z + 8.3321608736e-3f;
  s = s * z - 1.6666654611e-1f;
  s = s * z * r + r;
  $F c = 2.443315711809948e-5f * z - 1.388731625493765e-3f;
  c = c * z + 4.166664568298827e-2f;
  c = c * z * z - 0.5f * z + 1.0f;
  j = j & 7;
)";

const MathFunction kSin{"sin", {}, std::string(kSinCosReduce) + R"(
  const $I use_cos = (j == 2) | (j == 6);
  $F v = select(s, c, use_cos);
  v = select(v, -v, j > 3);
  // sin is odd: x's sign bit flips the result's (-0 included).
  v = as_float$N(as_int$N(v) ^ (as_int$N(x) & (int)0x80000000));
  const $I huge = !(ax <= 6433.0f) & !isnan(x);
  if ($ANY(huge)) v = select(v, sin(x), huge);
  return v;
)"};

const MathFunction kCos{"cos", {}, std::string(kSinCosReduce) + R"(
  const $I use_sin = (j == 2) | (j == 6);
  const $I negate = (j == 2) | (j == 4);
  $F v = select(c, s, use_sin);
  v = select(v, -v, negate);
  const $I huge = !(ax <= 6433.0f) & !isnan(x);
  if ($ANY(huge)) v = select(v, cos(x), huge);
  return v;
)"};

// tanh: x + x^3 P(x^2) below 0.625 (Cephes), else 1 - 2 / (e^(2|x|) + 1); both on |x|, then
// x's sign, which keeps -0. |x| is clamped at 9.5, where 1 - 2 / (e^(2|x|) + 1) rounds to 1 as
// tanh does from 9.0115 on.
const MathFunction kTanh{"tanh", {"exp_normal"}, R"(
  const $F ax = fabs(x);
  const $F z = x * x;
  $F p = -5.70498872745e-3f * z + 2.06390887954e-2f;
  p = p * z - 5.37397155531e-2f;
  p = p * z + 1.33314422036e-1f;
  p = p * z - 3.33332819422e-1f;
  const $F small = ax + ax * z * p;
  const $F e = weft_exp_normal_$S(2.0f * fmin(ax, 9.5f));
  const $F big = 1.0f - 2.0f / (e + 1.0f);
  return copysign(select(small, big, ax >= 0.625f), x);  // NaN fails the test: `small` is NaN
)"};

// Without weft's function (f64, or builtin math): from e^-|x|, which cannot overflow:
// e / (1 + e) keeps the denormal results of x < -87.
std::string logistic(const ElementOp& op, const std::string& a) {
  const std::string& T = op.type;
  const std::string e = "exp(-fabs(" + a + "))";
  return "(" + a + " < (" + T + ")0 ? " + e + " / ((" + T + ")1 + " + e + ") : (" + T + ")1 / ((" +
         T + ")1 + " + e + "))";
}

// 1 / (1 + e) for x >= 0 and e / (1 + e) below, from e = e^-|x| (never overflows; results keep
// their precision down to the denormals). Rounding e, 1 + e and the quotient one after the other
// compounds to 2 ulp, and to 3 where a driver's division is not correctly rounded (an NVIDIA
// GPU's at x = -8.4605), so no step's error is left to compound: e comes as e + el from exp's
// reduction and polynomial with their rounding errors kept (error-free sums), 1 + e as d + dl,
// and the quotient from any reciprocal is corrected once by its residual (exact with fma). That
// stays within 1 ulp whatever the division's rounding and wherever a driver contracts a * b + c.
// Past |x| = 87 (e tiny: the result is e^x, or 1), infinities and NaN take a second path.
const MathFunction kLogistic{"logistic", {"exp"}, R"(
  const $F ax = fabs(x);
  const $F y = -fmin(ax, 87.0f);
  const $F shifted = y * 1.44269504088896341f + 12582912.0f;
  const $F n = shifted - 12582912.0f;
  const $F rh = y - n * 0.693359375f;
  const $F r = rh - n * -2.12194440e-4f;
  const $F rl = (rh - r) - n * -2.12194440e-4f;
  $F p = 1.9875691500e-4f * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  const $F tail = p * (r * r);
  const $F hi1 = 1.0f + r;
  const $F hi = hi1 + tail;
  const $F lo = ((r - (hi1 - 1.0f)) + (tail - (hi - hi1))) + rl * hi;
  const $F scale = as_float$N((as_int$N(shifted) - 0x4b400000 + 127) << 23);
  const $F e = hi * scale;
  const $F el = lo * scale;
  const $F d = 1.0f + e;
  const $F dl = (e - (d - 1.0f)) + el;
  const $I negative = x < 0.0f;
  const $F num = select(($F)(1.0f), e, negative);
  const $F numl = select(($F)(0.0f), el, negative);
  const $F inv = 1.0f / d;
  const $F q = num * inv;
  const $F residual = fma(-q, d, num) + (numl - q * dl);
  $F v = q + residual * inv;
  const $I huge = !(ax <= 87.0f);
  if ($ANY(huge))
    v = select(v, select(select(($F)(1.0f), weft_exp_$S(x), negative), x, isnan(x)), huge);
  return v;
)"};

// erf: x + x R(x^2) below 1; polynomials in |x| - 1.625 on [1, 2.25) and in |x| - 3.125 on
// [2.25, 4]; |x| is clamped at 4, and from 3.92 on the result is 1, as erf rounds there.
// Coefficients: least-squares fits made by tools/oracles/erf_fit.py.
const MathFunction kErf{"erf", {}, R"(
  const $F ax = fmin(fabs(x), 4.0f);
  const $F z = x * x;
  $F p = 8.006979433e-05f * z - 8.053777041e-04f;
  p = p * z + 5.192960138e-03f;
  p = p * z - 2.685607039e-02f;
  p = p * z + 1.128363464e-01f;
  p = p * z - 3.761262977e-01f;
  p = p * z + 1.283791662e-01f;
  const $F near = x + x * p;
  const $F t = ax - 1.625f;
  $F q = -2.655175143e-04f * t + 1.280198754e-03f;
  q = q * t - 6.132713321e-04f;
  q = q * t - 6.135792491e-03f;
  q = q * t + 1.442172647e-02f;
  q = q * t - 2.142732755e-03f;
  q = q * t - 4.971945620e-02f;
  q = q * t + 1.148411284e-01f;
  q = q * t - 1.307674025e-01f;
  q = q * t + 8.047224985e-02f;
  q = q * t + 9.784437331e-01f;
  const $F u = ax - 3.125f;
  $F w = -9.872205327e-05f * u + 2.957827854e-04f;
  w = w * u - 4.613339754e-04f;
  w = w * u + 5.634320229e-04f;
  w = w * u - 5.551343299e-04f;
  w = w * u + 4.024605390e-04f;
  w = w * u - 2.025935778e-04f;
  w = w * u + 6.463804693e-05f;
  w = w * u + 9.999901064e-01f;
  // From 3.92 on erf rounds to 1 (erfc < 2^-25), which the fit only approaches.
  const $F far = copysign(select(select(w, 1.0f, ax >= 3.92f), q, ax < 2.25f), x);
  return select(select(far, near, fabs(x) < 1.0f), x, isnan(x));
)"};

// f64 rint, round, floor and ceil without PoCL's builtins for double, whose calls keep a kernel
// from vectorising (a molecular-dynamics kernel ran 2.5x slower with them). Adding and subtracting
// 2^52 rounds |x| < 2^52 to the nearest integer, halves to even; larger magnitudes, infinities
// and NaN are integers or unrounded already. The sign goes back on by bits, so -0.0, and results
// of zero from negative inputs, keep theirs. Exact for every input.
constexpr const char* kRoundingF64 = R"(static inline double weft_magnitude_f64(double x) {
  return as_double(as_long(x) & 0x7FFFFFFFFFFFFFFFL);
}
static inline double weft_nearest_magnitude_f64(double a) {
  return a < 0x1p52 ? (a + 0x1p52) - 0x1p52 : a;
}
static inline double weft_signed_like_f64(double magnitude, double x) {
  return as_double(as_long(magnitude) | (as_long(x) & (long)0x8000000000000000UL));
}
static inline double weft_rint_f64(double x) {
  return weft_signed_like_f64(weft_nearest_magnitude_f64(weft_magnitude_f64(x)), x);
}
static inline double weft_round_f64(double x) {
  const double a = weft_magnitude_f64(x), r = weft_nearest_magnitude_f64(a);
  return weft_signed_like_f64(a - r == 0.5 ? r + 1.0 : r, x);
}
static inline double weft_floor_f64(double x) {
  const double a = weft_magnitude_f64(x), r = weft_nearest_magnitude_f64(a);
  return weft_signed_like_f64(as_long(x) < 0 ? (r < a ? r + 1.0 : r) : (r > a ? r - 1.0 : r), x);
}
static inline double weft_ceil_f64(double x) {
  const double a = weft_magnitude_f64(x), r = weft_nearest_magnitude_f64(a);
  return weft_signed_like_f64(as_long(x) < 0 ? (r > a ? r - 1.0 : r) : (r < a ? r + 1.0 : r), x);
}
)";

std::string rounding_definitions(DType t) {
  return t == DType::F64 ? kRoundingF64 : "";
}

// Scalar f64 through the helpers above; everything else through the OpenCL builtin.
template <Spelling Name>
std::string rounding(const ElementOp& op, const std::string& a) {
  if (op.dtype == DType::F64 && !op.vector)
    return "weft_" + std::string(Name.text) + "_f64(" + a + ")";
  return builtin<Name>(op, a);
}

// round by its rounding_method: halves away from zero (round) or to even (rint).
std::string round(const ElementOp& op, const std::string& a) {
  if (RoundAttrs::read(op.node.attrs).rounding_method == RoundAttrs::kAwayFromZero)
    return rounding<"round">(op, a);
  return rounding<"rint">(op, a);
}

Lowering rounding_lowering(OpKind kind, UnaryExpr expr) {
  Lowering l = unary(kind, expr);
  l.header = rounding_definitions;
  return l;
}

std::string logical_not(const ElementOp& op, const std::string& a) {
  if (op.dtype == DType::Bool) return "(!" + a + ")";
  return "((" + op.type + ")(~" + a + "))";
}

}  // namespace

void define_unary_lowerings(Lowerings& table) {
  table.add(unary(OpKind::Neg, neg));
  table.add(unary(OpKind::Abs, abs));
  table.add(unary(OpKind::Sign, sign));
  table.add(rounding_lowering(OpKind::Floor, rounding<"floor">));
  table.add(rounding_lowering(OpKind::Ceil, rounding<"ceil">));
  table.add(rounding_lowering(OpKind::Round, round));
  table.add(unary(OpKind::Exp, builtin<"exp">, &kExp));
  table.add(unary(OpKind::Exp2, builtin<"exp2">));
  table.add(unary(OpKind::Log, builtin<"log">, &kLog));
  table.add(unary(OpKind::Log1p, builtin<"log1p">, &kLog1p));
  table.add(unary(OpKind::Expm1, builtin<"expm1">, &kExpm1));
  table.add(unary(OpKind::Sqrt, builtin<"sqrt">));
  table.add(unary(OpKind::Rsqrt, builtin<"rsqrt">));
  table.add(unary(OpKind::Sin, builtin<"sin">, &kSin));
  table.add(unary(OpKind::Cos, builtin<"cos">, &kCos));
  table.add(unary(OpKind::Tan, builtin<"tan">));
  table.add(unary(OpKind::Tanh, builtin<"tanh">, &kTanh));
  table.add(unary(OpKind::Logistic, logistic, &kLogistic));
  table.add(unary(OpKind::Erf, builtin<"erf">, &kErf));
  table.add(unary(OpKind::Not, logical_not));
}

}  // namespace weft::opencl::lowerings
