// weft::lax's bit operations and the remaining elementwise ops (declared in weft/ops.h).
#include "weft/ops.h"

#include "weft/ir/op_attrs.h"
#include "weft/trace/trace.h"

namespace weft::lax {

using detail::bind;

Array shift_left(const Array& x, const Array& amount, std::source_location loc) {
  const Array operands[] = {x, amount};
  return bind(OpKind::ShiftLeft, operands, {}, {}, loc);
}

Array shift_right_logical(const Array& x, const Array& amount, std::source_location loc) {
  const Array operands[] = {x, amount};
  return bind(OpKind::ShiftRightLogical, operands, {}, {}, loc);
}

Array shift_right_arithmetic(const Array& x, const Array& amount, std::source_location loc) {
  const Array operands[] = {x, amount};
  return bind(OpKind::ShiftRightArithmetic, operands, {}, {}, loc);
}

Array bitcast_convert_type(const Array& x, DType dtype, std::source_location loc) {
  const Array operands[] = {x};
  return bind(OpKind::BitcastConvert, operands, {}, {dtype, {}}, loc);
}

namespace {

Array unary_op(OpKind op, const Array& x, const std::source_location& loc) {
  const Array operands[] = {x};
  return bind(op, operands, {}, {}, loc);
}

}  // namespace

Array population_count(const Array& x, std::source_location loc) {
  return unary_op(OpKind::PopulationCount, x, loc);
}

Array clz(const Array& x, std::source_location loc) {
  return unary_op(OpKind::Clz, x, loc);
}

Array clamp(const Array& lo, const Array& x, const Array& hi, std::source_location loc) {
  const Array operands[] = {lo, x, hi};
  return bind(OpKind::Clamp, operands, {}, {}, loc);
}

Array integer_pow(const Array& x, std::int64_t y, std::source_location loc) {
  const Array operands[] = {x};
  return bind(OpKind::IntegerPow, operands, IntegerPowAttrs{y}.write(), {}, loc);
}

Array is_finite(const Array& x, std::source_location loc) {
  return unary_op(OpKind::IsFinite, x, loc);
}

Array nextafter(const Array& x, const Array& y, std::source_location loc) {
  const Array operands[] = {x, y};
  return bind(OpKind::NextAfter, operands, {}, {}, loc);
}

Array select_n(const Array& which, const std::vector<Array>& cases, std::source_location loc) {
  std::vector<Array> operands{which};
  operands.insert(operands.end(), cases.begin(), cases.end());
  return bind(OpKind::SelectN, operands, {}, {}, loc);
}

Array erf_inv(const Array& x, std::source_location loc) {
  return unary_op(OpKind::ErfInv, x, loc);
}

}  // namespace weft::lax
