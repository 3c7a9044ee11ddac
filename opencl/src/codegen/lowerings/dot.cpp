// dot_general runs in dot kernels (codegen/dot_kernel.cpp), its operands' producers fused in.
#include "codegen/lowerings/families.h"

namespace weft::opencl::lowerings {

void define_dot_lowerings(Lowerings& table) {
  table.add(kernel(OpKind::DotGeneral, "dot"));
}

}  // namespace weft::opencl::lowerings
