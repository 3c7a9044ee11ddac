// weft's own f32 transcendental functions for generated kernels: range reduction and
// polynomials written with selects instead of branches, so that a kernel computing 16 lanes
// at once (or PoCL's vectoriser across work-items) runs them as vector code, where a driver's
// builtin `exp` or `tanh` is a scalar call per element on CPUs. Accuracy bounds (ulp against
// the correctly rounded result, the whole f32 range) are stated in docs/math.md and checked by
// tests/math_accuracy_test.cpp. Each op's function is written beside its emitter
// (codegen/lowerings/unary.cpp); the helpers several of them share are in math_library.cpp.
#pragma once

#include <set>
#include <string>
#include <utility>
#include <vector>

namespace weft::opencl {

// One function, written once for any width: in `body`, $F is the float type (float, float16),
// $I the int type of the same width, $N the width suffix of conversions ("", "8", "16"), $S
// the name suffix (f32, f32x8, f32x16), $ANY(c) whether any lane of c is set and $CORE exp's
// reduction and polynomial (math_library.cpp). Comparisons give 1 per true scalar and -1 per true
// lane, and select() takes either, so selects replace every branch; only sin/cos keep one, around
// the driver's call for huge arguments. The body sees its argument as `x`.
struct MathFunction {
  const char* name;                // defined as weft_<name>_<suffix>
  std::vector<const char*> calls;  // helpers and functions the body uses, defined before it
  std::string body;
};

class MathFunctions {
 public:
  // A call of `f` on `arg`, `width` lanes wide (1, 2, 4, 8 or 16); records it for definitions().
  std::string call(const MathFunction& f, int width, const std::string& arg);
  // The OpenCL C definitions of every function called so far and those they call, in an order
  // that defines each before its first use. Empty when none was called.
  std::string definitions() const;

 private:
  std::set<std::pair<std::string, int>> used_;  // (function, width)
};

}  // namespace weft::opencl
