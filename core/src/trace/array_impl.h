// The state behind an Array handle (private to core).
#pragma once

#include <cstdint>
#include <memory>
#include <source_location>
#include <span>
#include <string>

#include "weft/backend.h"
#include "weft/dtype.h"
#include "weft/host_array.h"
#include "weft/ir/graph.h"
#include "weft/shape.h"
#include "weft/trace/trace.h"

namespace weft::detail {

struct ArrayImpl {
  enum class Kind { Literal, Concrete, Tracer };
  Kind kind = Kind::Literal;
  DType dtype = DType::F32;
  Shape shape;
  // Literal: a scalar; float dtypes use float_value, the others int_value.
  double float_value = 0;
  std::int64_t int_value = 0;
  // Concrete.
  std::shared_ptr<Buffer> buffer;
  // Tracer.
  std::shared_ptr<TraceState> trace;
  ValueId id = -1;
};

inline const ArrayImpl& impl_of(const Array& a, const char* what) {
  if (!a.valid())
    throw InvalidArgumentError(
        std::string(what) + ": the array is empty (default-constructed); assign it a value first");
  return *a.impl();
}

Array make_concrete(std::shared_ptr<Buffer> buffer, DType dtype, Shape shape);
// A literal's one element.
HostArray literal_to_host(const ArrayImpl& impl);
Array make_tracer(std::shared_ptr<TraceState> trace, ValueId id);

// The error for using a tracer where a concrete value is needed.
[[noreturn]] void throw_concretization_error(const ArrayImpl& tracer, const std::string& what,
                                             const std::source_location& loc);
// Throws EscapedTracerError if `a` is a tracer whose trace has ended.
void check_not_escaped(const ArrayImpl& a, const std::source_location& loc);

// The same value: one handle, or tracers of one node of one trace.
inline bool same_value(const Array& a, const Array& b) {
  if (a.impl() == b.impl()) return true;
  const ArrayImpl& x = *a.impl();
  const ArrayImpl& y = *b.impl();
  return x.kind == ArrayImpl::Kind::Tracer && y.kind == ArrayImpl::Kind::Tracer &&
         x.trace == y.trace && x.id == y.id;
}

// The value id of `a` inside trace `t`: `a` itself when it is t's, a staged constant for a
// literal, a captured parameter for a concrete array or a tracer of an enclosing trace (t a
// region); EscapedTracerError for a tracer of an ended or unrelated trace.
ValueId lift(TraceState& t, const Array& a, const std::source_location& loc);

// "file.cpp:12 (fn)" or "unknown location".
std::string describe_location(const std::source_location& loc);

// The device the concrete arrays among `arrays` live on (the default device when none is);
// InvalidArgumentError naming `what` and `loc` when they live on different devices.
Device& common_device(std::span<const Array> arrays, const std::string& what,
                      const std::source_location& loc);

// Counts one eager execution (eager_op_count).
void count_eager_op();

}  // namespace weft::detail
