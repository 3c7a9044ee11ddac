#include "transforms/staging.h"

#include "ir/graph_evaluator.h"
#include "trace/array_impl.h"
#include "transforms/custom_rules.h"
#include "weft/callback.h"
#include "weft/error.h"
#include "weft/ir/op_attrs.h"
#include "weft/ops.h"

namespace weft::detail {

TracedRegion trace_for_transform(
    const std::string& api, const std::function<std::vector<Array>(const std::vector<Array>&)>& f,
    std::span<const Array> args, const std::source_location& loc) {
  std::vector<TensorType> types;
  types.reserve(args.size());
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (!args[i].valid())
      throw InvalidArgumentError(api + " at " + describe_location(loc) + ": argument " +
                                 std::to_string(i) + " is an empty Array");
    types.push_back({args[i].dtype(), args[i].shape()});
  }
  return trace_for_transform(api, f, std::span<const TensorType>(types), loc);
}

TracedRegion trace_for_transform(
    const std::string& api, const std::function<std::vector<Array>(const std::vector<Array>&)>& f,
    std::span<const TensorType> types, const std::source_location& loc) {
  return trace_region({.name = api,
                       .function = "the function given to " + api,
                       .api = api,
                       .loc = loc,
                       .transformed = true},
                      types, f);
}

std::vector<Array> stage_or_run(const std::string& api, const std::source_location& loc,
                                const std::function<std::vector<Array>()>& fn) {
  if (tracing_active()) return fn();
  Graph graph;
  std::vector<Array> captured;
  {
    TraceScope scope(api, loc);
    scope.state()->eager_fusion = true;
    const std::vector<Array> results = fn();
    for (const Array& r : results)
      scope.state()->graph.outputs.push_back(scope.stage_output(r, loc));
    graph = scope.state()->graph.canonicalized();
    captured = scope.state()->captured;
  }
  return run_eager_program(graph, captured, api, loc);
}

std::source_location origin_or(const Node& n, const std::source_location& fallback) {
  return n.origin.cpp.line() != 0 ? n.origin.cpp : fallback;
}

Graph region_of(const Graph& owner, const Node& n, std::size_t k) {
  Graph region = n.regions.at(k);
  region.callbacks = owner.callbacks;
  return region;
}

Array zeros_of(const TensorType& type, const std::source_location& loc) {
  const Array zero = lax::constant(0, type.dtype, loc);
  return type.shape.empty() ? zero : lax::broadcast_in_dim(zero, type.shape, {}, loc);
}

namespace {

// Stages each node into the current context, as the function it was traced from would.
struct StagingHooks {
  const Graph& graph;
  std::span<const Array> args;
  const std::source_location& loc;

  Array on_parameter(std::size_t index, const Node&) { return args[index]; }
  Array on_value_node(ValueId, const Node& n, OperandValues<Array> operands) {
    return apply_node(graph, n, copies_of(operands), loc).at(0);
  }
  std::vector<Array> on_multi_result_node(ValueId, const Node& n, OperandValues<Array> operands) {
    return apply_node(graph, n, copies_of(operands), loc);
  }
};

}  // namespace

std::vector<Array> eval_graph(const Graph& g, std::span<const Array> args,
                              const std::source_location& loc) {
  StagingHooks hooks{.graph = g, .args = args, .loc = loc};
  return evaluate_graph<Array>(g, hooks);
}

std::vector<Array> apply_node(const Graph& g, const Node& n, std::span<const Array> operands,
                              const std::source_location& loc) {
  const std::source_location where = origin_or(n, loc);
  switch (op_info(n.op).op_class) {
    case OpClass::Control: {
      std::vector<Graph> regions;
      for (std::size_t k = 0; k < n.regions.size(); ++k) regions.push_back(region_of(g, n, k));
      if (is_transformation_only(n.op))
        return stage_custom_op(n.op, operands, n.attrs, std::move(regions), n.results, n.custom,
                               std::string(op_name(n.op)), where);
      return bind_control(n.op, operands, n.attrs, std::move(regions), n.results,
                          std::string(op_name(n.op)), where);
    }
    case OpClass::Host: {
      std::shared_ptr<const HostCallback> callback;
      if (n.op == OpKind::HostCall) {
        const auto slot = static_cast<std::size_t>(HostCallAttrs::callback(n.attrs));
        if (slot >= g.callbacks.size())
          throw InvalidGraphError("host_call at " + n.origin.describe() + " names callback slot " +
                                  std::to_string(slot) + ", which its graph does not have");
        callback = g.callbacks[slot];
      }
      return bind_host(n.op, std::vector<Array>(operands.begin(), operands.end()), n.attrs,
                       n.results, std::move(callback), std::string(op_name(n.op)), where);
    }
    case OpClass::Leaf:
      if (n.op == OpKind::Constant) {
        const double value = ConstantAttrs::float_value(n.attrs);
        return {is_float(n.dtype) ? Array::scalar(value, n.dtype)
                                  : Array::scalar_int(ConstantAttrs::int_value(n.attrs), n.dtype)};
      }
      break;
    default:
      break;
  }
  return {bind(n.op, operands, n.attrs, n.type(), where)};
}

}  // namespace weft::detail
