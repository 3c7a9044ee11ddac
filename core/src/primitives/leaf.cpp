// Leaves: parameters, constants, iota.
#include "primitives/families.h"

namespace weft::prim {

void define_leaf_primitives(Definitions& defs) {
  defs.add(free_op(row(OpKind::Parameter, "param", OpClass::Leaf, 0)));
  defs.add(free_op(row(OpKind::Constant, "constant", OpClass::Leaf, 0)));
  defs.add(free_op(row(OpKind::Iota, "iota", OpClass::Leaf, 0)));
}

}  // namespace weft::prim
