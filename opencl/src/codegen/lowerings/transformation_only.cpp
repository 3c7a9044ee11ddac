// Ops that exist only while a transformation traces a function (weft/transforms/custom.h and
// pmap's collectives): inlined or rewritten before anything compiles.
#include "codegen/lowerings/families.h"

namespace weft::opencl::lowerings {

void define_custom_lowerings(Lowerings& table) {
  constexpr const char* kInlined = "inlined or rewritten before anything compiles";
  for (OpKind kind :
       {OpKind::CustomJvp, OpKind::CustomVjp, OpKind::Checkpoint, OpKind::CustomLin, OpKind::Psum,
        OpKind::Pmean, OpKind::Pmax, OpKind::AllGather, OpKind::AxisIndex})
    table.add(never(kind, kInlined));
}

}  // namespace weft::opencl::lowerings
