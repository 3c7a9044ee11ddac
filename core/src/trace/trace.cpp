#include "weft/trace/trace.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <optional>

#include "trace/array_impl.h"
#include "weft/backend.h"
#include "weft/error.h"
#include "weft/ir/op_attrs.h"

namespace weft {

bool tracing_active() {
  return detail::tracing_active();
}

namespace detail {
namespace {

thread_local std::vector<std::shared_ptr<TraceState>> trace_stack;
std::atomic<std::int64_t> eager_ops{0};

std::string where(const std::source_location& loc) {
  return describe_location(loc);
}

// "%3 = reduce_prod(%2: i32[2]) : i32[]" — enough to recognise the op in an error.
std::string describe_node(const Graph& g, ValueId id) {
  const Node& n = g.node(id);
  std::string s = "%" + std::to_string(id) + " = " + std::string(op_name(n.op)) + "(";
  for (std::size_t i = 0; i < n.inputs.size(); ++i) {
    const Node& in = g.node(n.inputs[i]);
    if (i) s += ", ";
    s += "%" + std::to_string(n.inputs[i]) + ": " + type_to_string({in.dtype, in.shape});
  }
  return s + ") : " + type_to_string({n.dtype, n.shape});
}

}  // namespace

std::string describe_location(const std::source_location& loc) {
  if (loc.line() == 0) return "unknown location";
  std::string s = std::string(loc.file_name()) + ":" + std::to_string(loc.line());
  if (loc.function_name() && *loc.function_name())
    s += " (" + std::string(loc.function_name()) + ")";
  return s;
}

std::string TraceState::describe_function() const {
  std::string s = "'" + function + "' (" + api + " at " + where(jit_location) + ")";
  if (!enclosing.empty()) s += " inside " + enclosing;
  return s;
}

void count_eager_op() {
  ++eager_ops;
}

Device& common_device(std::span<const Array> arrays, const std::string& what,
                      const std::source_location& loc) {
  Device* device = nullptr;
  for (const Array& a : arrays) {
    if (!a.is_concrete()) continue;
    Device& d = a.impl()->buffer->device();
    if (device && device != &d)
      throw InvalidArgumentError(what + " at " + where(loc) +
                                 ": operands live on different devices (" + device->name() +
                                 " and " + d.name() + "); move one with device_put first");
    device = &d;
  }
  return device ? *device : default_device();
}

bool tracing_active() {
  return !trace_stack.empty();
}

bool transform_tracing_active() {
  return std::any_of(trace_stack.begin(), trace_stack.end(),
                     [](const std::shared_ptr<TraceState>& t) { return t->transformed; });
}

std::shared_ptr<TraceState> current_trace() {
  return trace_stack.empty() ? nullptr : trace_stack.back();
}

SuspendInnermostTrace::SuspendInnermostTrace() {
  if (trace_stack.empty()) return;
  suspended_ = trace_stack.back();
  trace_stack.pop_back();
}

SuspendInnermostTrace::~SuspendInnermostTrace() {
  if (suspended_) trace_stack.push_back(std::move(suspended_));
}

std::int64_t eager_op_count() {
  return eager_ops.load();
}

TraceScope::TraceScope(std::string function, std::source_location jit_location)
    : state_(std::make_shared<TraceState>()) {
  state_->function = std::move(function);
  state_->jit_location = jit_location;
  state_->graph.name = state_->function;
  trace_stack.push_back(state_);
}

TraceScope::~TraceScope() {
  state_->alive = false;
  if (!trace_stack.empty() && trace_stack.back() == state_) trace_stack.pop_back();
}

Array TraceScope::add_parameter(const TensorType& type) {
  Node n;
  n.op = OpKind::Parameter;
  n.dtype = type.dtype;
  n.shape = type.shape;
  n.attrs = IndexAttrs{static_cast<std::int64_t>(state_->graph.params.size())}.write();
  n.origin.cpp = state_->jit_location;
  ValueId id = state_->graph.add(std::move(n));
  state_->graph.params.push_back(id);
  return make_tracer(state_, id);
}

void check_not_escaped(const ArrayImpl& a, const std::source_location& loc) {
  if (a.kind != ArrayImpl::Kind::Tracer || a.trace->alive) return;
  const Node& n = a.trace->graph.node(a.id);
  throw EscapedTracerError(
      "Encountered a tracer after its trace ended (used at " + where(loc) +
      "). It is a value of the function " + a.trace->describe_function() +
      ", created by the operation\n  " + describe_node(a.trace->graph, a.id) + "\n    from " +
      n.origin.describe() +
      "\nA traced function must not store traced values in variables that outlive the call "
      "(globals, captures by reference, members); return them as results instead.");
}

namespace {

// Longest chain of operations a concretization error lists; longer ones keep both ends.
constexpr std::size_t kMaxChainEntries = 8;

// The operations that made `id` abstract: a path from an argument of the traced function
// (or, failing that, from an array it closed over, or from an op without traced inputs, which
// omnistaging stages too) through each producer to `id`, argument first.
std::vector<ValueId> abstraction_chain(const TraceState& t, ValueId id) {
  const Graph& g = t.graph;
  // 2: depends on an argument, 1: on a closed-over array only, 0: on neither.
  std::vector<int> rank(static_cast<std::size_t>(id) + 1, 0);
  for (ValueId v = 0; v <= id; ++v) {
    const Node& n = g.node(v);
    if (n.op == OpKind::Parameter) {
      const bool captured = std::find(t.captured_params.begin(), t.captured_params.end(), v) !=
                            t.captured_params.end();
      rank[v] = captured ? 1 : 2;
    }
    for (ValueId in : n.inputs) rank[v] = std::max(rank[v], rank[in]);
  }
  std::vector<ValueId> chain;
  for (ValueId v = id;;) {
    chain.push_back(v);
    const Node& n = g.node(v);
    if (n.inputs.empty()) break;
    // Follow the input that leads furthest back to an argument; among equals, prefer the
    // first that is not a constant.
    ValueId next = n.inputs[0];
    for (ValueId in : n.inputs) {
      const bool constant_next = g.node(next).op == OpKind::Constant;
      if (rank[in] > rank[next] ||
          (rank[in] == rank[next] && constant_next && g.node(in).op != OpKind::Constant))
        next = in;
    }
    v = next;
  }
  std::reverse(chain.begin(), chain.end());
  return chain;
}

// "argument 1 of the traced function"; in a region, what the control op passes in.
std::string describe_argument(const TraceState& t, const Node& param) {
  const std::string index = std::to_string(IndexAttrs::read(param.attrs).index);
  if (!t.region) return "argument " + index + " of the traced function";
  return "parameter " + index + " of the traced function (a carry, operand, row of xs or loop " +
         "index its control-flow function passes in)";
}

std::string describe_chain_entry(const TraceState& t, ValueId id) {
  const Node& n = t.graph.node(id);
  if (n.op == OpKind::Parameter) {
    const bool captured = std::find(t.captured_params.begin(), t.captured_params.end(), id) !=
                          t.captured_params.end();
    const std::string type = type_to_string({n.dtype, n.shape});
    if (captured)
      return std::string(t.region ? "  a value" : "  an array") + " the function closes over (" +
             type + "), used at " + n.origin.describe();
    return "  " + describe_argument(t, n) + " (" + type + ")";
  }
  return "  " + describe_node(t.graph, id) + "\n    from " + n.origin.describe();
}

}  // namespace

[[noreturn]] void throw_concretization_error(const ArrayImpl& tracer, const std::string& what,
                                             const std::source_location& loc) {
  const TraceState& t = *tracer.trace;
  const Node& n = t.graph.node(tracer.id);
  const std::vector<ValueId> chain = abstraction_chain(t, tracer.id);
  // operator bool cannot capture its caller's line (see Array::operator bool): name the last
  // known line of the chain, normally that of the op computing the value, which is where
  // `if (x > y)` tests it.
  std::string at = " at " + where(loc);
  if (loc.line() == 0) {
    at = " (a conversion operator cannot capture its caller's line; x.item<bool>() names it)";
    for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
      const Node& producer = t.graph.node(*it);
      if (producer.op == OpKind::Parameter || producer.origin.cpp.line() == 0) continue;
      at = " most likely at " + producer.origin.describe() +
           ", where the value was computed (a conversion operator cannot capture its caller's "
           "line; x.item<bool>() names it exactly)";
      break;
    }
  }
  std::string why;
  if (n.op == OpKind::Parameter) {
    const bool captured = std::find(t.captured_params.begin(), t.captured_params.end(),
                                    tracer.id) != t.captured_params.end();
    why = "this value is " +
          (captured ? std::string("a value the function closes over (every array a traced "
                                  "function uses becomes an input of the trace)")
                    : describe_argument(t, n)) +
          ", so only its dtype and shape are known while tracing.";
  } else {
    const Node& first = t.graph.node(chain.front());
    if (first.op == OpKind::Parameter)
      why = "this value became a tracer because it was computed from " +
            std::string(std::find(t.captured_params.begin(), t.captured_params.end(),
                                  chain.front()) != t.captured_params.end()
                            ? "an array the function closes over (every array a traced "
                              "function uses becomes an input of the trace)"
                            : "an argument") +
            " by these operations:";
    else
      why =
          "this value became a tracer due to these operations (inside jit every operation is "
          "staged, even on constants):";
    const std::size_t head = 3, tail = kMaxChainEntries - head - 1;
    for (std::size_t i = 0; i < chain.size(); ++i) {
      if (chain.size() > kMaxChainEntries && i == head) {
        why += "\n  ... (" + std::to_string(chain.size() - head - tail) + " more operations)";
        i = chain.size() - tail - 1;
        continue;
      }
      why += "\n" + describe_chain_entry(t, chain[i]);
    }
  }
  throw ConcretizationError(
      "Abstract tracer value encountered where a concrete value is expected: " + what + at +
      " on a " + type_to_string({tracer.dtype, tracer.shape}) +
      " tracer.\nWhile tracing the function " + t.describe_function() + ", " + why +
      "\nValues that decide shapes or control flow must be static: use x.shape() and plain C++ "
      "arguments (jit treats numbers, strings and enums as static arguments) instead of arrays. "
      "For control flow that depends on traced values, stage it: lax::cond or lax::switch_ "
      "instead of if/switch, lax::while_loop (or lax::fori_loop, lax::scan) instead of a C++ "
      "loop whose condition reads an array.");
}

namespace {

// Float constants hold doubles and integer constants int64s; every NaN is the one quiet NaN so
// the text form (which prints "nan") parses back to an equal graph.
void set_constant_value(Node& n, const ArrayImpl& impl) {
  if (!is_float(impl.dtype)) {
    n.attrs.set(ConstantAttrs::kValue, impl.int_value);
  } else if (std::isnan(impl.float_value)) {
    n.attrs.set(ConstantAttrs::kValue, std::numeric_limits<double>::quiet_NaN());
  } else {
    n.attrs.set(ConstantAttrs::kValue, impl.float_value);
  }
}

// Whether `outer` is a live trace that `inner` is nested in on this thread, with only regions
// between them (only a region may close over the values of an enclosing trace).
bool encloses(const TraceState& outer, const TraceState& inner) {
  auto pos = std::find_if(trace_stack.rbegin(), trace_stack.rend(),
                          [&](const auto& t) { return t.get() == &inner; });
  for (; pos != trace_stack.rend(); ++pos) {
    if (pos->get() == &outer) return true;
    if (!(*pos)->region) return false;
  }
  return false;
}

// Hoists a value the function closed over to an extra trailing parameter (once per value).
ValueId capture(TraceState& t, const Array& a, const std::source_location& loc) {
  for (std::size_t i = 0; i < t.captured.size(); ++i)
    if (same_value(t.captured[i], a)) return t.captured_params[i];
  const ArrayImpl& impl = *a.impl();
  Node n;
  n.op = OpKind::Parameter;
  n.dtype = impl.dtype;
  n.shape = impl.shape;
  n.attrs = IndexAttrs{static_cast<std::int64_t>(t.graph.params.size())}.write();
  n.origin.cpp = loc;
  ValueId id = t.graph.add(std::move(n));
  t.graph.params.push_back(id);
  t.captured.push_back(a);
  t.captured_params.push_back(id);
  return id;
}

}  // namespace

// The value id of `a` inside trace `t`, staging literals as constants and hoisting concrete
// arrays and tracers of enclosing traces the function closed over to extra parameters.
ValueId lift(TraceState& t, const Array& a, const std::source_location& loc) {
  const ArrayImpl& impl = *a.impl();
  switch (impl.kind) {
    case ArrayImpl::Kind::Tracer:
      check_not_escaped(impl, loc);
      if (impl.trace.get() == &t) return impl.id;
      if (!encloses(*impl.trace, t))
        throw EscapedTracerError(
            "A tracer of the function " + impl.trace->describe_function() +
            " was used while tracing " + t.describe_function() + " at " + where(loc) +
            ", which is not nested in it as a control-flow region (a trace of another thread, "
            "or a jit lowered inside another trace). Pass it to the inner function as an "
            "argument instead of capturing it.");
      return capture(t, a, loc);
    case ArrayImpl::Kind::Literal: {
      Node n;
      n.op = OpKind::Constant;
      n.dtype = impl.dtype;
      set_constant_value(n, impl);
      n.origin.cpp = loc;
      return t.graph.add(std::move(n));
    }
    case ArrayImpl::Kind::Concrete:
      return capture(t, a, loc);
  }
  return -1;
}

namespace {

template <typename E>
[[noreturn]] void rethrow_located(const E& e, const std::source_location& loc) {
  std::string msg = std::string(e.what()) + "\n  at " + where(loc);
  if (auto t = current_trace(); t && !t->eager_fusion)
    msg += "\n  while tracing the function " + t->describe_function();
  throw E(msg);
}

// A scalar literal broadcast to a shape (`x + 1` outside jit broadcasts the 1): the device
// fills a buffer with the literal's bytes. As a program it would be one per value and shape,
// each a kernel build (most of an eager random sampler's builds).
std::optional<Array> fill_eagerly(Device& device, OpKind op, std::span<const Array> operands,
                                  const TensorType& result) {
  if (op != OpKind::BroadcastInDim || operands.size() != 1) return std::nullopt;
  const ArrayImpl& impl = *operands[0].impl();
  if (impl.kind != ArrayImpl::Kind::Literal || impl.dtype != result.dtype) return std::nullopt;
  const std::size_t element_bytes = dtype_size(result.dtype);
  if (element_bytes == 0 || (element_bytes & (element_bytes - 1)) != 0) return std::nullopt;
  ArrayImpl value = impl;
  // NaN as the constant kernel writes it (set_constant_value): the quiet NaN, positive.
  if (is_float(value.dtype) && std::isnan(value.float_value))
    value.float_value = std::numeric_limits<double>::quiet_NaN();
  const HostArray element = literal_to_host(value);
  const std::size_t bytes = static_cast<std::size_t>(num_elements(result.shape)) * element_bytes;
  return make_concrete(device.fill(element.raw(), element_bytes, bytes), result.dtype,
                       result.shape);
}

Array run_eagerly(OpKind op, std::span<const Array> operands, const Attrs& attrs,
                  const TensorType& result, const std::source_location& loc) {
  Device* device = &common_device(operands, std::string(op_name(op)), loc);
  if (std::optional<Array> filled = fill_eagerly(*device, op, operands, result)) {
    ++eager_ops;
    return *std::move(filled);
  }

  Graph g;
  g.name = "eager_" + std::string(op_name(op));
  std::vector<std::shared_ptr<Buffer>> inputs;
  Node node;
  node.op = op;
  node.dtype = result.dtype;
  node.shape = result.shape;
  node.attrs = attrs;
  for (const Array& a : operands) {
    const ArrayImpl& impl = *a.impl();
    Node leaf;
    leaf.dtype = impl.dtype;
    leaf.shape = impl.shape;
    if (impl.kind == ArrayImpl::Kind::Concrete) {
      leaf.op = OpKind::Parameter;
      leaf.attrs = IndexAttrs{static_cast<std::int64_t>(g.params.size())}.write();
      inputs.push_back(impl.buffer);
      ValueId id = g.add(std::move(leaf));
      g.params.push_back(id);
      node.inputs.push_back(id);
    } else {
      leaf.op = OpKind::Constant;
      set_constant_value(leaf, impl);
      node.inputs.push_back(g.add(std::move(leaf)));
    }
  }
  g.outputs.push_back(g.add(std::move(node)));
  ++eager_ops;
  auto exe = device->compile(g.canonicalized());
  auto outs = exe->run(inputs);
  return make_concrete(std::move(outs.at(0)), result.dtype, result.shape);
}

}  // namespace

Array run_fused_eagerly(const std::function<Array()>& fn, const char* name,
                        const std::source_location& loc) {
  if (tracing_active()) return fn();
  Graph graph;
  std::vector<Array> captured;
  {
    TraceScope scope(name, loc);
    scope.state()->eager_fusion = true;
    Array result = fn();
    scope.state()->graph.outputs.push_back(scope.stage_output(result, loc));
    graph = scope.state()->graph.canonicalized();
    captured = scope.state()->captured;
  }
  const Node& out = graph.node(graph.outputs[0]);
  if (out.op == OpKind::Parameter) return captured.at(IndexAttrs::read(out.attrs).index);
  Device* device = &common_device(captured, name, loc);
  std::vector<std::shared_ptr<Buffer>> inputs;
  for (const Array& a : captured) inputs.push_back(a.impl()->buffer);
  ++eager_ops;
  auto outputs = device->compile(graph)->run(inputs);
  return make_concrete(std::move(outputs.at(0)), out.dtype, out.shape);
}

ValueId TraceScope::stage_output(const Array& value, std::source_location where_) {
  if (!value.valid())
    throw InvalidArgumentError("the traced function " + state_->describe_function() +
                               " returned an empty Array");
  return lift(*state_, value, where_);
}

Array bind(OpKind op, std::span<const Array> operands, const Attrs& attrs,
           const TensorType& declared, const std::source_location& loc) {
  std::vector<TensorType> types;
  types.reserve(operands.size());
  bool any_tracer = false;
  for (std::size_t i = 0; i < operands.size(); ++i) {
    if (!operands[i].valid())
      throw InvalidArgumentError(std::string(op_name(op)) + " at " + where(loc) + ": operand " +
                                 std::to_string(i) + " is an empty Array");
    const ArrayImpl& impl = *operands[i].impl();
    check_not_escaped(impl, loc);
    any_tracer |= impl.kind == ArrayImpl::Kind::Tracer;
    types.push_back({impl.dtype, impl.shape});
  }
  TensorType result;
  try {
    result = infer_type(op, types, attrs, declared);
  } catch (const ShapeError& e) {
    rethrow_located(e, loc);
  } catch (const DTypeError& e) {
    rethrow_located(e, loc);
  } catch (const InvalidGraphError& e) {
    rethrow_located(e, loc);
  }

  std::shared_ptr<TraceState> trace = current_trace();
  if (!trace && any_tracer) {
    // Only tracers of ended traces reach here, and check_not_escaped already threw.
    throw EscapedTracerError(std::string(op_name(op)) + " at " + where(loc) +
                             ": got a tracer outside of any trace");
  }
  if (!trace) return run_eagerly(op, operands, attrs, result, loc);

  Node n;
  n.op = op;
  n.dtype = result.dtype;
  n.shape = result.shape;
  n.attrs = attrs;
  n.origin.cpp = loc;
  for (const Array& a : operands) n.inputs.push_back(lift(*trace, a, loc));
  ValueId id = trace->graph.add(std::move(n));
  return make_tracer(trace, id);
}

}  // namespace detail
}  // namespace weft
