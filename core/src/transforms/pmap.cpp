// pmap: the function traced once on one slice's shapes, then run on every device in segments
// split at its collectives; each segment is one program per device, the devices' programs run
// concurrently, and a collective combines their values between segments.
#include "weft/transforms/pmap.h"

#include <algorithm>
#include <limits>

#include "ir/graph_evaluator.h"
#include "primitives/custom_attrs.h"
#include "trace/array_impl.h"
#include "transforms/custom_rules.h"
#include "transforms/staging.h"
#include "weft/error.h"
#include "weft/ops.h"
#include "weft/trace/trace.h"

namespace weft {

namespace {

struct BoundAxis {
  std::string name;
  std::int64_t size;
};
thread_local std::vector<BoundAxis> bound_axes;

// For its scope, collectives may name `name` (pmap is tracing its function).
class AxisBinding {
 public:
  AxisBinding(std::string name, std::int64_t size) {
    bound_axes.push_back({std::move(name), size});
  }
  ~AxisBinding() { bound_axes.pop_back(); }
  AxisBinding(const AxisBinding&) = delete;
  AxisBinding& operator=(const AxisBinding&) = delete;
};

std::int64_t axis_size(const std::string& axis_name, const std::string& api,
                       const std::source_location& loc) {
  for (auto it = bound_axes.rbegin(); it != bound_axes.rend(); ++it)
    if (it->name == axis_name) return it->size;
  throw TransformError(api + " at " + detail::describe_location(loc) + ": the axis name '" +
                       axis_name +
                       "' is not bound here; call it inside a function given to pmap with "
                       "{.axis_name = \"" +
                       axis_name + "\"}");
}

// Collectives must sit at the top level: a segment boundary cannot fall inside a loop.
void check_no_nested_collectives(const Graph& g, const std::string& where) {
  for (const Node& n : g.nodes)
    for (const Graph& region : n.regions) {
      for (const Node& inner : region.nodes)
        if (is_collective(inner.op))
          throw TransformError("pmap at " + where + ": " + std::string(op_name(inner.op)) + " at " +
                               inner.origin.describe() + " is inside " +
                               std::string(op_name(n.op)) + " at " + n.origin.describe() +
                               "; collectives must be at the top level of the pmapped function");
      check_no_nested_collectives(region, where);
    }
}

// The per-device values stacked along a new leading axis on `first`: copied there, then one
// program.
Array stacked_on(const std::vector<Array>& per_device, Device& first,
                 const std::source_location& loc) {
  std::vector<Array> here;
  for (const Array& a : per_device) here.push_back(device_put(a, first));
  return detail::stage_or_run("pmap", loc,
                              [&] {
                                std::vector<Array> rows;
                                for (const Array& a : here) {
                                  Shape shape{1};
                                  shape.insert(shape.end(), a.shape().begin(), a.shape().end());
                                  rows.push_back(lax::reshape(a, shape, loc));
                                }
                                return std::vector<Array>{
                                    rows.size() == 1 ? rows[0] : lax::concatenate(rows, 0, loc)};
                              })
      .at(0);
}

// The rows of `a` along its leading axis, as one program on a's device.
std::vector<Array> rows_of(const Array& a, const std::source_location& loc) {
  return detail::stage_or_run("pmap", loc, [&] {
    const Shape row(a.shape().begin() + 1, a.shape().end());
    std::vector<Array> out;
    for (std::int64_t d = 0; d < a.shape()[0]; ++d) {
      Shape start(a.shape().size(), 0), limit = a.shape();
      start[0] = d;
      limit[0] = d + 1;
      out.push_back(lax::reshape(lax::slice(a, start, limit, {}, loc), row, loc));
    }
    return out;
  });
}

}  // namespace

namespace detail {

Array stage_collective(OpKind which, std::vector<Array> operands, const TensorType& result,
                       const std::string& axis_name, const std::source_location& loc) {
  const std::string name(op_name(which));
  for (const Array& a : operands)
    if (!a.valid())
      throw InvalidArgumentError(name + " at " + describe_location(loc) + ": the array is empty");
  return bind_control(which, operands, prim::CollectiveAttrs{axis_name}.write(), {}, {result}, name,
                      loc)
      .at(0);
}

}  // namespace detail

Array psum(const Array& x, const std::string& axis_name, std::source_location loc) {
  axis_size(axis_name, "psum", loc);
  return detail::stage_collective(OpKind::Psum, {x}, {x.dtype(), x.shape()}, axis_name, loc);
}

Array pmean(const Array& x, const std::string& axis_name, std::source_location loc) {
  axis_size(axis_name, "pmean", loc);
  return detail::stage_collective(OpKind::Pmean, {x}, {x.dtype(), x.shape()}, axis_name, loc);
}

Array pmax(const Array& x, const std::string& axis_name, std::source_location loc) {
  axis_size(axis_name, "pmax", loc);
  return detail::stage_collective(OpKind::Pmax, {x}, {x.dtype(), x.shape()}, axis_name, loc);
}

Array all_gather(const Array& x, const std::string& axis_name, std::source_location loc) {
  Shape shape{axis_size(axis_name, "all_gather", loc)};
  shape.insert(shape.end(), x.shape().begin(), x.shape().end());
  return detail::stage_collective(OpKind::AllGather, {x}, {x.dtype(), shape}, axis_name, loc);
}

Array axis_index(const std::string& axis_name, std::source_location loc) {
  axis_size(axis_name, "axis_index", loc);
  return detail::stage_collective(OpKind::AxisIndex, {}, {DType::I32, {}}, axis_name, loc);
}

namespace {

// Combines the devices' values of a collective node; returns each device's result.
std::vector<Array> run_collective(const Node& n, const std::vector<Array>& inputs,
                                  const std::vector<Device*>& devices,
                                  const std::source_location& loc) {
  const std::size_t count = devices.size();
  std::vector<Array> out(count);
  if (n.op == OpKind::AxisIndex) {
    for (std::size_t d = 0; d < count; ++d)
      out[d] = Array::scalar_int(static_cast<std::int64_t>(d), DType::I32);
    return out;
  }
  Device& first = *devices[0];
  Array combined;
  if (n.op == OpKind::AllGather) {
    combined = stacked_on(inputs, first, loc);
  } else {
    combined = inputs[0];
    for (std::size_t d = 1; d < count; ++d) {
      const Array other = device_put(inputs[d], first);
      combined =
          n.op == OpKind::Pmax ? lax::max(combined, other, loc) : lax::add(combined, other, loc);
    }
    if (n.op == OpKind::Pmean) {
      const Array n = lax::constant(static_cast<double>(count), combined.dtype(), loc);
      combined = lax::div(
          combined,
          combined.shape().empty() ? n : lax::broadcast_in_dim(n, combined.shape(), {}, loc), loc);
    }
  }
  for (std::size_t d = 0; d < count; ++d) out[d] = device_put(combined, *devices[d]);
  return out;
}

bool is_tracer(const Array& a) {
  return a.valid() && a.impl()->kind == detail::ArrayImpl::Kind::Tracer;
}

// One device's run of the pmapped graph: its nodes staged into the current segment's program,
// a collective's result as the devices' values combined it.
struct DeviceHooks {
  const Graph& graph;
  const std::vector<Array>& args;  // the device's parameters
  const std::source_location& loc;
  std::vector<Array> collective_results;  // of the collective the evaluator reaches next

  Array on_parameter(std::size_t index, const Node&) const { return args[index]; }
  Array on_value_node(ValueId, const Node& n, OperandValues<Array> operands) const {
    return detail::apply_node(graph, n, copies_of(operands), loc).at(0);
  }
  std::vector<Array> on_multi_result_node(ValueId, const Node& n, OperandValues<Array> operands) {
    if (is_collective(n.op)) return std::move(collective_results);
    return detail::apply_node(graph, n, copies_of(operands), loc);
  }
};

}  // namespace

ArrayFunction pmap(ArrayFunction f, PmapOptions options, std::source_location loc) {
  return [f = std::move(f), options = std::move(options), loc](const std::vector<Array>& args) {
    const std::string where = detail::describe_location(loc);
    if (detail::tracing_active())
      throw TransformError("pmap at " + where +
                           ": called inside a traced function (jit or a transformation); pmap "
                           "runs its function on several devices itself, so call it outside");
    std::vector<std::optional<int>> in_axes = options.in_axes;
    if (in_axes.empty()) in_axes.assign(args.size(), 0);
    if (in_axes.size() != args.size())
      throw InvalidArgumentError("pmap at " + where + ": in_axes has " +
                                 std::to_string(in_axes.size()) + " entries for " +
                                 std::to_string(args.size()) + " arguments; give one per argument");
    std::optional<std::int64_t> count;
    for (std::size_t i = 0; i < args.size(); ++i) {
      if (!args[i].valid())
        throw InvalidArgumentError("pmap at " + where + ": argument " + std::to_string(i) +
                                   " is an empty Array");
      if (!in_axes[i]) continue;
      if (*in_axes[i] != 0)
        throw InvalidArgumentError("pmap at " + where + ": in_axes[" + std::to_string(i) + "] is " +
                                   std::to_string(*in_axes[i]) +
                                   "; pmap splits the leading axis (0) or none (nullopt)");
      if (args[i].shape().empty())
        throw ShapeError("pmap at " + where + ": argument " + std::to_string(i) +
                         " is a scalar; a split argument needs a leading axis of one slice per "
                         "device");
      const std::int64_t n = args[i].shape()[0];
      if (count && *count != n)
        throw ShapeError("pmap at " + where + ": argument " + std::to_string(i) +
                         " has a leading axis of " + std::to_string(n) +
                         " but an earlier argument has " + std::to_string(*count) +
                         "; every split argument needs one slice per device");
      count = n;
    }
    if (!count)
      throw InvalidArgumentError("pmap at " + where +
                                 ": no argument is split (every in_axes entry is nullopt)");
    std::vector<Device*> devices = options.devices;
    if (devices.empty()) {
      const std::vector<Device*> all = weft::devices();
      if (*count > static_cast<std::int64_t>(all.size())) {
        std::string names;
        for (Device* d : all) names += (names.empty() ? "" : ", ") + d->name();
        throw ShapeError("pmap at " + where + ": the leading axis is " + std::to_string(*count) +
                         " but there are only " + std::to_string(all.size()) + " devices (" +
                         names + "); give one slice per device, or set POCL_DEVICES for more");
      }
      devices.assign(all.begin(), all.begin() + *count);
    } else if (static_cast<std::int64_t>(devices.size()) != *count) {
      throw ShapeError("pmap at " + where + ": the leading axis is " + std::to_string(*count) +
                       " but " + std::to_string(devices.size()) +
                       " devices were given; give one slice per device");
    }
    const std::size_t n_dev = devices.size();

    // One slice per device, on that device.
    std::vector<TensorType> slice_types;
    std::vector<std::vector<Array>> per_device(n_dev);
    for (std::size_t i = 0; i < args.size(); ++i) {
      const Array& a = args[i];
      if (!in_axes[i]) {
        slice_types.push_back({a.dtype(), a.shape()});
        for (std::size_t d = 0; d < n_dev; ++d) per_device[d].push_back(device_put(a, *devices[d]));
        continue;
      }
      slice_types.push_back({a.dtype(), Shape(a.shape().begin() + 1, a.shape().end())});
      const std::vector<Array> rows = rows_of(a, loc);
      for (std::size_t d = 0; d < n_dev; ++d)
        per_device[d].push_back(device_put(rows[d], *devices[d]));
    }
    detail::TracedRegion traced;
    {
      AxisBinding binding(options.axis_name, *count);
      traced = detail::trace_for_transform("pmap", f, slice_types, loc);
    }
    const Graph& g = traced.graph;
    check_no_nested_collectives(g, where);
    for (std::size_t d = 0; d < n_dev; ++d)
      for (const Array& c : traced.captured) per_device[d].push_back(device_put(c, *devices[d]));

    // Where each value is last needed: a later segment must receive it from this one.
    constexpr std::size_t kOutput = std::numeric_limits<std::size_t>::max();
    std::vector<std::size_t> last_use(g.nodes.size(), 0);
    for (std::size_t id = 0; id < g.nodes.size(); ++id)
      for (ValueId input : g.nodes[id].inputs)
        last_use[static_cast<std::size_t>(input)] =
            std::max(last_use[static_cast<std::size_t>(input)], id);
    for (ValueId o : g.outputs) last_use[static_cast<std::size_t>(o)] = kOutput;

    std::vector<DeviceHooks> hooks;
    std::vector<GraphEvaluator<Array>> value;  // per device
    hooks.reserve(n_dev);
    value.reserve(n_dev);
    for (std::size_t d = 0; d < n_dev; ++d) {
      hooks.push_back({.graph = g, .args = per_device[d], .loc = loc, .collective_results = {}});
      value.emplace_back(g, hooks[d]);
    }

    std::size_t start = 0;
    while (start < g.nodes.size()) {
      std::size_t end = start;
      while (end < g.nodes.size() && !is_collective(g.nodes[end].op)) ++end;
      // The segment [start, end): one program per device; the devices run concurrently.
      for (std::size_t d = 0; d < n_dev && end > start; ++d) {
        Graph program;
        std::vector<Array> captured;
        std::vector<std::size_t> kept;  // the values later segments need, in output order
        {
          detail::TraceScope scope("pmap", loc);
          scope.state()->eager_fusion = true;
          value[d].run(hooks[d], start, end);
          for (std::size_t id = start; id < end; ++id) {
            const Array& v = value[d].value(static_cast<ValueId>(id));
            if (last_use[id] >= end && is_tracer(v)) {
              kept.push_back(id);
              scope.state()->graph.outputs.push_back(scope.stage_output(v, loc));
            }
          }
          program = scope.state()->graph.canonicalized();
          captured = scope.state()->captured;
        }
        const std::vector<Array> out =
            detail::run_eager_program(program, captured, "pmap", loc, devices[d]);
        for (std::size_t k = 0; k < kept.size(); ++k)
          value[d].value(static_cast<ValueId>(kept[k])) = out[k];
        for (std::size_t id = start; id < end; ++id) {
          Array& v = value[d].value(static_cast<ValueId>(id));
          if (is_tracer(v)) v = Array();  // dead after its segment
        }
      }
      if (end >= g.nodes.size()) break;
      // The collective, then its Result node.
      const Node& c = g.nodes[end];
      std::vector<Array> inputs;
      for (std::size_t d = 0; d < n_dev; ++d)
        inputs.push_back(c.inputs.empty() ? Array() : value[d].value(c.inputs[0]));
      std::vector<Array> combined = run_collective(c, inputs, devices, loc);
      const std::size_t after = end + 1 + c.results.size();
      for (std::size_t d = 0; d < n_dev; ++d) {
        hooks[d].collective_results = {std::move(combined[d])};
        value[d].run(hooks[d], end, after);
      }
      start = after;
    }

    std::vector<Array> outputs;
    for (ValueId o : g.outputs) {
      std::vector<Array> slices;
      for (std::size_t d = 0; d < n_dev; ++d) slices.push_back(value[d].value(o));
      outputs.push_back(stacked_on(slices, *devices[0], loc));
    }
    return outputs;
  };
}

}  // namespace weft
