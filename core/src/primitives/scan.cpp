// scan: every rule of the loop over xs.
#include "primitives/families.h"

namespace weft::prim {

void define_scan_primitive(Definitions& defs) {
  defs.add(row(OpKind::Scan, "scan", OpClass::Control, -1));
}

}  // namespace weft::prim
