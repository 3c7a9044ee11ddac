// custom_call: sub-functions with rules of their own.
#include "primitives/families.h"

namespace weft::prim {

void define_custom_primitives(Definitions& defs) {
  defs.add(row(OpKind::CustomCall, "custom_call", OpClass::Control, -1));
}

}  // namespace weft::prim
