// Binary ops, element by element. Floats compute in double and round to the node dtype;
// integers compute in two's complement and wrap.
#include <cmath>
#include <cstdint>

#include "value.h"

namespace weft::interp {

namespace {

using U64 = std::uint64_t;

// IEEE 754-2019 maximum/minimum: NaN if either operand is, and +0 > -0.
double float_max(double a, double b) {
  if (std::isnan(a)) return a;
  if (std::isnan(b)) return b;
  if (a == b) return std::signbit(a) ? b : a;
  return a > b ? a : b;
}
double float_min(double a, double b) {
  if (std::isnan(a)) return a;
  if (std::isnan(b)) return b;
  if (a == b) return std::signbit(a) ? a : b;
  return a < b ? a : b;
}

double binary_float(OpKind op, double a, double b) {
  switch (op) {
    case OpKind::Add:
      return a + b;
    case OpKind::Sub:
      return a - b;
    case OpKind::Mul:
      return a * b;
    case OpKind::Div:
      return a / b;
    case OpKind::Rem:
      return std::fmod(a, b);
    case OpKind::Pow:
      return std::pow(a, b);
    case OpKind::Max:
      return float_max(a, b);
    case OpKind::Min:
      return float_min(a, b);
    case OpKind::Atan2:
      return std::atan2(a, b);
    default:
      break;
  }
  throw InvalidGraphError("interpret: " + std::string(op_name(op)) + " is not defined for floats");
}

std::int64_t int_pow(DType t, std::int64_t base, std::int64_t exponent) {
  if (exponent < 0) {
    if (base == 1) return 1;
    if (base == -1) return (exponent & 1) ? -1 : 1;
    return 0;
  }
  U64 result = 1;
  U64 square = static_cast<U64>(base);
  for (U64 e = static_cast<U64>(exponent); e != 0; e >>= 1) {
    if (e & 1) result *= square;
    square *= square;
  }
  return wrap_to(t, result);
}

std::int64_t binary_int(OpKind op, DType t, std::int64_t a, std::int64_t b) {
  const U64 ua = static_cast<U64>(a);
  const U64 ub = static_cast<U64>(b);
  const bool is_signed = is_signed_integer(t);
  switch (op) {
    case OpKind::Add:
      return wrap_to(t, ua + ub);
    case OpKind::Sub:
      return wrap_to(t, ua - ub);
    case OpKind::Mul:
      return wrap_to(t, ua * ub);
    case OpKind::Div:
      // Defined results where C++ has none, matching the generated OpenCL code.
      if (b == 0) return is_signed ? -1 : int_highest(t);
      if (is_signed && a == int_lowest(t) && b == -1) return a;
      return a / b;
    case OpKind::Rem:
      if (b == 0) return a;
      if (is_signed && a == int_lowest(t) && b == -1) return 0;
      return a % b;
    case OpKind::Pow:
      return int_pow(t, a, b);
    case OpKind::Max:
      return a > b ? a : b;
    case OpKind::Min:
      return a < b ? a : b;
    case OpKind::And:
      return wrap_to(t, ua & ub);
    case OpKind::Or:
      return wrap_to(t, ua | ub);
    case OpKind::Xor:
      return wrap_to(t, ua ^ ub);
    default:
      break;
  }
  throw InvalidGraphError("interpret: " + std::string(op_name(op)) + " is not defined for " +
                          std::string(dtype_name(t)));
}

}  // namespace

Value eval_binary(const Node& node, Operands operands) {
  const Value& a = *operands[0];
  const Value& b = *operands[1];
  Value out = make_value(node.dtype, node.shape);
  const std::int64_t n = out.size();
  if (is_float(a.dtype)) {
    for (std::int64_t k = 0; k < n; ++k)
      out.f[k] = round_to(node.dtype, binary_float(node.op, a.f[k], b.f[k]));
  } else {
    for (std::int64_t k = 0; k < n; ++k) out.i[k] = binary_int(node.op, node.dtype, a.i[k], b.i[k]);
  }
  return out;
}

}  // namespace weft::interp
