// cholesky, triangular_solve and lu's three ops run in kernels of their own
// (codegen/cholesky_kernel.cpp, triangular_solve_kernel.cpp, lu_kernel.cpp).
#include "codegen/kernel_context.h"
#include "codegen/lowerings/families.h"

namespace weft::opencl::lowerings {

void define_linalg_lowerings(Lowerings& table) {
  table.add(own_kernel(OpKind::Cholesky, "cholesky", emit_cholesky_kernel));
  table.add(own_kernel(OpKind::TriangularSolve, "triangular_solve", emit_triangular_solve_kernel));
  table.add(own_kernel(OpKind::Lu, "lu", emit_lu_kernel));
  table.add(own_kernel(OpKind::LuPivots, "lu", emit_lu_kernel));
  table.add(own_kernel(OpKind::LuPermutation, "lu", emit_lu_kernel));
}

}  // namespace weft::opencl::lowerings
