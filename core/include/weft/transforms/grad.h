// Reverse-mode differentiation: vjp, grad and value_and_grad.
//
//   auto df = weft::grad([](const Array& x) { return lax::reduce_sum(x * x, {0}); });
//   Array g = df(x);                                   // 2 x
//   auto [y, pullback] = weft::vjp(f, {x});            // pullback({ct}) -> {ct · df/dx}
//
// f is traced once per call into IR; the derivative is its forward part followed by the
// transpose of its linear part, one program: staged into the enclosing trace inside jit (or
// another transformation), compiled and run as one program when called eagerly. Values f
// closes over are constants. Integer and bool arguments get zero gradients. Host callbacks in
// f run once, on primal values, in the forward part; a host `call` on a differentiated value
// raises TransformError (wrap it in custom_vjp).
#pragma once

#include <functional>
#include <source_location>
#include <vector>

#include "weft/array.h"
#include "weft/transforms/jvp.h"

namespace weft {

struct VjpResult {
  std::vector<Array> primals_out;
  // Output cotangents (one per output, its dtype and shape) to input cotangents (one per
  // primal). Call it in the context vjp was called in: eagerly after an eager vjp, or inside
  // the same trace.
  ArrayFunction pullback;
};

VjpResult vjp(const ArrayFunction& f, const std::vector<Array>& primals,
              std::source_location loc = std::source_location::current());

struct GradOptions {
  std::vector<int> argnums = {0};  // the arguments to differentiate with respect to
  bool has_aux = false;  // f returns its value first, then auxiliary outputs passed through
};

// A function of f's arguments returning the gradient of f's first output (a float scalar)
// with respect to each argument in argnums, then (has_aux) f's other outputs.
ArrayFunction grad(ArrayFunction f, GradOptions options = {},
                   std::source_location loc = std::source_location::current());

// The same, returning f's value first.
ArrayFunction value_and_grad(ArrayFunction f, GradOptions options = {},
                             std::source_location loc = std::source_location::current());

// One argument, one scalar result.
std::function<Array(const Array&)> grad(std::function<Array(const Array&)> f,
                                        std::source_location loc = std::source_location::current());

}  // namespace weft
