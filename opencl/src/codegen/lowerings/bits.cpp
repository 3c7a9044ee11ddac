// Bit operations on integers (shifts, population_count, clz) and bitcast_convert: each one's
// OpenCL C. Shifts guard their
// amount, since OpenCL C takes it modulo the bit width where XLA shifts every bit out.
#include <string>

#include "codegen/cl_types.h"
#include "codegen/expr_emitter.h"
#include "codegen/lowerings/families.h"

namespace weft::opencl::lowerings {
namespace {

std::string bit_width(DType t) {
  return std::to_string(8 * dtype_size(t));
}
// The unsigned and signed integer types of t's width.
std::string unsigned_bits(DType t) {
  switch (dtype_size(t)) {
    case 1:
      return "uchar";
    case 2:
      return "ushort";
    case 4:
      return "uint";
    default:
      return "ulong";
  }
}
std::string signed_bits(DType t) {
  switch (dtype_size(t)) {
    case 1:
      return "char";
    case 2:
      return "short";
    case 4:
      return "int";
    default:
      return "long";
  }
}

// `amount` (of op's dtype) shifts every bit out when it is at least the width, read unsigned.
std::string in_range(const ElementOp& op, const std::string& amount) {
  return "((" + unsigned_bits(op.dtype) + ")(" + amount + ") < " + bit_width(op.dtype) + "u)";
}

std::string shift_left(const ElementOp& op, const std::string& a, const std::string& b) {
  const std::string U = unsigned_bits(op.dtype);
  return "(" + in_range(op, b) + " ? (" + op.type + ")((" + U + ")(" + a + ") << (" + U + ")(" + b +
         ")) : (" + op.type + ")0)";
}

std::string shift_right_logical(const ElementOp& op, const std::string& a, const std::string& b) {
  const std::string U = unsigned_bits(op.dtype);
  return "(" + in_range(op, b) + " ? (" + op.type + ")((" + U + ")(" + a + ") >> (" + U + ")(" + b +
         ")) : (" + op.type + ")0)";
}

// The bits read as signed (u32 too, as XLA); past the width, the sign fills every bit.
std::string shift_right_arithmetic(const ElementOp& op, const std::string& a,
                                   const std::string& b) {
  const std::string S = signed_bits(op.dtype), U = unsigned_bits(op.dtype);
  return "(" + in_range(op, b) + " ? (" + op.type + ")((" + S + ")(" + a + ") >> (" + U + ")(" + b +
         ")) : (" + op.type + ")((" + S + ")(" + a + ") < 0 ? -1 : 0))";
}

std::string population_count(const ElementOp& op, const std::string& a) {
  return "((" + op.type + ")popcount(" + a + "))";
}
// OpenCL's clz gives the bit width for 0, as XLA.
std::string count_leading_zeros(const ElementOp& op, const std::string& a) {
  return "((" + op.type + ")clz(" + a + "))";
}

// A value's bits as the unsigned integer of its width, and back. f16 and bf16 values are held
// in floats (cl_types.h), so their bits come from the helpers of kHalfFloatHelpers.
std::string to_bits(DType t, const std::string& v) {
  if (t == DType::F16) return "weft_f16_bits(" + v + ")";
  if (t == DType::BF16) return "weft_float_to_bf16(" + v + ")";
  if (is_float(t)) return "as_" + unsigned_bits(t) + "(" + v + ")";
  return "((" + unsigned_bits(t) + ")(" + v + "))";
}
std::string from_bits(DType t, const std::string& bits) {
  if (t == DType::F16) return "weft_f16_from_bits((ushort)(" + bits + "))";
  if (t == DType::BF16) return "weft_bf16_to_float((ushort)(" + bits + "))";
  if (is_float(t)) return "as_" + cl_type(t) + "(" + bits + ")";
  return "((" + cl_type(t) + ")(" + bits + "))";
}

// Same width: the element at the same index. Wider to narrower: element l of the result is
// part l % ratio (low part first) of operand element l / ratio. Narrower to wider: result
// element l joins operand elements l * ratio + j, j = 0 .. ratio-1, the first lowest.
EmitTask bitcast_convert(ExprEmitter& emit, const Node& n, Index idx) {
  const Node& x = emit.graph().node(n.inputs[0]);
  const DType from = x.dtype, to = n.dtype;
  const std::size_t from_size = dtype_size(from), to_size = dtype_size(to);
  if (from_size == to_size) {
    std::string a = co_await emit.operand(n.inputs[0], idx);
    if (from == to) co_return a;
    co_return emit.bind_value(n, idx, from_bits(to, to_bits(from, a)));
  }
  const std::string l = emit.linear_of(idx);
  if (from_size > to_size) {
    const std::string ratio = std::to_string(from_size / to_size);
    Index at{"(" + l + ")/" + ratio, {}, x.shape};
    std::string a = co_await emit.operand(n.inputs[0], at);
    const std::string part = "(" + unsigned_bits(to) + ")(" + to_bits(from, a) + " >> (" +
                             std::to_string(8 * to_size) + "u * (uint)((" + l + ")%" + ratio +
                             ")))";
    co_return emit.bind_value(n, idx, from_bits(to, part));
  }
  const std::size_t ratio = to_size / from_size;
  std::string joined;
  for (std::size_t j = 0; j < ratio; ++j) {
    Index at{"(" + l + ")*" + std::to_string(ratio) + " + " + std::to_string(j), {}, x.shape};
    std::string a = co_await emit.operand(n.inputs[0], at);
    const std::string part = "((" + unsigned_bits(to) + ")" + to_bits(from, a) + ")";
    const std::string shifted =
        j == 0 ? part : "(" + part + " << " + std::to_string(8 * from_size * j) + ")";
    joined = j == 0 ? shifted : "(" + joined + " | " + shifted + ")";
  }
  co_return emit.bind_value(n, idx, from_bits(to, joined));
}

}  // namespace

void define_bit_lowerings(Lowerings& table) {
  table.add(binary(OpKind::ShiftLeft, shift_left));
  table.add(binary(OpKind::ShiftRightLogical, shift_right_logical));
  table.add(binary(OpKind::ShiftRightArithmetic, shift_right_arithmetic));
  table.add(element(OpKind::BitcastConvert, bitcast_convert));
  table.add(unary(OpKind::PopulationCount, population_count));
  table.add(unary(OpKind::Clz, count_leading_zeros));
}

}  // namespace weft::opencl::lowerings
