// Binary elementwise primitives (operands of one dtype and shape): each one's OpenCL C
// expression, and the integer power function the program's header holds for pow.
#include <cmath>
#include <optional>
#include <string>
#include <utility>

#include "codegen/cl_types.h"
#include "codegen/lowerings/families.h"
#include "weft/ir/op_attrs.h"

namespace weft::opencl::lowerings {
namespace {

// Signed integers wrap around through their unsigned type; the rest compute as they are.
std::string wrapping(const ElementOp& op, const std::string& a, const char* sym,
                     const std::string& b) {
  if (!is_signed_integer(op.dtype)) return "(" + a + " " + sym + " " + b + ")";
  const std::string U = unsigned_of(op.dtype);
  return "((" + op.type + ")((" + U + ")(" + a + ") " + sym + " (" + U + ")(" + b + ")))";
}

std::string add(const ElementOp& op, const std::string& a, const std::string& b) {
  return wrapping(op, a, "+", b);
}
std::string sub(const ElementOp& op, const std::string& a, const std::string& b) {
  return wrapping(op, a, "-", b);
}
std::string mul(const ElementOp& op, const std::string& a, const std::string& b) {
  return wrapping(op, a, "*", b);
}

// Integer division by 0 gives -1 (all ones unsigned), and MIN / -1 wraps, as the interpreter.
std::string div(const ElementOp& op, const std::string& a, const std::string& b) {
  const std::string& T = op.type;
  if (is_float(op.dtype)) return "(" + a + " / " + b + ")";
  if (is_unsigned_integer(op.dtype))
    return "(" + b + " == (" + T + ")0 ? " + cl_highest(op.dtype) + " : (" + T + ")(" + a + " / " +
           b + "))";
  return "(" + b + " == 0 ? (" + T + ")-1 : ((" + b + " == (" + T + ")-1) ? (" + T + ")(-(" +
         unsigned_of(op.dtype) + ")(" + a + ")) : " + a + " / " + b + "))";
}

std::string rem(const ElementOp& op, const std::string& a, const std::string& b) {
  const std::string& T = op.type;
  if (is_float(op.dtype)) return "fmod(" + a + ", " + b + ")";
  if (is_unsigned_integer(op.dtype))
    return "(" + b + " == (" + T + ")0 ? " + a + " : (" + T + ")(" + a + " % " + b + "))";
  return "(" + b + " == 0 ? " + a + " : (" + b + " == (" + T + ")-1 ? (" + T + ")0 : " + a + " % " +
         b + "))";
}

std::string pow(const ElementOp& op, const std::string& a, const std::string& b) {
  if (is_float(op.dtype)) return "pow(" + a + ", " + b + ")";
  return "weft_ipow_" + op.type + "(" + a + ", " + b + ")";
}

// Integer power by squaring with wrap-around; negative exponents follow the interpreter.
std::string integer_pow_definition(DType t) {
  if (!is_integer(t)) return "";
  const std::string T = cl_type(t);
  const std::string U = unsigned_of(t);
  std::string s = "static " + T + " weft_ipow_" + T + "(" + T + " base, " + T + " e) {\n";
  if (is_signed_integer(t))
    s += "  if (e < 0) return base == 1 ? (" + T + ")1 : (base == -1 ? ((e & 1) ? (" + T +
         ")-1 : (" + T + ")1) : (" + T + ")0);\n";
  s += "  " + U + " r = 1, b = (" + U + ")base;\n  " + U + " n = (" + U + ")e;\n" +
       "  while (n) { if (n & 1) r *= b; b *= b; n >>= 1; }\n  return (" + T + ")r;\n}\n";
  return s;
}

// The value of v when it is a float constant, perhaps broadcast or reshaped (the same at every
// element).
std::optional<double> float_constant(const Graph& graph, ValueId v) {
  for (;;) {
    const Node& n = graph.node(v);
    if (n.op == OpKind::Constant && is_float(n.dtype)) return ConstantAttrs::float_value(n.attrs);
    if (n.op != OpKind::BroadcastInDim && n.op != OpKind::Reshape) return std::nullopt;
    v = n.inputs[0];
  }
}

// IEEE 754-2019 maximum and minimum, as the interpreter computes them: NaN if either operand
// is NaN, and +0 > -0. fmax/fmin and compare-and-select leave the zero's sign to the
// compiler (LLVM treats equal values as interchangeable), so equal operands are merged by
// their bits: AND keeps the sign only when both are -0 (max), OR when either is (min).
std::string float_max_min(const ElementOp& op, const std::string& a, const std::string& b) {
  const Node& n = op.node;
  const bool is_max = n.op == OpKind::Max;
  // max and min commute: put a constant operand, if any, second.
  std::optional<double> c = float_constant(op.graph, n.inputs[1]);
  std::string v = a, k = b;
  if (!c && (c = float_constant(op.graph, n.inputs[0]))) std::swap(v, k);
  // A constant other than NaN and zero: one compare and select (vmaxps/vminps on x86), which
  // keeps NaN in the other operand, since NaN fails the comparison.
  const std::string select = "((" + v + (is_max ? " < " : " > ") + k + ") ? " + k + " : " + v + ")";
  if (c && !std::isnan(*c) && *c != 0) return select;
  // max(v, +0) (a ReLU): adding +0 turns whichever zero the select gave into +0.
  if (c && is_max && *c == 0 && !std::signbit(*c)) return "(" + select + " + " + k + ")";
  const DType t = n.dtype;
  const std::string w = op.vector ? std::to_string(op.width) : "";
  const std::string F = cl_type(t) + w, I = std::string(t == DType::F64 ? "long" : "int") + w;
  auto bits = [&](const std::string& x) { return "as_" + I + "((" + F + ")(" + x + "))"; };
  const std::string merged = "as_" + F + "(" + bits(a) + (is_max ? " & " : " | ") + bits(b) + ")";
  return "((isnan(" + a + ") || isnan(" + b + ")) ? (" + a + " + " + b + ") : ((" + a + " == " + b +
         ") ? " + merged + " : f" + (is_max ? "max" : "min") + "(" + a + ", " + b + ")))";
}

std::string max(const ElementOp& op, const std::string& a, const std::string& b) {
  if (is_float(op.dtype)) return float_max_min(op, a, b);
  return "max(" + a + ", " + b + ")";
}
std::string min(const ElementOp& op, const std::string& a, const std::string& b) {
  if (is_float(op.dtype)) return float_max_min(op, a, b);
  return "min(" + a + ", " + b + ")";
}

std::string atan2(const ElementOp&, const std::string& a, const std::string& b) {
  return "atan2(" + a + ", " + b + ")";
}

// Bitwise on integers, logical on bool.
std::string bit_and(const ElementOp& op, const std::string& a, const std::string& b) {
  return op.dtype == DType::Bool ? "(" + a + " && " + b + ")" : "(" + a + " & " + b + ")";
}
std::string bit_or(const ElementOp& op, const std::string& a, const std::string& b) {
  return op.dtype == DType::Bool ? "(" + a + " || " + b + ")" : "(" + a + " | " + b + ")";
}
std::string bit_xor(const ElementOp& op, const std::string& a, const std::string& b) {
  return op.dtype == DType::Bool ? "(" + a + " != " + b + ")" : "(" + a + " ^ " + b + ")";
}

}  // namespace

void define_binary_lowerings(Lowerings& table) {
  table.add(binary(OpKind::Add, add));
  table.add(binary(OpKind::Sub, sub));
  table.add(binary(OpKind::Mul, mul));
  table.add(binary(OpKind::Div, div));
  table.add(binary(OpKind::Rem, rem));
  Lowering power = binary(OpKind::Pow, pow);
  power.header = integer_pow_definition;
  table.add(power);
  table.add(binary(OpKind::Max, max));
  table.add(binary(OpKind::Min, min));
  table.add(binary(OpKind::Atan2, atan2));
  table.add(binary(OpKind::And, bit_and));
  table.add(binary(OpKind::Or, bit_or));
  table.add(binary(OpKind::Xor, bit_xor));
}

}  // namespace weft::opencl::lowerings
