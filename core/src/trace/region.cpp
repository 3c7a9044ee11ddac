// Regions of control ops: tracing a function as a region (closure conversion), giving sibling
// regions one parameter list, and applying the control op itself, staged or eagerly.
#include <algorithm>

#include "trace/array_impl.h"
#include "trace/effect_tokens.h"
#include "weft/backend.h"
#include "weft/compile/pipeline.h"
#include "weft/error.h"
#include "weft/ir/op_attrs.h"
#include "weft/ir/regions.h"
#include "weft/trace/trace.h"

namespace weft::detail {

TracedRegion trace_region(const RegionInfo& info, std::span<const TensorType> params,
                          const std::function<std::vector<Array>(const std::vector<Array>&)>& fn) {
  const std::shared_ptr<TraceState> parent = current_trace();
  TraceScope scope(info.function, info.loc);
  TraceState& state = *scope.state();
  state.region = true;
  state.api = info.api;
  state.graph.name = info.name;
  state.transformed = info.transformed;
  if (parent && !parent->eager_fusion) state.enclosing = parent->describe_function();
  std::vector<Array> tracers;
  tracers.reserve(params.size());
  for (const TensorType& t : params) tracers.push_back(scope.add_parameter(t));
  const std::vector<Array> results = fn(tracers);
  for (std::size_t i = 0; i < results.size(); ++i) {
    if (!results[i].valid())
      throw InvalidArgumentError(info.api + " at " + describe_location(info.loc) + ": " +
                                 info.function + " returned an empty Array (result leaf " +
                                 std::to_string(i) + ")");
    state.graph.outputs.push_back(lift(state, results[i], info.loc));
  }
  return {state.graph.canonicalized(), state.captured, params.size()};
}

std::vector<Array> unify_captures(std::span<TracedRegion> regions) {
  std::vector<Array> all;
  for (const TracedRegion& r : regions)
    for (const Array& a : r.captured)
      if (std::none_of(all.begin(), all.end(), [&](const Array& b) { return same_value(a, b); }))
        all.push_back(a);
  for (TracedRegion& r : regions) {
    Graph& g = r.graph;
    std::vector<ValueId> params(g.params.begin(),
                                g.params.begin() + static_cast<std::ptrdiff_t>(r.explicit_params));
    for (const Array& a : all) {
      auto it = std::find_if(r.captured.begin(), r.captured.end(),
                             [&](const Array& b) { return same_value(a, b); });
      if (it != r.captured.end()) {
        params.push_back(
            g.params.at(r.explicit_params + static_cast<std::size_t>(it - r.captured.begin())));
        continue;
      }
      Node n;  // a capture of a sibling region: unused here
      n.op = OpKind::Parameter;
      n.dtype = a.dtype();
      n.shape = a.shape();
      params.push_back(g.add(std::move(n)));
    }
    for (std::size_t i = 0; i < params.size(); ++i)
      g.nodes[static_cast<std::size_t>(params[i])].attrs.set(IndexAttrs::kIndex,
                                                             static_cast<std::int64_t>(i));
    g.params = std::move(params);
    g = g.canonicalized();
    r.captured = all;
  }
  return all;
}

namespace {

std::string types_to_string(const std::vector<TensorType>& types) {
  std::string s = "(";
  for (std::size_t i = 0; i < types.size(); ++i) s += (i ? ", " : "") + type_to_string(types[i]);
  return s + ")";
}

std::vector<TensorType> types_of(const Graph& g, const std::vector<ValueId>& ids) {
  std::vector<TensorType> out;
  out.reserve(ids.size());
  for (ValueId id : ids) out.push_back(g.node(id).type());
  return out;
}

// Stages the control node into `t`; returns the id of its first result.
// Adds `offset` to the callback slot of every host_call in `graph` and its regions.
void renumber_callbacks(Graph& graph, std::int64_t offset) {
  for (Node& n : graph.nodes) {
    if (n.op == OpKind::HostCall)
      n.attrs.set(HostCallAttrs::kCallback, HostCallAttrs::callback(n.attrs) + offset);
    for (Graph& region : n.regions) renumber_callbacks(region, offset);
  }
}

ValueId stage_control(TraceState& t, OpKind op, std::span<const Array> operands, const Attrs& attrs,
                      std::vector<Graph> regions, std::vector<TensorType> results,
                      const std::source_location& loc, std::shared_ptr<const CustomRules> custom) {
  Node n;
  n.custom = std::move(custom);
  n.op = op;
  n.attrs = attrs;
  n.origin.cpp = loc;
  for (const Array& a : operands) n.inputs.push_back(lift(t, a, loc));
  // Host functions the regions call join the enclosing function's table.
  for (Graph& region : regions) {
    if (region.callbacks.empty()) continue;
    const auto offset = static_cast<std::int64_t>(t.graph.callbacks.size());
    renumber_callbacks(region, offset);
    t.graph.callbacks.insert(t.graph.callbacks.end(), region.callbacks.begin(),
                             region.callbacks.end());
    region.callbacks.clear();
  }
  n.regions = std::move(regions);
  n.results = std::move(results);
  return t.graph.add_control(std::move(n));
}

}  // namespace

std::vector<Array> bind_control(OpKind op, std::span<const Array> operands, const Attrs& attrs,
                                std::vector<Graph> regions, std::vector<TensorType> results,
                                const std::string& api, const std::source_location& loc,
                                std::shared_ptr<const CustomRules> custom) {
  std::vector<TensorType> types;
  types.reserve(operands.size());
  for (const Array& a : operands) {
    check_not_escaped(*a.impl(), loc);
    types.push_back({a.dtype(), a.shape()});
  }
  // The control-flow functions check what users can get wrong with better messages first; a
  // failure here is a bug in them.
  const std::vector<RegionSignature> sigs =
      region_signatures(op, types, attrs, results, regions.size());
  for (std::size_t k = 0; k < regions.size(); ++k) {
    const std::vector<TensorType> params = types_of(regions[k], regions[k].params);
    const std::vector<TensorType> outs = types_of(regions[k], regions[k].outputs);
    if (params != sigs[k].params || outs != sigs[k].results)
      throw InvalidGraphError(api + " at " + describe_location(loc) + ": region " + sigs[k].name +
                              " has the signature " + types_to_string(params) + " -> " +
                              types_to_string(outs) + ", expected " +
                              types_to_string(sigs[k].params) + " -> " +
                              types_to_string(sigs[k].results));
  }

  if (std::shared_ptr<TraceState> trace = current_trace()) {
    const std::size_t count = results.size();
    const ValueId first = stage_control(*trace, op, operands, attrs, std::move(regions),
                                        std::move(results), loc, std::move(custom));
    std::vector<Array> out;
    out.reserve(count);
    for (std::size_t k = 0; k < count; ++k)
      out.push_back(make_tracer(trace, first + static_cast<ValueId>(k)));
    return out;
  }

  // Eagerly: the one control op as a program whose parameters are its concrete operands.
  Graph graph;
  std::vector<Array> captured;
  {
    TraceScope scope(api, loc);
    TraceState& state = *scope.state();
    state.eager_fusion = true;
    const std::size_t count = results.size();
    const ValueId first = stage_control(state, op, operands, attrs, std::move(regions),
                                        std::move(results), loc, std::move(custom));
    for (std::size_t k = 0; k < count; ++k)
      state.graph.outputs.push_back(first + static_cast<ValueId>(k));
    graph = state.graph.canonicalized();
    captured = state.captured;
  }
  return run_eager_program(graph, captured, api, loc);
}

std::vector<Array> run_eager_program(const Graph& graph, const std::vector<Array>& captured,
                                     const std::string& api, const std::source_location& loc,
                                     Device* on) {
  Device& common = common_device(captured, api, loc);
  Device& device = on ? *on : common;
  if (on && !captured.empty() && &common != on)
    throw InvalidArgumentError(api + " at " + describe_location(loc) + ": its operands live on " +
                               common.name() + " but it was asked to run on " + on->name());
  std::vector<std::shared_ptr<Buffer>> inputs;
  inputs.reserve(captured.size());
  for (const Array& a : captured) inputs.push_back(a.impl()->buffer);
  count_eager_op();
  const Lowering threaded = lower(graph, {.last = Pass::EffectTokens});
  std::shared_ptr<Executable> executable = device.compile(threaded.graph);
  std::vector<std::shared_ptr<Buffer>> buffers =
      run_with_effect_tokens(*executable, device, threaded.tokens, std::move(inputs));
  std::vector<Array> out;
  out.reserve(buffers.size());
  for (std::size_t k = 0; k < buffers.size(); ++k) {
    const Node& n = graph.node(graph.outputs[k]);
    out.push_back(make_concrete(std::move(buffers[k]), n.dtype, n.shape));
  }
  return out;
}

}  // namespace weft::detail
