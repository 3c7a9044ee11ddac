// Jacobians and Hessians from jvp, vjp and vmap (as JAX builds them):
//
//   auto J = weft::jacfwd(f)({x});     // forward mode: one jvp per input element, vmapped
//   auto J = weft::jacrev(f)({x});     // reverse mode: one pullback per output element, vmapped
//   auto H = weft::hessian(f)({x});    // jacfwd of jacrev
//
// For output k and differentiated argument i the Jacobian has shape out_k.shape + arg_i.shape;
// the result lists them output by output, argument by argument (argnums order). Each is one
// program when called eagerly, and composes with jit, vmap and the other transformations.
#pragma once

#include <source_location>
#include <vector>

#include "weft/transforms/jvp.h"

namespace weft {

struct JacobianOptions {
  std::vector<int> argnums = {0};  // the arguments to differentiate with respect to
};

ArrayFunction jacfwd(ArrayFunction f, JacobianOptions options = {},
                     std::source_location loc = std::source_location::current());
ArrayFunction jacrev(ArrayFunction f, JacobianOptions options = {},
                     std::source_location loc = std::source_location::current());
// The second derivatives of f's outputs: jacfwd(jacrev(f)).
ArrayFunction hessian(ArrayFunction f, JacobianOptions options = {},
                      std::source_location loc = std::source_location::current());

}  // namespace weft
