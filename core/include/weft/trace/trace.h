// The tracing machinery shared by jit and, later, by vmap/jvp/grad: a thread-local stack of
// active traces. While any trace is active every op is staged into the innermost one
// (omnistaging), even when all its operands are constants.
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
  std::source_location jit_location;  // where jit() was called
  bool alive = true;
  // An eager numpy-level call traced only to run as one program (run_fused_eagerly); its
  // errors speak of the call, not of a traced function.
  bool eager_fusion = false;
  // Concrete arrays the function closed over, hoisted to extra trailing parameters.
  std::vector<Array> captured;
  std::vector<ValueId> captured_params;

  std::string describe_function() const;  // "'f' (jit at demo.cpp:12)"
};

bool tracing_active();
std::shared_ptr<TraceState> current_trace();

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

}  // namespace weft::detail
