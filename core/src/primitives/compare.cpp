// Comparisons: two operands of one shape and dtype, a bool result.
#include "primitives/families.h"

namespace weft::prim {

void define_compare_primitives(Definitions& defs) {
  defs.add(row(OpKind::Eq, "eq", OpClass::Compare, 2));
  defs.add(row(OpKind::Ne, "ne", OpClass::Compare, 2));
  defs.add(row(OpKind::Lt, "lt", OpClass::Compare, 2));
  defs.add(row(OpKind::Le, "le", OpClass::Compare, 2));
  defs.add(row(OpKind::Gt, "gt", OpClass::Compare, 2));
  defs.add(row(OpKind::Ge, "ge", OpClass::Compare, 2));
}

}  // namespace weft::prim
