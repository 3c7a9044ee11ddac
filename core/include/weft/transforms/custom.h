// User-defined derivatives and rematerialisation (after jax.custom_jvp, jax.custom_vjp and
// jax.checkpoint):
//
//   auto f = weft::custom_jvp(f_impl, [](const auto& primals, const auto& tangents) {
//     return weft::JvpResult{f_impl(primals), {my_tangent(primals, tangents)}};
//   });
//   auto g = weft::custom_vjp(g_impl, fwd, bwd);  // fwd: outputs + residuals; bwd: cotangents
//   auto h = weft::checkpoint(h_impl);            // grad recomputes h's values in its backward
//   pass
//
// Called outside any transformation, each is its function. Under jvp/grad/vmap it is one op of
// the traced graph with its rules: jvp and grad (through its linearisation) call the custom_jvp
// rule, grad calls fwd in its forward part and bwd in its backward part, and checkpoint's values
// are recomputed in the backward part rather than stored (a callback inside runs again there,
// as JAX's host_callback documentation shows). vmap batches the function and its rules together.
//
// The rules get the function's arguments (not the values it closes over: those are constants
// to its derivative; a closed-over value that is being differentiated or batched raises
// TransformError, pass it as an argument instead). A custom_vjp function has no forward-mode
// derivative (jvp of it raises TransformError, as in JAX); a custom_jvp function is
// differentiable in reverse mode when its rule's tangents are linear in the input tangents.
#pragma once

#include <functional>
#include <source_location>
#include <vector>

#include "weft/transforms/jvp.h"

namespace weft {

// (primals, tangents) -> {f's outputs, their tangents}; one tangent per primal (zeros for
// integer and bool primals), one output tangent per output.
using CustomJvpRule =
    std::function<JvpResult(const std::vector<Array>& primals, const std::vector<Array>& tangents)>;

struct CustomVjpForward {
  std::vector<Array> outputs;    // f's outputs
  std::vector<Array> residuals;  // whatever bwd needs (may be empty)
};
using CustomVjpForwardRule = std::function<CustomVjpForward(const std::vector<Array>& primals)>;
// (residuals, one cotangent per output) -> one cotangent per argument (zeros for integer ones).
using CustomVjpBackwardRule = std::function<std::vector<Array>(
    const std::vector<Array>& residuals, const std::vector<Array>& cotangents)>;

ArrayFunction custom_jvp(ArrayFunction f, CustomJvpRule rule,
                         std::source_location loc = std::source_location::current());

ArrayFunction custom_vjp(ArrayFunction f, CustomVjpForwardRule fwd, CustomVjpBackwardRule bwd,
                         std::source_location loc = std::source_location::current());

ArrayFunction checkpoint(ArrayFunction f,
                         std::source_location loc = std::source_location::current());

}  // namespace weft
