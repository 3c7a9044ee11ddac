// Forward-mode differentiation: jvp(f, primals, tangents) evaluates f at `primals` and its
// directional derivative along `tangents` (a Jacobian-vector product) in one pass.
//
//   auto [y, dy] = weft::jvp(f, {x}, {dx});
//
// f is traced once into IR (as jit traces it) and the derivative is built from that graph, so
// it composes with jit (inside a jitted function it is staged like any op; outside one it runs
// as one compiled program) and with itself. Values f closes over are constants: their tangents
// are zero. Integer and bool values have zero tangents (pass any array of the primal's dtype
// and shape, or use zeros_like). Host callbacks see primal values only, once each; a host
// `call` whose argument has a non-zero tangent raises TransformError (wrap it in custom_jvp).
#pragma once

#include <functional>
#include <source_location>
#include <vector>

#include "weft/array.h"

namespace weft {

using ArrayFunction = std::function<std::vector<Array>(const std::vector<Array>&)>;

struct JvpResult {
  std::vector<Array> primals_out;
  std::vector<Array> tangents_out;
};

// Tangents must match the primals one to one in dtype and shape (ShapeError/DTypeError name the
// argument otherwise).
JvpResult jvp(const ArrayFunction& f, const std::vector<Array>& primals,
              const std::vector<Array>& tangents,
              std::source_location loc = std::source_location::current());

struct LinearizeResult {
  std::vector<Array> primals_out;
  // Tangents (one per primal, its dtype and shape) to the outputs' tangents: f's Jacobian at
  // the primals applied to them, without recomputing f. Call it in the context linearize was
  // called in: eagerly after an eager linearize, or inside the same trace.
  ArrayFunction jvp;
};

// f evaluated at `primals` and linearized there (as jax.linearize): the forward pass runs
// once; each call of `jvp` runs only its linear part.
LinearizeResult linearize(const ArrayFunction& f, const std::vector<Array>& primals,
                          std::source_location loc = std::source_location::current());

// One argument, one result.
std::pair<Array, Array> jvp(const std::function<Array(const Array&)>& f, const Array& primal,
                            const Array& tangent,
                            std::source_location loc = std::source_location::current());

}  // namespace weft
