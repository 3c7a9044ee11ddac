// The tracing machinery shared by jit, the control-flow functions and, later, vmap/jvp/grad: a
// thread-local stack of active traces. While any trace is active every op is staged into the
// innermost one (omnistaging), even when all its operands are constants.
//
// The functions a control op takes (a loop body, a branch) are traced as regions: traces nested
// in the one that stages the control op. A region is isolated from above, so a value it closes
// over (a tracer of an enclosing trace, or a concrete array) becomes a trailing parameter of the
// region and is recorded in `captured`; the control op then passes it in as an operand, which
// lifts it into the enclosing trace in turn (closure conversion, through any depth of nesting).
#pragma once

#include <functional>
#include <memory>
#include <source_location>
#include <span>
#include <string>
#include <vector>

#include "weft/array.h"
#include "weft/ir/attrs.h"
#include "weft/ir/graph.h"
#include "weft/ir/shape_rules.h"

namespace weft::detail {

// One trace: the graph being built plus what is needed for good error messages.
struct TraceState {
  Graph graph;
  std::string function;               // user-facing name of the traced function
  std::source_location jit_location;  // where jit() (or the control-flow function) was called
  bool alive = true;
  // A region of a control op: it may capture tracers of the traces it is nested in. `api` is
  // the control-flow function ("while_loop") and `enclosing` describes the enclosing function.
  bool region = false;
  std::string api = "jit";
  std::string enclosing;
  // An eager numpy-level call traced only to run as one program (run_fused_eagerly); its
  // errors speak of the call, not of a traced function.
  bool eager_fusion = false;
  // A function a transformation will evaluate node by node (jvp, grad, vmap trace one; so is
  // linearize's linear part): custom_jvp, custom_vjp and checkpoint nodes are kept in it
  // rather than inlined.
  bool transformed = false;
  // Values the function closed over, hoisted to extra trailing parameters: concrete arrays and,
  // in a region, tracers of enclosing traces.
  std::vector<Array> captured;
  std::vector<ValueId> captured_params;

  // "'f' (jit at demo.cpp:12)"; a region: "'body_fn' (while_loop at demo.cpp:14) inside 'f'
  // (jit at demo.cpp:12)".
  std::string describe_function() const;
};

bool tracing_active();
std::shared_ptr<TraceState> current_trace();
// Whether a trace on this thread's stack is `transformed` (see TraceState).
bool transform_tracing_active();

// For its scope, ops are staged into the trace that encloses the current one (or run eagerly
// when there is none): a transformation stages primal ops into the outer trace while it traces
// their linear part in an inner one.
class SuspendInnermostTrace {
 public:
  SuspendInnermostTrace();
  ~SuspendInnermostTrace();
  SuspendInnermostTrace(const SuspendInnermostTrace&) = delete;
  SuspendInnermostTrace& operator=(const SuspendInnermostTrace&) = delete;

 private:
  std::shared_ptr<TraceState> suspended_;
};

// Pushes a new trace for the duration of a scope; on exit marks it dead so later uses of its
// tracers raise EscapedTracerError.
class TraceScope {
 public:
  TraceScope(std::string function, std::source_location jit_location);
  ~TraceScope();
  TraceScope(const TraceScope&) = delete;
  TraceScope& operator=(const TraceScope&) = delete;
  const std::shared_ptr<TraceState>& state() const { return state_; }
  // Adds parameter `index` of the given type and returns its tracer.
  Array add_parameter(const TensorType& type);
  // Stages an output value (lifting constants and captured arrays) and returns its id.
  ValueId stage_output(const Array& value, std::source_location where);

 private:
  std::shared_ptr<TraceState> state_;
};

// Applies a primitive: checks shapes and dtypes (errors name the op, the shapes and `loc`),
// then stages it into the current trace or, outside any trace, runs it eagerly.
Array bind(OpKind op, std::span<const Array> operands, const Attrs& attrs,
           const TensorType& declared, const std::source_location& loc);

// Outside any trace, runs `fn` (a few primitives, e.g. a broadcast and an add) as one traced
// and compiled program, so an eager numpy-level call costs one kernel; inside a trace it just
// calls `fn`.
Array run_fused_eagerly(const std::function<Array()>& fn, const char* name,
                        const std::source_location& loc);

// Number of eager single-op executions so far (tests check that traced code runs none).
std::int64_t eager_op_count();

// What a region of a control op is called: `name` is the region's graph name (region_name:
// "cond", "body", "branch0"), `function` the user-facing name in messages ("body_fn"), `api`
// the control-flow function ("while_loop") and `loc` the user's line that called it.
struct RegionInfo {
  std::string name;
  std::string function;
  std::string api;
  std::source_location loc;
  bool transformed = false;  // TraceState::transformed
};

// A function traced as a region.
struct TracedRegion {
  Graph graph;                  // canonical; parameters: the explicit ones, then the captured
  std::vector<Array> captured;  // what it closed over: enclosing tracers, concrete arrays
  std::size_t explicit_params = 0;
};

// Traces `fn` as a region with parameters of the given types: fn gets their tracers and returns
// the region's outputs (literals are staged as constants, closed-over values captured).
TracedRegion trace_region(const RegionInfo& info, std::span<const TensorType> params,
                          const std::function<std::vector<Array>(const std::vector<Array>&)>& fn);

// Gives every region the same trailing captured parameters: the union of their captures in
// first-use order (a region that did not use one gets an unused parameter). Returns the union,
// which the control op passes as its trailing operands.
std::vector<Array> unify_captures(std::span<TracedRegion> regions);

// Applies a control op (see regions.h for operands, attributes and regions): stages it into the
// current trace and returns tracers of its results; outside any trace, traces the one op into a
// throwaway program, compiles it on the operands' device and returns concrete arrays.
// `custom`: a custom op's rules (Node::custom).
std::vector<Array> bind_control(OpKind op, std::span<const Array> operands, const Attrs& attrs,
                                std::vector<Graph> regions, std::vector<TensorType> results,
                                const std::string& api, const std::source_location& loc,
                                std::shared_ptr<const CustomRules> custom = nullptr);

// Runs a program traced to run one call eagerly (a control op, a host op), its parameters
// being `captured`'s concrete arrays, on their device (or on `device` when given: they must
// live there) with this thread's effect tokens.
std::vector<Array> run_eager_program(const Graph& graph, const std::vector<Array>& captured,
                                     const std::string& api, const std::source_location& loc,
                                     Device* device = nullptr);

}  // namespace weft::detail
