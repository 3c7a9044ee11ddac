// How each primitive becomes OpenCL C, registered per primitive as JAX registers lowerings: one
// entry per OpKind, written in its family's file under codegen/lowerings/ (unary.cpp,
// binary.cpp, ...), so that core/ stays device-free and a primitive's code generation lives in
// one place. An entry is exactly one of: an expression emitter (the op computes one element
// inside any fused kernel), the kernel kind that runs it, or the reason it never reaches code
// generation. registry.cpp checks that every OpKind has exactly one entry.
#pragma once

#include <string>
#include <string_view>

#include "codegen/emit_task.h"
#include "codegen/math_library.h"
#include "weft/compile/fusion.h"
#include "weft/ir/graph.h"

namespace weft::opencl {

class ExprEmitter;
struct Index;
struct KernelContext;

// What an elementwise expression is written for.
struct ElementOp {
  const Graph& graph;
  const Node& node;
  DType dtype;       // the first operand's (for unary ops also the result's)
  std::string type;  // its OpenCL C type
  bool vector;       // the operands are `width`-lane vectors
  int width;
};

// The expression of one element from its operands' expressions at the same index.
using UnaryExpr = std::string (*)(const ElementOp& op, const std::string& a);
using BinaryExpr = std::string (*)(const ElementOp& op, const std::string& a, const std::string& b);
// Any other op a fused kernel computes: a coroutine that co_awaits its operands at the indices
// it derives from `idx` (ExprEmitter::operand) and co_returns the element's expression.
using ElementTask = EmitTask (*)(ExprEmitter& emit, const Node& node, Index idx);
// A definition the program's header holds when some node of this op has dtype `t` (the
// integer power function); empty when that dtype needs none.
using HeaderDefinition = std::string (*)(DType t);

// How a reduce kernel (codegen/reduce_kernel.cpp) folds the elements of one reduction, whose
// operand has dtype `t`.
struct Reduction {
  std::string (*identity)(DType t);  // the accumulator's first value
  // `acc` (op) `v`, as an expression; null for arg-reductions, which use `takes`.
  std::string (*combine)(DType t, const std::string& acc, const std::string& v) = nullptr;
  // Arg-reductions: whether candidate (v, i) replaces the best so far (bv, bi).
  std::string (*takes)(DType t, const std::string& bv, const std::string& bi, const std::string& v,
                       const std::string& i) = nullptr;
  // Whether an f32 row may fold 16 lanes at a time, then the lanes in order (the row phase of
  // reduce_kernel.cpp).
  bool folds_lanes = false;
};

// An op with a kernel of its own (OpInfo::own_kernel): writes the kernel(s) of `group` (the op
// alone, its operands in buffers) into ctx.source, named from `name` on, and adds their
// launches (several for multi-pass scans and sorts) with ctx.add_launch.
using OwnKernelEmitter = void (*)(KernelContext& ctx, const FusionGroup& group,
                                  const std::string& name);

struct Lowering {
  OpKind op;
  // Exactly one of the next five.
  UnaryExpr unary = nullptr;
  BinaryExpr binary = nullptr;
  ElementTask element = nullptr;
  std::string_view kernel = {};  // the kernel kind that runs it: codegen/<kernel>_kernel.cpp
  std::string_view never = {};   // why the op never reaches code generation
  // With `unary`: weft's own f32 function, called instead of the expression unless the device
  // uses its builtin math (DeviceCaps::builtin_math).
  const MathFunction* math = nullptr;
  HeaderDefinition header = nullptr;
  // With kernel "reduce": how the kernel folds.
  const Reduction* reduction = nullptr;
  // With `kernel`, exactly for ops with kernels of their own: what writes and launches them.
  OwnKernelEmitter own_kernel = nullptr;
};

// The entry of `op`; the table is built, and checked, at the first call.
const Lowering& lowering(OpKind op);

}  // namespace weft::opencl
