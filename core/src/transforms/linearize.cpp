#include "transforms/linearize.h"

#include "trace/array_impl.h"
#include "transforms/jvp_graph.h"
#include "weft/trace/trace.h"

namespace weft::detail {

Linearized linearize_graph(const Graph& g, std::span<const Array> primals,
                           const std::vector<bool>& differentiable, const std::string& api,
                           const std::source_location& loc) {
  Linearized out;
  TraceScope scope("the linear part of " + api, loc);
  TraceState& state = *scope.state();
  state.region = true;  // primal values it uses become residual parameters
  state.api = api;
  state.graph.name = "linear";
  state.transformed = true;  // a custom_vjp's linear part is staged here as a custom_call
  std::vector<Tangent> tangents(primals.size());
  for (std::size_t i = 0; i < primals.size(); ++i) {
    if (!differentiable[i] || !has_tangent(primals[i].dtype())) continue;
    tangents[i] = scope.add_parameter({primals[i].dtype(), primals[i].shape()});
    ++out.tangent_params;
  }
  JvpValues values = jvp_graph(g, primals, tangents, PrimalPlacement::enclosing_trace, api, loc);
  for (std::size_t k = 0; k < values.primals.size(); ++k) {
    const Array tangent =
        values.tangents[k] ? *values.tangents[k] : zeros_like_value(values.primals[k], loc);
    state.graph.outputs.push_back(lift(state, tangent, loc));
  }
  out.primals_out = std::move(values.primals);
  out.linear = state.graph.canonicalized();
  out.residuals = state.captured;
  return out;
}

}  // namespace weft::detail
