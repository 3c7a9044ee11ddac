// The primitive set of the IR. Names are the spelling used in the canonical text form.
//
// Adding a primitive (docs/architecture.md, "Adding a primitive"; the primitive walk test,
// tests/primitive_walk_test.cpp, fails naming each part still missing):
//  1. An enumerator below (kNumOpKinds follows the last one).
//  2. Its one definition, in its family file under core/src/primitives/: its row (name, class,
//     arity, fusion cost, math call, lane work), type and dtype rule, reference evaluator, and
//     jvp, transpose and batching rules or an explicit none("...") with the message users get;
//     a family helper gives the family's defaults. A control op also states its regions, its
//     control flow and where effect tokens go.
//  3. The tracer-facing function in ops.h (lax level) and, where numpy has it, np.h.
//  4. Its OpenCL lowering: an emitter (and math-library function) in its family file under
//     opencl/src/codegen/lowerings/, or the kernel kind that runs it.
//  5. Its attributes in docs/ir-text.md, its name in the fuzzer dictionary tests/fuzz/weft.dict,
//     a sample graph in tests/support/primitive_samples.h, and oracle data from JAX
//     (tools/oracles/) checked on the interpreter and the device.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace weft {

enum class OpKind : std::uint8_t {
  // Leaves.
  Parameter,  // attrs: index
  Constant,   // attrs: value (int for integer/bool dtypes, float for float dtypes)
  Iota,       // attrs: dimension
  // Unary elementwise.
  Neg,
  Abs,
  Sign,
  Floor,
  Ceil,
  Round,
  Exp,
  Exp2,
  Log,
  Log1p,
  Expm1,
  Sqrt,
  Rsqrt,
  Sin,
  Cos,
  Tan,
  Tanh,
  Logistic,
  Erf,
  Not,
  // Binary elementwise (operands have equal shapes and dtypes).
  Add,
  Sub,
  Mul,
  Div,
  Rem,
  Pow,
  Max,
  Min,
  Atan2,
  And,
  Or,
  Xor,
  // Comparisons produce bool.
  Eq,
  Ne,
  Lt,
  Le,
  Gt,
  Ge,
  // select(pred: bool, on_true, on_false), all of one shape.
  Select,
  Convert,             // to the node's dtype
  BroadcastInDim,      // attrs: dims (operand dim i maps to output dim dims[i])
  Reshape,             // row-major, same element count
  Transpose,           // attrs: permutation (output dim i is operand dim permutation[i])
  Slice,               // attrs: start, limit, stride
  DynamicSlice,        // operands: x, then one scalar integer start per dim; attrs: sizes
  DynamicUpdateSlice,  // operands: x, update, then one scalar integer start per dim
  Concatenate,         // variadic; attrs: dimension
  Pad,                 // operands: x, scalar pad value; attrs: low, high, interior
  // Reductions over attrs.axes (sorted, unique); output drops those axes.
  ReduceSum,
  ReduceProd,
  ReduceMax,
  ReduceMin,
  ArgMax,
  ArgMin,  // output dtype i32 or i64: the row-major index within the reduced axes
  // attrs: lhs_contracting, rhs_contracting, lhs_batch, rhs_batch.
  // Output dims: batch, then lhs free dims, then rhs free dims (as XLA).
  DotGeneral,
  // Structure: ops with several results and ops owning regions (sub-graphs that see only
  // their own parameters; see regions.h for each signature).
  Result,  // attrs: index; operand: the multi-result node just before it (see graph.h)
  While,   // operands: carries, then captured values; attrs: carries. Regions: cond, body
  Cond,    // operands: index (bool or integer scalar), then branch operands. Regions: branches
  Scan,    // operands: carries, xs, captured; attrs: carries, xs, length, reverse. Region: body
  // Effects and host callbacks (see effects.h): run on the host, several results (like control
  // ops, read through Result nodes), no regions. Operands: an optional token first, then the
  // arrays sent to the host; results: a token first when there is a token operand or an
  // effect to wait for, then the arrays the host returns.
  DebugPrint,  // attrs: format (string, "{}" per array), ordered (0/1). No array results
  HostCall,    // attrs: callback (slot in Graph::callbacks), effect (string; absent: pure),
               // ordered (0/1)
  AfterAll,    // tokens -> one token, ready once all are (none: ready at once)
  // Bit operations and the remaining elementwise ops (primitives/bits.cpp, bitcast.cpp).
  ShiftLeft,             // XLA's: a shift by the bit width or more gives 0
  ShiftRightLogical,     // ... 0
  ShiftRightArithmetic,  // ... the sign fill
  // The bits of the operand read as the node's dtype: the same shape for one width; a wider
  // operand adds a trailing axis of width ratio, a narrower one consumes it (as XLA).
  BitcastConvert,
  PopulationCount,
  Clz,
  IsFinite,    // f32/f64 -> bool
  NextAfter,   // the next float after x towards y
  Clamp,       // operands: lo, x, hi; lo and hi of x's shape or scalars
  IntegerPow,  // attrs: y (negative only for floats)
  SelectN,     // operands: which (bool or i32, x's shape or scalar), then the cases
  ErfInv,
  // Cumulative ops, rev and sorting (core/src/primitives/cumulative.cpp, rev.cpp, sort.cpp).
  // attrs: axis, reverse (0/1). Each runs in a kernel of its own as a parallel scan.
  Cumsum,
  Cumprod,
  Cummax,
  Cummin,
  Cumlogsumexp,
  Rev,  // attrs: dimensions (distinct axes, each reversed)
  // Along attrs.dimension, stable, NaN last (sort.cpp): the sorted values of one operand;
  // the sorting permutation (i32) of one or more keys, compared lexicographically.
  Sort,     // attrs: dimension, is_stable
  Argsort,  // attrs: dimension, is_stable
  // The k largest along the last axis (NaN largest, ties lower position first): their values,
  // their positions (i32).
  TopK,         // attrs: k
  TopKIndices,  // attrs: k
  // Gather and scatter (jax.lax semantics, XLA's dimension numbers; attrs: GatherAttrs and
  // ScatterAttrs in weft/ir/op_attrs.h). gather(operand, indices); scatter*(operand, indices,
  // updates). Index vectors run along the indices' last axis, as in JAX.
  Gather,
  Scatter,  // replace: where updates collide, the last in update order wins
  ScatterAdd,
  ScatterMul,
  ScatterMin,
  ScatterMax,
  // Convolution (jax.lax.conv_general_dilated; attrs: ConvAttrs in weft/ir/op_attrs.h):
  // conv_general_dilated(lhs, rhs). A kernel of its own (opencl/src/codegen/conv_kernel.cpp).
  ConvGeneralDilated,
  // Windowed reductions (jax.lax semantics; attrs: WindowAttrs in weft/ir/op_attrs.h;
  // core/src/primitives/window.cpp): each output element reduces one window of the operand, its
  // padding and base-dilation holes holding the reduction's identity.
  ReduceWindowSum,
  ReduceWindowMax,
  ReduceWindowMin,
  // reduce_window_max/min's jvp and transpose (select_window.cpp), attrs as reduce_window's and
  // select_prim (ge: the max, le: the min). select_and_gather_add(tangents, operand): per window,
  // the tangent where the operand's fold chooses; select_and_scatter_add(source, operand), no
  // dilation: each source element added where its window chooses.
  SelectAndGatherAdd,
  SelectAndScatterAdd,
  // Linear algebra (core/src/primitives/linalg.cpp), jax.lax.linalg's semantics over the last two
  // axes, the leading ones a batch; each runs in a kernel of its own.
  Cholesky,         // lower-triangular L with L L^T = x (x's lower triangle read); NaN if not PD
  TriangularSolve,  // operands: a, b; attrs: left_side, lower, transpose_a, conjugate_a,
                    // unit_diagonal
  // LU with partial pivoting of x [..., m, n] (lax.linalg.lu's three results, one op each): L
  // below the diagonal (unit diagonal implied) and U on and above it; the row swapped with row
  // i at step i (i32, [..., min(m, n)]); the permutation the swaps make (i32, [..., m]).
  Lu,
  LuPivots,
  LuPermutation,
  // Eigendecomposition of a symmetric x [..., n, n] (lax.linalg.eigh's two results, one op each;
  // core/src/primitives/eigh.cpp; attrs: EighAttrs): the eigenvectors in columns [..., n, n]
  // and the eigenvalues [..., n], ascending when sort_eigenvalues; one triangle of x is read.
  EighVectors,
  EighValues,
  // Ops that exist only in graphs a transformation traces: their rules are their meaning (they
  // hang off Node::custom, or are the pmap collectives'); they are inlined or rewritten before
  // anything compiles (see is_transformation_only).
  // A sub-function with rules of its own (weft/transforms/custom.h): operands are the function's
  // arguments (for custom_jvp and custom_vjp the first `inputs`), then the values it closes
  // over. Region: body(operands) -> results.
  CustomJvp,   // attrs: inputs
  CustomVjp,   // attrs: inputs
  Checkpoint,  // no attrs: the body is recomputed in the linear part
  // A custom_vjp's linear part: operands: tangents, then residuals; attrs: tangents. No region:
  // its transpose calls bwd.
  CustomLin,
  // The pmap collectives (weft/transforms/pmap.h): attrs: axis_name. No region.
  Psum,
  Pmean,
  Pmax,
  AllGather,  // result: the devices' values stacked along a new leading axis
  AxisIndex,  // no operands; result: i32[], this device's index along the axis
};

enum class OpClass : std::uint8_t {
  Leaf,
  Unary,
  Binary,
  Compare,
  Select,
  Convert,
  Layout,  // broadcast, reshape, transpose, slice, dynamic slices, concatenate, pad
  Reduce,
  Dot,
  Result,   // projection of one result of a multi-result node
  Control,  // owns regions (custom_lin and the collectives none) and has several results
  Host,     // runs on the host (a print, a callback): several results, no regions
  Token,    // joins tokens
  // Cumulative ops along one axis (cumsum, cumprod, ...): a kernel of their own.
  Cumulative,
  // Sorting along one axis (sort, argsort, top_k): a kernel of their own.
  Sort,
  // Convolutions: a kernel of their own.
  Convolution,
  // Windowed reductions and their select_and_* companions: a kernel of their own.
  Window,
  // Linear algebra over the last two axes (cholesky, triangular_solve, lu, eigh): a kernel of their
  // own.
  Linalg,
};

// What passes and backends may ask of any primitive, stated by its one definition
// (core/src/primitives/).
struct OpInfo {
  OpKind kind;
  std::string_view name;
  OpClass op_class;
  int arity;  // -1: variadic
  // Fusion's cost of computing the op again in every kernel that reads it, instead of storing
  // it once: 0 free (layout, convert, select, leaves), 1 cheap, 4 expensive.
  int fusion_cost = 1;
  // A call into the math library (exp, log, sin, erf, pow...): weighs kMathCallWeight in a
  // kernel's size (compile/group_size_limit.h).
  bool math_call = false;
  // Compute-bound per element (math calls, roundings, square roots): on CPUs a loop kernel
  // whose f32 group holds such ops runs them as 16-lane vectors (codegen/loop_kernel.cpp).
  bool lane_work = false;
  // Exists only while a transformation traces a function (custom_jvp, custom_vjp, checkpoint,
  // custom_lin, the pmap collectives): inlined or rewritten before anything compiles.
  bool transformation_only = false;
  // A pmap collective: combines the values of the devices pmap runs on, so pmap splits its
  // function there.
  bool collective = false;
  // The jax.lax (or jax) names users know the op by, space-separated: empty when JAX's name is
  // the op's own, "-" when JAX has no such primitive (weft's parameters and result projections).
  std::string_view jax_names = {};
  // Runs in a kernel of its own (or several launches: multi-pass scans and sorts) that reads
  // its operands from buffers and writes its result to one: nothing fuses into it. Its
  // lowering is an own-kernel emitter (opencl/src/codegen/lowering.h).
  bool own_kernel = false;
  // Own-kernel ops that compute one thing and keep different parts of it (lu, lu_pivots,
  // lu_permutation: the factorization) share a family name: where several read the same
  // operands, one kernel writes them all (the first writes the others as side outputs).
  std::string_view own_kernel_family = {};
};

const OpInfo& op_info(OpKind kind);
inline std::string_view op_name(OpKind kind) {
  return op_info(kind).name;
}
std::optional<OpKind> op_from_name(std::string_view name);

// Every primitive, in enum order (tests iterate over it).
std::string_view all_op_names_csv();
inline constexpr int kNumOpKinds = static_cast<int>(OpKind::AxisIndex) + 1;

inline bool is_elementwise(OpKind k) {
  OpClass c = op_info(k).op_class;
  return c == OpClass::Unary || c == OpClass::Binary || c == OpClass::Compare ||
         c == OpClass::Select || c == OpClass::Convert;
}
inline bool is_reduction(OpKind k) {
  return op_info(k).op_class == OpClass::Reduce;
}
// Control ops have regions and several results, each read through a Result node.
inline bool is_control(OpKind k) {
  return op_info(k).op_class == OpClass::Control;
}
inline bool is_host_op(OpKind k) {
  return op_info(k).op_class == OpClass::Host;
}
inline bool is_transformation_only(OpKind k) {
  return op_info(k).transformation_only;
}
inline bool is_collective(OpKind k) {
  return op_info(k).collective;
}
// Nodes whose values are their Result nodes: control ops and host ops.
inline bool is_multi_result(OpKind k) {
  return is_control(k) || is_host_op(k);
}

}  // namespace weft
