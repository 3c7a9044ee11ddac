// weft::lax's cumulative ops, rev and sorting (their primitives: primitives/cumulative.cpp).
#include "weft/ir/op_attrs.h"
#include "weft/ops.h"
#include "weft/trace/trace.h"

namespace weft::lax {

namespace {

Array cumulative(OpKind op, const Array& x, std::int64_t axis, bool reverse,
                 const std::source_location& loc) {
  const Array operands[] = {x};
  return detail::bind(op, operands, CumulativeAttrs{axis, reverse}.write(), {}, loc);
}

}  // namespace

Array cumsum(const Array& x, std::int64_t axis, bool reverse, std::source_location loc) {
  return cumulative(OpKind::Cumsum, x, axis, reverse, loc);
}

}  // namespace weft::lax
