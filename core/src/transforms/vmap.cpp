// vmap: evaluates a function's graph, traced on one example's shapes, on values that may carry
// a leading batch axis, staging each node's batching rule into the current context.
#include "weft/transforms/vmap.h"

#include <algorithm>

#include "ir/graph_evaluator.h"
#include "trace/array_impl.h"
#include "transforms/batching_rules.h"
#include "transforms/control_rules.h"
#include "transforms/staging.h"
#include "weft/callback.h"
#include "weft/error.h"
#include "weft/ir/host_callback.h"
#include "weft/ir/op_attrs.h"
#include "weft/ops.h"

namespace weft {

namespace detail {

namespace {

// Example `b` of `x` (its leading axis dropped).
Array example_of(const Array& x, std::int64_t b, const std::source_location& loc) {
  Shape start(x.shape().size(), 0), limit = x.shape();
  start[0] = b;
  limit[0] = b + 1;
  return lax::reshape(lax::slice(x, start, limit, {}, loc),
                      Shape(x.shape().begin() + 1, x.shape().end()), loc);
}

// Stages each node's batching rule; a node none of whose operands is batched runs as it is.
struct VmapHooks {
  const Graph& graph;
  std::span<const Batched> params;
  std::int64_t batch_size;
  const std::source_location& loc;

  static bool any_batched(OperandValues<Batched> operands) {
    return std::ranges::any_of(operands, [](const Batched* o) { return o->batched; });
  }

  Batched on_parameter(std::size_t index, const Node&) const { return params[index]; }
  Batched on_value_node(ValueId, const Node& n, OperandValues<Batched> operands) const {
    const std::source_location where = origin_or(n, loc);
    if (!any_batched(operands))
      return Batched{apply_node(graph, n, members_of(operands, &Batched::value), loc).at(0), false};
    return batch_rule(n, copies_of(operands), batch_size, "vmap", where);
  }
  std::vector<Batched> on_multi_result_node(ValueId, const Node& n,
                                            OperandValues<Batched> operands) const {
    const std::vector<Array> plain = members_of(operands, &Batched::value);
    const bool batched_operand = any_batched(operands);
    const std::source_location where = origin_or(n, loc);
    if (batched_operand && is_control(n.op))
      return batch_control(graph, n, copies_of(operands), batch_size, "vmap", where);
    std::vector<Batched> results;
    if (!batched_operand) {
      for (Array& a : apply_node(graph, n, plain, loc)) results.push_back({std::move(a), false});
      return results;
    }
    if (n.op == OpKind::DebugPrint) {
      // As jax.debug.print: once per example, in example order, each print seeing its
      // example's values (an unbatched operand prints the same value every time).
      for (std::int64_t b = 0; b < batch_size; ++b) {
        std::vector<Array> example;
        for (const Batched* o : operands)
          example.push_back(o->batched ? example_of(o->value, b, where) : o->value);
        apply_node(graph, n, example, loc);
      }
      return results;
    }
    // A host op sees the whole batch at once (one callback per batch), told
    // so by a ("batch", {"batch_dims": ...}) entry in its context's transforms; its results
    // carry the batch axis.
    Node batched = n;
    for (TensorType& t : batched.results) t.shape.insert(t.shape.begin(), batch_size);
    const auto slot = static_cast<std::size_t>(HostCallAttrs::callback(n.attrs));
    auto callback = std::make_shared<HostCallback>(*graph.callbacks.at(slot));
    CallbackTransform batch{.name = "batch", .batch_dims = {}};
    for (const Batched* o : operands)
      batch.batch_dims.push_back(o->batched ? std::optional<int>(0) : std::nullopt);
    callback->transforms.push_back(std::move(batch));
    for (Array& a : bind_host(n.op, plain, n.attrs, batched.results, std::move(callback),
                              std::string(op_name(n.op)), where))
      results.push_back({std::move(a), true});
    return results;
  }
};

}  // namespace

std::vector<Batched> vmap_graph(const Graph& g, std::span<const Batched> params,
                                std::int64_t batch_size, const std::source_location& loc) {
  VmapHooks hooks{.graph = g, .params = params, .batch_size = batch_size, .loc = loc};
  return evaluate_graph<Batched>(g, hooks);
}

}  // namespace detail

namespace {

using detail::Batched;

// Moves axis 0 of `x` to `to`.
Array front_axis_to(const Array& x, std::int64_t to, const std::source_location& loc) {
  if (to == 0) return x;
  lax::Axes perm;
  const auto rank = static_cast<std::int64_t>(x.shape().size());
  for (std::int64_t j = 0; j < rank; ++j) perm.push_back(j < to ? j + 1 : j == to ? 0 : j);
  return lax::transpose(x, perm, loc);
}

std::int64_t normalized_axis(int axis, std::size_t rank, const std::string& what,
                             const std::source_location& loc) {
  const auto r = static_cast<std::int64_t>(rank);
  const std::int64_t a = axis < 0 ? axis + r : axis;
  if (a < 0 || a >= r)
    throw InvalidArgumentError("vmap at " + detail::describe_location(loc) + ": " + what +
                               " is axis " + std::to_string(axis) + " of a rank-" +
                               std::to_string(rank) + " value; choose one in [-" +
                               std::to_string(rank) + ", " + std::to_string(rank) + ")");
  return a;
}

}  // namespace

ArrayFunction vmap(ArrayFunction f, VmapOptions options, std::source_location loc) {
  return [f = std::move(f), options = std::move(options), loc](const std::vector<Array>& args) {
    std::vector<std::optional<int>> in_axes = options.in_axes;
    if (in_axes.empty()) in_axes.assign(args.size(), 0);
    if (in_axes.size() != args.size())
      throw InvalidArgumentError("vmap at " + detail::describe_location(loc) + ": in_axes has " +
                                 std::to_string(in_axes.size()) + " entries for " +
                                 std::to_string(args.size()) + " arguments; give one per argument");
    std::optional<std::int64_t> batch_size;
    std::vector<TensorType> example_types;
    for (std::size_t i = 0; i < args.size(); ++i) {
      if (!args[i].valid())
        throw InvalidArgumentError("vmap at " + detail::describe_location(loc) + ": argument " +
                                   std::to_string(i) + " is an empty Array");
      if (!in_axes[i]) {
        example_types.push_back({args[i].dtype(), args[i].shape()});
        continue;
      }
      const std::string what = "in_axes[" + std::to_string(i) + "]";
      const std::int64_t axis = normalized_axis(*in_axes[i], args[i].shape().size(), what, loc);
      const std::int64_t size = args[i].shape()[static_cast<std::size_t>(axis)];
      if (batch_size && *batch_size != size)
        throw ShapeError("vmap at " + detail::describe_location(loc) + ": argument " +
                         std::to_string(i) + " has " + std::to_string(size) +
                         " examples along its batch axis " + std::to_string(axis) +
                         " but an earlier argument has " + std::to_string(*batch_size) +
                         "; every batched argument needs the same batch size");
      batch_size = size;
      Shape example = args[i].shape();
      example.erase(example.begin() + axis);
      example_types.push_back({args[i].dtype(), example});
    }
    if (!batch_size)
      throw InvalidArgumentError("vmap at " + detail::describe_location(loc) +
                                 ": no argument is batched (every in_axes entry is nullopt); "
                                 "batch at least one");
    return detail::stage_or_run("vmap", loc, [&] {
      std::vector<Batched> inputs;
      for (std::size_t i = 0; i < args.size(); ++i) {
        if (!in_axes[i]) {
          inputs.push_back({args[i], false});
          continue;
        }
        const std::int64_t axis = normalized_axis(*in_axes[i], args[i].shape().size(), "", loc);
        lax::Axes perm{axis};
        for (std::int64_t d = 0; d < static_cast<std::int64_t>(args[i].shape().size()); ++d)
          if (d != axis) perm.push_back(d);
        inputs.push_back({axis == 0 ? args[i] : lax::transpose(args[i], perm, loc), true});
      }
      const detail::TracedRegion traced =
          detail::trace_for_transform("vmap", f, example_types, loc);
      for (const Array& c : traced.captured) inputs.push_back({c, false});
      const std::vector<Batched> results =
          detail::vmap_graph(traced.graph, inputs, *batch_size, loc);
      std::vector<int> out_axes = options.out_axes;
      if (out_axes.empty()) out_axes.assign(results.size(), 0);
      if (out_axes.size() != results.size())
        throw InvalidArgumentError("vmap at " + detail::describe_location(loc) + ": out_axes has " +
                                   std::to_string(out_axes.size()) + " entries for " +
                                   std::to_string(results.size()) +
                                   " outputs; give one per output");
      std::vector<Array> out;
      for (std::size_t k = 0; k < results.size(); ++k) {
        const Array value = results[k].batched
                                ? results[k].value
                                : detail::with_batch_axis(results[k].value, *batch_size, loc);
        const std::int64_t axis = normalized_axis(out_axes[k], value.shape().size(),
                                                  "out_axes[" + std::to_string(k) + "]", loc);
        out.push_back(front_axis_to(value, axis, loc));
      }
      return out;
    });
  };
}

std::function<Array(const Array&)> vmap(std::function<Array(const Array&)> f,
                                        std::source_location loc) {
  const ArrayFunction batched = vmap(
      [f = std::move(f)](const std::vector<Array>& a) { return std::vector<Array>{f(a.at(0))}; },
      VmapOptions{}, loc);
  return [batched](const Array& x) { return batched({x}).at(0); };
}

}  // namespace weft
