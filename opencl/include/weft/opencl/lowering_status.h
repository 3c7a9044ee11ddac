// How the OpenCL code generator handles a primitive, for tests and tools that walk every
// primitive (the table itself is opencl/src/codegen/lowering.h).
#pragma once

#include <string>

#include "weft/ir/op_kind.h"

namespace weft::opencl {

// "emitter" (computed inside fused kernels by its expression emitter), "kernel:<kind>" (run by
// a kernel kind of its own: reduce, dot, loop_in) or "none: <why it never reaches code
// generation>".
std::string lowering_status(OpKind op);

}  // namespace weft::opencl
