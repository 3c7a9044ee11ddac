// result: one result of a multi-result node.
#include "primitives/families.h"

namespace weft::prim {

void define_result_primitive(Definitions& defs) {
  defs.add(row(OpKind::Result, "result", OpClass::Result, 1));
}

}  // namespace weft::prim
