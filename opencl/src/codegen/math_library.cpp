#include "codegen/math_library.h"

#include <stdexcept>
#include <vector>

namespace weft::opencl {
namespace {

// Each function is written once, for any width: $F is the float type (float, float16), $I the
// int type of the same width, $N the width suffix of conversions ("" or "16"), $S the name
// suffix (f32, f32x16) and $ANY(c) whether any lane of c is set. Comparisons give 1 per true
// scalar and -1 per true lane, and select() takes either, so selects replace every branch;
// only sin/cos keep one, around the driver's call for huge arguments.
struct Template {
  OpKind op;  // Constant for helpers that no op calls directly
  const char* name;
  std::vector<const char*> calls;  // helpers and functions the body uses, defined before it
  const char* body;
};

// e^x = 2^n e^r with r = x - n ln2 in [-ln2/2, ln2/2] (ln2 in two parts, Cody and Waite) and
// e^r by Cephes' polynomial. n is rounded by adding 1.5 * 2^23, which leaves it in the low bits
// (the driver's rint is a call on some CPUs). While every lane has |x| < 87, 2^n is added to
// the exponent field directly; otherwise (overflow, denormal results, infinities, NaN) the
// lanes take the full version, which applies 2^n as two factors.
constexpr const char* kExpCore = R"(
  const $F shifted = x * 1.44269504088896341f + 12582912.0f;
  const $F n = shifted - 12582912.0f;
  $F r = x - n * 0.693359375f;
  r = r - n * -2.12194440e-4f;
  const $F z = r * r;
  $F p = 1.9875691500e-4f * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * z + r + 1.0f;
  const $I ni = as_int$N(shifted) - 0x4b400000;
)";

constexpr const char* kExpFull = R"(
  const $F xc = fmin(fmax(x, -104.0f), 89.0f);
  return select(weft_exp_scaled_$S(xc), x, isnan(x));
)";

constexpr const char* kExpScaled = R"($CORE
  const $I n1 = ni >> 1;
  const $I n2 = ni - n1;
  return p * as_float$N((n1 + 127) << 23) * as_float$N((n2 + 127) << 23);
)";

// |x| < 87 in every lane (tanh calls it with [0, 18]).
constexpr const char* kExpNormal = R"($CORE
  return as_float$N(as_int$N(p) + (ni << 23));
)";

constexpr const char* kExp = R"(
  if ($ANY(!(fabs(x) < 87.0f))) return weft_exp_full_$S(x);
  return weft_exp_normal_$S(x);
)";

// x = m 2^e with m in [sqrt(1/2), sqrt(2)); log x = e ln2 + log m, log m = m - m^2/2 + m^3 P(m)
// (Cephes' coefficients). Denormals are scaled by 2^23 first.
constexpr const char* kLog = R"(
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
)";

// log(u) for u = 1 + x, corrected by what rounding u lost: log1p x = log u + (x - (u - 1)) / u.
constexpr const char* kLog1p = R"(
  const $F u = 1.0f + x;
  const $F c = (x - (u - 1.0f)) / u;
  const $F r = weft_log_$S(u) + select(c, ($F)(0.0f), isinf(u) | (u == 0.0f));
  return select(r, x, x == 0.0f);
)";

// e^x - 1 = 2 (2^(n-1) em1(r) + 2^(n-1) - 1/2), em1(r) = e^r - 1 by its Taylor series to r^8
// (|r| <= ln2/2: under 0.2 ulp), exact for n = 0 where cancellation would hurt.
constexpr const char* kExpm1 = R"(
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
)";

// tanh: x + x^3 P(x^2) below 0.625 (Cephes), else 1 - 2 / (e^(2|x|) + 1); both on |x|, then
// x's sign, which keeps -0. |x| is clamped at 9.5, where 1 - 2 / (e^(2|x|) + 1) rounds to 1 as
// tanh does from 9.0115 on.
constexpr const char* kTanh = R"(
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
)";

// 1 / (1 + e) for x >= 0 and e / (1 + e) below, from e = e^-|x| (never overflows; results keep
// their precision down to the denormals). Rounding e, 1 + e and the quotient one after the other
// compounds to 2 ulp, and to 3 where a driver's division is not correctly rounded (an NVIDIA
// GPU's at x = -8.4605), so no step's error is left to compound: e comes as e + el from exp's
// reduction and polynomial with their rounding errors kept (error-free sums), 1 + e as d + dl,
// and the quotient from any reciprocal is corrected once by its residual (exact with fma). That
// stays within 1 ulp whatever the division's rounding and wherever a driver contracts a * b + c.
// Past |x| = 87 (e tiny: the result is e^x, or 1), infinities and NaN take a second path.
constexpr const char* kLogistic = R"(
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
)";

// erf: x + x R(x^2) below 1; polynomials in |x| - 1.625 on [1, 2.25) and in |x| - 3.125 on
// [2.25, 4]; |x| is clamped at 4, and from 3.92 on the result is 1, as erf rounds there.
// Coefficients: least-squares fits made by tools/oracles/erf_fit.py.
constexpr const char* kErf = R"(
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
)";

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

constexpr const char* kSinTail = R"(
  const $I use_cos = (j == 2) | (j == 6);
  $F v = select(s, c, use_cos);
  v = select(v, -v, j > 3);
  // sin is odd: x's sign bit flips the result's (-0 included).
  v = as_float$N(as_int$N(v) ^ (as_int$N(x) & (int)0x80000000));
  const $I huge = !(ax <= 6433.0f) & !isnan(x);
  if ($ANY(huge)) v = select(v, sin(x), huge);
  return v;
)";

constexpr const char* kCosTail = R"(
  const $I use_sin = (j == 2) | (j == 6);
  const $I negate = (j == 2) | (j == 4);
  $F v = select(c, s, use_sin);
  v = select(v, -v, negate);
  const $I huge = !(ax <= 6433.0f) & !isnan(x);
  if ($ANY(huge)) v = select(v, cos(x), huge);
  return v;
)";

// any() over 16 lanes: PoCL's any() tests the lanes one by one, each with its own branch, which
// cost more than the exp it guards. Narrowed to 16 bytes (m >> 31 keeps any() meaning "sign bit
// set") and read as two longs, LLVM turns a comparison's mask into vpmovm2b + vptest.
constexpr const char* kAny16 = R"(static int weft_any16(int16 m) {
  const long2 bytes = as_long2(convert_char16(m >> 31));
  return (bytes.x | bytes.y) != 0;
}
)";

const std::vector<Template>& templates() {
  // Callees before callers: definitions() emits them in this order.
  static const std::vector<Template> all = {
      {OpKind::Constant, "exp_scaled", {}, kExpScaled},
      {OpKind::Constant, "exp_normal", {}, kExpNormal},
      {OpKind::Constant, "exp_full", {"exp_scaled"}, kExpFull},
      {OpKind::Exp, "exp", {"exp_full", "exp_normal"}, kExp},
      {OpKind::Log, "log", {}, kLog},
      {OpKind::Log1p, "log1p", {"log"}, kLog1p},
      {OpKind::Expm1, "expm1", {}, kExpm1},
      {OpKind::Tanh, "tanh", {"exp_normal"}, kTanh},
      {OpKind::Logistic, "logistic", {"exp"}, kLogistic},
      {OpKind::Erf, "erf", {}, kErf},
      {OpKind::Sin, "sin", {}, nullptr},
      {OpKind::Cos, "cos", {}, nullptr},
  };
  return all;
}

const Template* find(OpKind op) {
  if (op == OpKind::Constant) return nullptr;
  for (const Template& t : templates())
    if (t.op == op) return &t;
  return nullptr;
}

const Template& find(const std::string& name) {
  for (const Template& t : templates())
    if (name == t.name) return t;
  throw std::logic_error("math library: no function " + name);
}

std::string suffix(int width) {
  return width == 1 ? "f32" : "f32x" + std::to_string(width);
}

void replace_all(std::string& s, const std::string& from, const std::string& to) {
  for (std::size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size()))
    s.replace(at, from.size(), to);
}

std::string instantiate(const Template& t, int width) {
  std::string body = t.body                ? t.body
                     : t.op == OpKind::Sin ? std::string(kSinCosReduce) + kSinTail
                                           : std::string(kSinCosReduce) + kCosTail;
  const std::string n = width == 1 ? "" : std::to_string(width);
  const std::string s = suffix(width);
  std::string text = "static $F weft_" + std::string(t.name) + "_$S($F x) {" + body + "}\n";
  replace_all(text, "$CORE", kExpCore);
  // $ANY first: its argument is rewritten before the other placeholders.
  for (std::size_t at = text.find("$ANY("); at != std::string::npos; at = text.find("$ANY(")) {
    const std::size_t close = text.find(')', at);
    const std::string arg = text.substr(at + 5, close - at - 5);
    text.replace(at, close - at + 1, width == 1 ? "(" + arg + ")" : "weft_any16(" + arg + ")");
  }
  replace_all(text, "$F", "float" + n);
  replace_all(text, "$I", "int" + n);
  replace_all(text, "$N", n);
  replace_all(text, "$S", s);
  return text;
}

}  // namespace

bool MathFunctions::provides(OpKind op) {
  return find(op) != nullptr;
}

std::string MathFunctions::call(OpKind op, int width, const std::string& arg) {
  const Template* t = find(op);
  used_.insert({t->name, width});
  return "weft_" + std::string(t->name) + "_" + suffix(width) + "(" + arg + ")";
}

std::string MathFunctions::definitions() const {
  // Close over callees, then emit in the table's order (callees first).
  std::set<std::pair<std::string, int>> needed;
  std::vector<std::pair<std::string, int>> work(used_.begin(), used_.end());
  while (!work.empty()) {
    auto item = work.back();
    work.pop_back();
    if (!needed.insert(item).second) continue;
    for (const char* callee : find(item.first).calls) work.push_back({callee, item.second});
  }
  std::string out;
  for (const Template& t : templates())
    for (int width : {1, 16})
      if (needed.count({t.name, width})) out += instantiate(t, width);
  if (out.find("weft_any16(") != std::string::npos) out = std::string(kAny16) + out;
  return out;
}

}  // namespace weft::opencl
