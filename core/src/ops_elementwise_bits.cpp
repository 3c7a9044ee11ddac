// weft::lax's bit operations and the remaining elementwise ops (declared in weft/ops.h).
#include "weft/ops.h"
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

}  // namespace weft::lax
