#include "transforms/linearize.h"

#include <algorithm>

#include "trace/array_impl.h"
#include "transforms/jvp_graph.h"
#include "transforms/staging.h"
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
  state.transformed = true;  // a custom_vjp's linear part is staged here as a custom_lin
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

std::shared_ptr<Linearized> linearize_function(
    const std::function<std::vector<Array>(const std::vector<Array>&)>& f,
    const std::vector<Array>& primals, const std::string& api, const std::source_location& loc) {
  auto lin = std::make_shared<Linearized>();
  const bool eager = !tracing_active();
  std::size_t outputs = 0;
  std::vector<Array> flat = stage_or_run(api, loc, [&] {
    const TracedRegion traced = trace_for_transform(api, f, primals, loc);
    std::vector<Array> all = primals;
    all.insert(all.end(), traced.captured.begin(), traced.captured.end());
    std::vector<bool> flags(all.size(), false);
    std::fill(flags.begin(), flags.begin() + static_cast<std::ptrdiff_t>(primals.size()), true);
    *lin = linearize_graph(traced.graph, all, flags, api, loc);
    outputs = lin->primals_out.size();
    // Eagerly the residuals are values of this program: they come out with the results.
    std::vector<Array> out = lin->primals_out;
    out.insert(out.end(), lin->residuals.begin(), lin->residuals.end());
    return out;
  });
  lin->primals_out.assign(flat.begin(), flat.begin() + static_cast<std::ptrdiff_t>(outputs));
  if (eager) lin->residuals.assign(flat.begin() + static_cast<std::ptrdiff_t>(outputs), flat.end());
  return lin;
}

}  // namespace weft::detail
