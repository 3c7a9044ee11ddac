// Host ops (debug_print, host_call) and after_all.
#include "primitives/families.h"

namespace weft::prim {

void define_host_primitives(Definitions& defs) {
  defs.add(row(OpKind::DebugPrint, "debug_print", OpClass::Host, -1));
  defs.add(row(OpKind::HostCall, "host_call", OpClass::Host, -1));
  defs.add(row(OpKind::AfterAll, "after_all", OpClass::Token, -1));
}

}  // namespace weft::prim
