// cond: every rule of the branch.
#include "primitives/families.h"

namespace weft::prim {

void define_cond_primitive(Definitions& defs) {
  Primitive p = row(OpKind::Cond, "cond", OpClass::Control, -1);
  p.control_flow = ControlFlow::branch;
  defs.add(std::move(p));
}

}  // namespace weft::prim
