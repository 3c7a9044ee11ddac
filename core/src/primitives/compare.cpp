// Comparisons: two operands of one shape and dtype, a bool result (so no tangent and no
// transpose). Each states its comparison; the comparison family (elementwise_family.h) gives
// the rest.
#include <functional>

#include "primitives/elementwise_family.h"

namespace weft::prim {

using namespace elementwise;

void define_compare_primitives(Definitions& defs) {
  defs.add(equality<std::equal_to<>>(OpKind::Eq, "eq"));
  defs.add(equality<std::not_equal_to<>>(OpKind::Ne, "ne"));
  defs.add(ordering<std::less<>>(OpKind::Lt, "lt"));
  defs.add(ordering<std::less_equal<>>(OpKind::Le, "le"));
  defs.add(ordering<std::greater<>>(OpKind::Gt, "gt"));
  defs.add(ordering<std::greater_equal<>>(OpKind::Ge, "ge"));
}

}  // namespace weft::prim
