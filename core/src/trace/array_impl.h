// The state behind an Array handle (private to core).
#pragma once

#include <cstdint>
#include <memory>

#include "weft/backend.h"
#include "weft/dtype.h"
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
Array make_tracer(std::shared_ptr<TraceState> trace, ValueId id);

// The error for using a tracer where a concrete value is needed.
[[noreturn]] void throw_concretization_error(const ArrayImpl& tracer, const std::string& what,
                                             const std::source_location& loc);
// Throws EscapedTracerError if `a` is a tracer whose trace has ended.
void check_not_escaped(const ArrayImpl& a, const std::source_location& loc);

}  // namespace weft::detail
