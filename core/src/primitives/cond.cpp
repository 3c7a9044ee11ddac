// cond: every rule of the branch.
#include "primitives/families.h"

namespace weft::prim {

void define_cond_primitive(Definitions& defs) {
  defs.add(row(OpKind::Cond, "cond", OpClass::Control, -1));
}

}  // namespace weft::prim
