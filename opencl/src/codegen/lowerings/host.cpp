// Host ops and token joins: steps the runtime runs on the host (plan_program.cpp), never code.
#include "codegen/lowerings/families.h"

namespace weft::opencl::lowerings {

void define_host_lowerings(Lowerings& table) {
  table.add(never(OpKind::DebugPrint, "a print runs on the host (a host step)"));
  table.add(never(OpKind::HostCall, "a host callback runs on the host (a host step)"));
  table.add(never(OpKind::AfterAll, "a token join is a join step; tokens carry no data"));
}

}  // namespace weft::opencl::lowerings
