// The primitive set of the IR. Names are the spelling used in the canonical text form.
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
};

struct OpInfo {
  OpKind kind;
  std::string_view name;
  OpClass op_class;
  int arity;  // -1: variadic
};

const OpInfo& op_info(OpKind kind);
inline std::string_view op_name(OpKind kind) {
  return op_info(kind).name;
}
std::optional<OpKind> op_from_name(std::string_view name);

// Every primitive, in enum order (tests iterate over it).
std::string_view all_op_names_csv();
inline constexpr int kNumOpKinds = static_cast<int>(OpKind::DotGeneral) + 1;

inline bool is_elementwise(OpKind k) {
  OpClass c = op_info(k).op_class;
  return c == OpClass::Unary || c == OpClass::Binary || c == OpClass::Compare ||
         c == OpClass::Select || c == OpClass::Convert;
}
inline bool is_reduction(OpKind k) {
  return op_info(k).op_class == OpClass::Reduce;
}

}  // namespace weft
