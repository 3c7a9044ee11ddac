// while: every rule of the loop.
#include "primitives/families.h"

namespace weft::prim {

void define_while_primitive(Definitions& defs) {
  defs.add(row(OpKind::While, "while", OpClass::Control, -1));
}

}  // namespace weft::prim
