// The typed exception hierarchy. Every message says what went wrong, where, and what to do.
#pragma once

#include <stdexcept>
#include <string>

namespace weft {

// Root of every error weft throws.
class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message) : std::runtime_error(message) {}
};

// Wrong shapes or incompatible dimensions given to an op (raised at trace time).
class ShapeError : public Error {
  using Error::Error;
};

// Wrong or unsupported element type for an op or a device.
class DTypeError : public Error {
  using Error::Error;
};

// A concrete value was asked of an abstract (traced) value.
class ConcretizationError : public Error {
  using Error::Error;
};

// A tracer was used after the trace that created it ended.
class EscapedTracerError : public Error {
  using Error::Error;
};

// Malformed IR text; the message names line and column.
class ParseError : public Error {
 public:
  ParseError(const std::string& message, int line, int column)
      : Error(message), line_(line), column_(column) {}
  int line() const { return line_; }
  int column() const { return column_; }

 private:
  int line_;
  int column_;
};

// A graph that breaks an IR invariant (bad operand count, attribute, type).
class InvalidGraphError : public Error {
  using Error::Error;
};

// Anything the device or its driver refused; carries the OpenCL error name in the message.
class DeviceError : public Error {
  using Error::Error;
};

// The device ran out of memory for a buffer or a launch.
class OutOfMemoryError : public DeviceError {
  using DeviceError::DeviceError;
};

// The OpenCL compiler rejected generated code (a weft bug or a driver limitation).
class BuildError : public DeviceError {
  using DeviceError::DeviceError;
};

// Bad user input that is not about shapes or types: a wrong argument, an unknown name.
class InvalidArgumentError : public Error {
  using Error::Error;
};

// Two trees (containers of arrays) that must have the same structure do not: a loop body that
// returns a carry shaped differently from its input, branches returning different containers.
// The message shows both structures.
class TreeStructureError : public Error {
  using Error::Error;
};

// A host callback failed: it threw, or returned results whose count, shape or dtype differ
// from the declared ones. Raised at the next wait on the computation's results or at the next
// effects barrier; original_message() is what the callback itself threw (or the mismatch).
// The name follows host_callback's CallbackException.
class CallbackException : public Error {
 public:
  CallbackException(const std::string& message, std::string original)
      : Error(message), original_(std::move(original)) {}
  const std::string& original_message() const { return original_; }

 private:
  std::string original_;
};

// Work dispatched from inside more nested callbacks than weft allows (a callback calling a
// jitted function whose callback calls it again, and so on): each level keeps a receiver thread,
// so the nesting is capped (kMaxCallbackNesting in weft/callback.h). Raised by the dispatch that
// would go one level deeper; it reaches the outermost wait unchanged.
class CallbackNestingError : public CallbackException {
 public:
  using CallbackException::CallbackException;
};

// The persistent program cache could not be opened or used (not a database, locked past the
// busy timeout, unwritable directory). Callers run uncached after one warning.
class CacheError : public Error {
  using Error::Error;
};

// A trace file (WEFT_TRACE, `weft run --trace`) could not be written, or a file given to the
// trace tools is not a readable weft trace (not one at all, truncated, corrupt, or from a newer
// weft). The message names the file.
class TraceError : public Error {
  using Error::Error;
};

// A transformation (jvp, grad, vmap, ...) cannot transform a primitive: it has no rule for that
// transformation (a host `call` under differentiation, a while loop under reverse mode). The
// message names the primitive, the transformation, the source line and what to use instead.
class TransformError : public Error {
  using Error::Error;
};

}  // namespace weft
