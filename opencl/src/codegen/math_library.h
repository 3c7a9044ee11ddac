// weft's own f32 transcendental functions for generated kernels: range reduction and
// polynomials written with selects instead of branches, so that a kernel computing 16 lanes
// at once (or PoCL's vectoriser across work-items) runs them as vector code, where a driver's
// builtin `exp` or `tanh` is a scalar call per element on CPUs. Accuracy bounds (ulp against
// the correctly rounded result, the whole f32 range) are stated in docs/math.md and checked by
// tests/opencl/math_accuracy_test.cpp.
#pragma once

#include <set>
#include <string>
#include <utility>

#include "weft/ir/op_kind.h"

namespace weft::opencl {

class MathFunctions {
 public:
  // Whether weft has its own f32 implementation of `op`.
  static bool provides(OpKind op);
  // A call of weft's `op` on `arg`, `width` lanes wide (1 or 16); records it for definitions().
  std::string call(OpKind op, int width, const std::string& arg);
  // The OpenCL C definitions of every function called so far and those they call, in an order
  // that defines each before its first use. Empty when none was called.
  std::string definitions() const;

 private:
  std::set<std::pair<std::string, int>> used_;  // (function, width)
};

}  // namespace weft::opencl
