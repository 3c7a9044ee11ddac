// Staging host ops (debug_print, host_call) from the user API, or running them eagerly.
#include <memory>
#include <string>

#include "trace/array_impl.h"
#include "weft/callback.h"
#include "weft/error.h"
#include "weft/ir/effects.h"
#include "weft/ir/op_attrs.h"
#include "weft/trace/trace.h"

namespace weft::detail {

std::vector<Array> bind_host(OpKind op, std::vector<Array> operands, Attrs attrs,
                             std::vector<TensorType> results,
                             std::shared_ptr<const HostCallback> callback, const std::string& api,
                             const std::source_location& loc) {
  std::vector<TensorType> types;
  for (std::size_t i = 0; i < operands.size(); ++i) {
    if (!operands[i].valid())
      throw InvalidArgumentError(api + " at " + describe_location(loc) + ": argument " +
                                 std::to_string(i) + " is an empty Array");
    check_not_escaped(*operands[i].impl(), loc);
    types.push_back({operands[i].dtype(), operands[i].shape()});
  }
  if (callback)
    attrs.set(HostCallAttrs::kCallback, std::int64_t{0});  // the slot is set when staged
  try {
    check_host_op(op, types, attrs, results);
  } catch (const Error& e) {
    throw InvalidArgumentError(api + " at " + describe_location(loc) + ": " + e.what());
  }

  auto stage = [&](TraceState& t) {
    if (callback) {
      attrs.set(HostCallAttrs::kCallback, static_cast<std::int64_t>(t.graph.callbacks.size()));
      t.graph.callbacks.push_back(callback);
    }
    Node n;
    n.op = op;
    n.attrs = attrs;
    n.origin.cpp = loc;
    for (const Array& a : operands) n.inputs.push_back(lift(t, a, loc));
    n.results = results;
    return t.graph.add_control(std::move(n));
  };
  if (std::shared_ptr<TraceState> trace = current_trace()) {
    const ValueId first = stage(*trace);
    std::vector<Array> out;
    for (std::size_t k = 0; k < results.size(); ++k)
      out.push_back(make_tracer(trace, first + static_cast<ValueId>(k)));
    return out;
  }
  // Eagerly: the one op as a program, so it keeps its place among the effects before it.
  Graph graph;
  std::vector<Array> captured;
  {
    TraceScope scope(api, loc);
    TraceState& state = *scope.state();
    state.eager_fusion = true;
    const ValueId first = stage(state);
    for (std::size_t k = 0; k < results.size(); ++k)
      state.graph.outputs.push_back(first + static_cast<ValueId>(k));
    graph = state.graph.canonicalized();
    captured = state.captured;
  }
  return run_eager_program(graph, captured, api, loc);
}

void print_impl(const FormatString& format, std::vector<Array> args,
                const DebugPrintOptions& options) {
  Attrs attrs = DebugPrintAttrs{std::string(format.text), options.ordered}.write();
  bind_host(OpKind::DebugPrint, std::move(args), std::move(attrs), {}, nullptr, "debug_print",
            format.where);
}

std::vector<Array> callback_impl(const char* api, HostCallback::Function function,
                                 std::vector<ShapeDtype> results, std::vector<Array> args,
                                 bool effect, bool ordered, const std::source_location& loc) {
  auto callback = std::make_shared<HostCallback>();
  callback->api = api;
  callback->origin = describe_location(loc);
  for (const ShapeDtype& r : results) {
    if (r.dtype == DType::Token)
      throw DTypeError(std::string(api) + " at " + describe_location(loc) +
                       ": a callback cannot return a token");
    callback->result_types.push_back({r.dtype, r.shape});
  }
  callback->function = std::move(function);
  Attrs attrs;
  if (effect) {
    attrs.set(HostCallAttrs::kEffect, std::string(api));
    attrs.set(HostEffectAttrs::kOrdered, std::int64_t{ordered ? 1 : 0});
  }
  return bind_host(OpKind::HostCall, std::move(args), std::move(attrs), callback->result_types,
                   callback, api, loc);
}

}  // namespace weft::detail
