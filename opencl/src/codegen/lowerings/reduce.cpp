// Reductions run in reduce kernels (codegen/reduce_kernel.cpp), their producers fused in.
#include "codegen/lowerings/families.h"

namespace weft::opencl::lowerings {

void define_reduce_lowerings(Lowerings& table) {
  table.add(kernel(OpKind::ReduceSum, "reduce"));
  table.add(kernel(OpKind::ReduceProd, "reduce"));
  table.add(kernel(OpKind::ReduceMax, "reduce"));
  table.add(kernel(OpKind::ReduceMin, "reduce"));
  table.add(kernel(OpKind::ArgMax, "reduce"));
  table.add(kernel(OpKind::ArgMin, "reduce"));
}

}  // namespace weft::opencl::lowerings
