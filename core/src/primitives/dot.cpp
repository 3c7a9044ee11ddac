// dot_general.
#include "primitives/families.h"

namespace weft::prim {

void define_dot_primitives(Definitions& defs) {
  defs.add(row(OpKind::DotGeneral, "dot_general", OpClass::Dot, 2));
}

}  // namespace weft::prim
