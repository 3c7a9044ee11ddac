// What every transformation shares: tracing the user's function into a graph, re-applying a
// node of that graph to new operands in the current context, and running a transformed
// computation as one compiled program when no trace is active.
#pragma once

#include <functional>
#include <source_location>
#include <span>
#include <string>
#include <vector>

#include "weft/array.h"
#include "weft/ir/graph.h"
#include "weft/trace/trace.h"

namespace weft::detail {

// Traces `f` on tracers of `args`' types as a region: closed-over values (enclosing tracers,
// concrete arrays) become trailing parameters, listed in `captured`. `api` names the
// transformation in errors ("jvp").
TracedRegion trace_for_transform(
    const std::string& api, const std::function<std::vector<Array>(const std::vector<Array>&)>& f,
    std::span<const Array> args, const std::source_location& loc);

// The same on parameters of the given types (vmap traces f on one example's shapes).
TracedRegion trace_for_transform(
    const std::string& api, const std::function<std::vector<Array>(const std::vector<Array>&)>& f,
    std::span<const TensorType> types, const std::source_location& loc);

// Inside a trace, calls `fn` (its ops are staged there). Outside, traces `fn` into one program
// and runs it on its arrays' device with this thread's effect tokens, so a transformed function
// called eagerly costs one compile and one dispatch, and its callbacks keep program order.
std::vector<Array> stage_or_run(const std::string& api, const std::source_location& loc,
                                const std::function<std::vector<Array>()>& fn);

// Applies node `n` of `g` to `operands` in the current context: staged into the current trace,
// or run eagerly. Returns its results (one for a value node, one per result for control and
// host nodes). Host nodes take their callback from g.callbacks.
std::vector<Array> apply_node(const Graph& g, const Node& n, std::span<const Array> operands,
                              const std::source_location& loc);

// Evaluates `g` on `args` (one per parameter) in the current context with apply_node; returns
// its outputs. Host nodes take their callbacks from g.callbacks (see region_of).
std::vector<Array> eval_graph(const Graph& g, std::span<const Array> args,
                              const std::source_location& loc);

// Region `k` of control node `n` of `owner`, carrying owner's callback table: host_call nodes in
// regions name slots of the function's table, so a region evaluated on its own needs it.
Graph region_of(const Graph& owner, const Node& n, std::size_t k);

// Zeros of a type, staged in the current context.
Array zeros_of(const TensorType& type, const std::source_location& loc);

// Where an op of a traced graph came from, for messages: its own line, else the transform's.
std::source_location origin_or(const Node& n, const std::source_location& fallback);

}  // namespace weft::detail
