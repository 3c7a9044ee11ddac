// conv_general_dilated runs in a kernel of its own (codegen/conv_kernel.cpp).
#include "codegen/kernel_context.h"
#include "codegen/lowerings/families.h"

namespace weft::opencl::lowerings {

void define_conv_lowerings(Lowerings& table) {
  table.add(own_kernel(OpKind::ConvGeneralDilated, "conv", emit_conv_kernel));
}

}  // namespace weft::opencl::lowerings
