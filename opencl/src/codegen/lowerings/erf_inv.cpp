// erf_inv's OpenCL C. In f32, XLA's function (Giles' single-precision polynomial in
// w = -log1p(-x^2), +-inf at +-1), as weft's own math function, or with the driver's log1p
// where the device uses its builtin math; in f64, that start refined by Newton's method on
// erf and erfc, as the reference interpreter computes it.
#include <string>

#include "codegen/lowerings/families.h"
#include "weft/error.h"

namespace weft::opencl::lowerings {
namespace {

// $F, $I, $S and $N as in math_library.h; `$LOG1P(` is the log1p it calls.
constexpr const char* kErfInvBody = R"(
  const $F w0 = -$LOG1P(-x * x);
  const $I small = w0 < 5.0f;
  const $F w = select(sqrt(w0) - 3.0f, w0 - 2.5f, small);
  $F p = select(($F)(-0.000200214257f), ($F)(2.81022636e-08f), small);
  p = select(($F)(0.000100950558f), ($F)(3.43273939e-07f), small) + p * w;
  p = select(($F)(0.00134934322f), ($F)(-3.5233877e-06f), small) + p * w;
  p = select(($F)(-0.00367342844f), ($F)(-4.39150654e-06f), small) + p * w;
  p = select(($F)(0.00573950773f), ($F)(0.00021858087f), small) + p * w;
  p = select(($F)(-0.0076224613f), ($F)(-0.00125372503f), small) + p * w;
  p = select(($F)(0.00943887047f), ($F)(-0.00417768164f), small) + p * w;
  p = select(($F)(1.00167406f), ($F)(0.246640727f), small) + p * w;
  p = select(($F)(2.83297682f), ($F)(1.50140941f), small) + p * w;
  return select(p * x, x * INFINITY, fabs(x) == 1.0f);
)";

std::string replaced(std::string s, const std::string& from, const std::string& to) {
  for (std::size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size()))
    s.replace(at, from.size(), to);
  return s;
}

std::string weft_math_body() {
  return replaced(kErfInvBody, "$LOG1P(", "weft_log1p_$S(");
}
const MathFunction kErfInv{"erf_inv", {"log1p"}, weft_math_body()};

// The same function with the driver's log1p, for one lane and for 16.
std::string builtin_f32_definition(int width) {
  const std::string w = width == 1 ? "" : std::to_string(width);
  std::string body = replaced(kErfInvBody, "$LOG1P(", "log1p(");
  body = replaced(body, "$F", "float" + w);
  body = replaced(body, "$I", "int" + w);
  return "static float" + w + " weft_erf_inv_builtin_f32" + (width == 1 ? "" : "x" + w) + "(float" +
         w + " x) {" + body + "}\n";
}

// Giles' start in double, then Newton on erf(y) = |x| (or on log erfc(y) = log(1 - |x|) where
// erf is within 1/2 of 1), as the reference interpreter computes it.
constexpr const char* kErfInvF64 = R"(static double weft_erf_inv_f64(double x) {
  const double a = fabs(x);
  if (isnan(x) || a == 0.0) return x;
  if (a > 1.0) return (double)NAN;
  if (a == 1.0) return copysign((double)INFINITY, x);
  double w = -log((1.0 - a) * (1.0 + a));
  double p;
  if (w < 5.0) {
    w = w - 2.5;
    p = 2.81022636e-08;
    p = 3.43273939e-07 + p * w;
    p = -3.5233877e-06 + p * w;
    p = -4.39150654e-06 + p * w;
    p = 0.00021858087 + p * w;
    p = -0.00125372503 + p * w;
    p = -0.00417768164 + p * w;
    p = 0.246640727 + p * w;
    p = 1.50140941 + p * w;
  } else {
    w = sqrt(w) - 3.0;
    p = -0.000200214257;
    p = 0.000100950558 + p * w;
    p = 0.00134934322 + p * w;
    p = -0.00367342844 + p * w;
    p = 0.00573950773 + p * w;
    p = -0.0076224613 + p * w;
    p = 0.00943887047 + p * w;
    p = 1.00167406 + p * w;
    p = 2.83297682 + p * w;
  }
  double y = p * a;
  if (a < 0.5) {
    for (int step = 0; step < 3; ++step)
      y = y - (erf(y) - a) / (1.1283791670955126 * exp(-y * y));
  } else {
    const double log_target = log(1.0 - a);
    for (int step = 0; step < 5; ++step) {
      const double e = erfc(y);
      y = y + (log(e) - log_target) * e / (1.1283791670955126 * exp(-y * y));
    }
  }
  return copysign(y, x);
}
)";

std::string erf_inv_definitions(DType t) {
  if (t == DType::F64) return kErfInvF64;
  // f16 and bf16 compute in float.
  if (t == DType::F32 || is_half_float(t))
    return builtin_f32_definition(1) + builtin_f32_definition(16);
  return "";
}

// Used for f64, and for f32 where the device uses its builtin math.
std::string erf_inv(const ElementOp& op, const std::string& a) {
  if (op.dtype == DType::F64) return "weft_erf_inv_f64(" + a + ")";
  if (!op.vector) return "weft_erf_inv_builtin_f32(" + a + ")";
  if (op.width != 16)
    throw Error("codegen: erf_inv has no " + std::to_string(op.width) +
                "-lane builtin version; this is a bug in weft, please report it");
  return "weft_erf_inv_builtin_f32x16(" + a + ")";
}

}  // namespace

void define_erf_inv_lowering(Lowerings& table) {
  Lowering l = unary(OpKind::ErfInv, erf_inv, &kErfInv);
  l.header = erf_inv_definitions;
  table.add(l);
}

}  // namespace weft::opencl::lowerings
