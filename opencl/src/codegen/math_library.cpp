#include "codegen/math_library.h"

#include <algorithm>
#include <stdexcept>
#include <vector>

#include "codegen/lowering.h"

namespace weft::opencl {
namespace {

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

// any() over 16 lanes: PoCL's any() tests the lanes one by one, each with its own branch, which
// cost more than the exp it guards. Narrowed to 16 bytes (m >> 31 keeps any() meaning "sign bit
// set") and read as two longs, LLVM turns a comparison's mask into vpmovm2b + vptest.
// any() of a mask's lanes (each 0 or -1), narrowed to one byte per lane and tested as one
// integer: 16 lanes are two longs (vpmovm2b + vptest on AVX-512), 8 one long, 4 one int.
std::string any_definition(int width) {
  const std::string n = std::to_string(width);
  const std::string whole = width == 16  ? "long2"
                            : width == 8 ? "long"
                            : width == 4 ? "int"
                                         : "short";
  const std::string test = width == 16 ? "(bytes.x | bytes.y) != 0" : "bytes != 0";
  return "static int weft_any" + n + "(int" + n + " m) {\n  const " + whole + " bytes = as_" +
         whole + "(convert_char" + n + "(m >> 31));\n  return " + test + ";\n}\n";
}

// Functions that no op calls directly, only other functions.
const std::vector<MathFunction>& helpers() {
  static const std::vector<MathFunction> all = {
      {"exp_scaled", {}, kExpScaled},
      {"exp_normal", {}, kExpNormal},
      {"exp_full", {"exp_scaled"}, kExpFull},
  };
  return all;
}

// The order of the ops' functions in a program, after the helpers. The program's text keys the
// persistent cache, so this order stays as it is; a function not listed follows these, in
// OpKind order.
constexpr const char* kDefinitionOrder[] = {"exp",      "log", "log1p", "expm1", "tanh",
                                            "logistic", "erf", "sin",   "cos"};

// Every function in the order definitions() emits them, callees first (checked).
std::vector<const MathFunction*> build_definition_order() {
  std::vector<const MathFunction*> ops;
  for (int k = 0; k < kNumOpKinds; ++k)
    if (const MathFunction* f = lowering(static_cast<OpKind>(k)).math) ops.push_back(f);
  std::vector<const MathFunction*> order;
  for (const MathFunction& f : helpers()) order.push_back(&f);
  for (const char* name : kDefinitionOrder)
    for (const MathFunction* f : ops)
      if (std::string(f->name) == name) order.push_back(f);
  for (const MathFunction* f : ops)
    if (std::find(order.begin(), order.end(), f) == order.end()) order.push_back(f);
  for (auto f = order.begin(); f != order.end(); ++f)
    for (const char* callee : (*f)->calls)
      if (std::none_of(order.begin(), f,
                       [&](const MathFunction* g) { return std::string(g->name) == callee; }))
        throw std::logic_error("math library: " + std::string((*f)->name) + " calls " + callee +
                               ", which is not defined before it");
  return order;
}

const std::vector<const MathFunction*>& definition_order() {
  static const std::vector<const MathFunction*> order = build_definition_order();
  return order;
}

const MathFunction& find(const std::string& name) {
  for (const MathFunction* f : definition_order())
    if (name == f->name) return *f;
  throw std::logic_error("math library: no function " + name);
}

std::string suffix(int width) {
  return width == 1 ? "f32" : "f32x" + std::to_string(width);
}

void replace_all(std::string& s, const std::string& from, const std::string& to) {
  for (std::size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size()))
    s.replace(at, from.size(), to);
}

std::string instantiate(const MathFunction& f, int width) {
  const std::string n = width == 1 ? "" : std::to_string(width);
  const std::string s = suffix(width);
  std::string text = "static $F weft_" + std::string(f.name) + "_$S($F x) {" + f.body + "}\n";
  replace_all(text, "$CORE", kExpCore);
  // $ANY first: its argument is rewritten before the other placeholders.
  for (std::size_t at = text.find("$ANY("); at != std::string::npos; at = text.find("$ANY(")) {
    const std::size_t close = text.find(')', at);
    const std::string arg = text.substr(at + 5, close - at - 5);
    text.replace(at, close - at + 1,
                 width == 1 ? "(" + arg + ")" : "weft_any" + n + "(" + arg + ")");
  }
  replace_all(text, "$F", "float" + n);
  replace_all(text, "$I", "int" + n);
  replace_all(text, "$N", n);
  replace_all(text, "$S", s);
  return text;
}

}  // namespace

std::string MathFunctions::call(const MathFunction& f, int width, const std::string& arg) {
  if (width != 1 && width != 2 && width != 4 && width != 8 && width != 16)
    throw std::logic_error("math library: " + std::string(f.name) + " called " +
                           std::to_string(width) + " lanes wide (1, 2, 4, 8 or 16 only)");
  used_.insert({f.name, width});
  return "weft_" + std::string(f.name) + "_" + suffix(width) + "(" + arg + ")";
}

std::string MathFunctions::definitions() const {
  // Close over callees, then emit in definition order (callees first).
  std::set<std::pair<std::string, int>> needed;
  std::vector<std::pair<std::string, int>> work(used_.begin(), used_.end());
  while (!work.empty()) {
    auto item = work.back();
    work.pop_back();
    if (!needed.insert(item).second) continue;
    for (const char* callee : find(item.first).calls) work.push_back({callee, item.second});
  }
  std::set<int> widths;
  for (const auto& item : needed) widths.insert(item.second);
  std::string out;
  for (const MathFunction* f : definition_order())
    for (int width : widths)
      if (needed.count({f->name, width})) out += instantiate(*f, width);
  std::string any;
  for (int width : widths)
    if (width > 1 && out.find("weft_any" + std::to_string(width) + "(") != std::string::npos)
      any += any_definition(width);
  return any + out;
}

}  // namespace weft::opencl
