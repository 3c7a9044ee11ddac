// Reverse mode in two steps over a traced graph. linearize: forward mode with the primal ops
// staged into the current context and the tangent ops traced into a separate linear graph
// (its residual inputs are primal values). transpose: the linear graph run backwards, from
// output cotangents to input cotangents, staged into the current context.
#pragma once

#include <functional>
#include <memory>
#include <source_location>
#include <span>
#include <string>
#include <vector>

#include "transforms/jvp_rules.h"
#include "weft/ir/graph.h"

namespace weft::detail {

struct Linearized {
  std::vector<Array> primals_out;
  // Parameters: one tangent per entry of `primals` with `differentiable` set (in order), then
  // the residuals. Outputs: the tangents of the outputs (zeros where they are constant).
  Graph linear;
  std::size_t tangent_params = 0;
  std::vector<Array> residuals;
};

Linearized linearize_graph(const Graph& g, std::span<const Array> primals,
                           const std::vector<bool>& differentiable, const std::string& api,
                           const std::source_location& loc);

// `f` traced and linearized at `primals` (all differentiable; closed-over values are not), staged
// into the current trace or run eagerly as one program (`api` names it). Eagerly the residuals
// are values the run computed.
std::shared_ptr<Linearized> linearize_function(
    const std::function<std::vector<Array>(const std::vector<Array>&)>& f,
    const std::vector<Array>& primals, const std::string& api, const std::source_location& loc);

// Cotangents of the parameters of `g` marked in `linear_params` (nullopt: zero), in order, from
// those of its outputs. `nonlinear_args` binds the other parameters, in order.
std::vector<Tangent> transpose_graph(const Graph& g, const std::vector<bool>& linear_params,
                                     std::span<const Array> nonlinear_args,
                                     std::span<const Tangent> output_cotangents,
                                     const std::string& api, const std::source_location& loc);

// Cotangents of the linear graph's tangent parameters (nullopt: zero) from those of its
// outputs (nullopt: zero).
std::vector<Tangent> transpose_graph(const Linearized& linearized,
                                     std::span<const Tangent> output_cotangents,
                                     const std::string& api, const std::source_location& loc);

}  // namespace weft::detail
