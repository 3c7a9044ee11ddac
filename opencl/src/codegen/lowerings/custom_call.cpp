// Ops with transformation rules of their own (weft/transforms/custom.h).
#include "codegen/lowerings/families.h"

namespace weft::opencl::lowerings {

void define_custom_lowerings(Lowerings& table) {
  table.add(
      never(OpKind::CustomCall, "a custom call is inlined or rewritten before anything compiles"));
}

}  // namespace weft::opencl::lowerings
