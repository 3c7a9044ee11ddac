// eigh_vectors and eigh_values share one kernel of their own (codegen/eigh_kernel.cpp).
#include "codegen/kernel_context.h"
#include "codegen/lowerings/families.h"

namespace weft::opencl::lowerings {

void define_eigh_lowerings(Lowerings& table) {
  table.add(own_kernel(OpKind::EighVectors, "eigh", emit_eigh_kernel));
  table.add(own_kernel(OpKind::EighValues, "eigh", emit_eigh_kernel));
}

}  // namespace weft::opencl::lowerings
