// scan: every rule of the loop over xs.
#include "primitives/families.h"

namespace weft::prim {

void define_scan_primitive(Definitions& defs) {
  Primitive p = row(OpKind::Scan, "scan", OpClass::Control, -1);
  p.control_flow = ControlFlow::counted_loop;
  defs.add(std::move(p));
}

}  // namespace weft::prim
