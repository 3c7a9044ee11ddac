// select(pred, on_true, on_false) and convert.
#include "primitives/families.h"

namespace weft::prim {

void define_select_convert_primitives(Definitions& defs) {
  defs.add(free_op(row(OpKind::Select, "select", OpClass::Select, 3)));
  defs.add(free_op(row(OpKind::Convert, "convert", OpClass::Convert, 1)));
}

}  // namespace weft::prim
