// The windowed reductions and select_and_gather_add run one work-item per result element
// (codegen/window_kernel.cpp); select_and_scatter_add one per window, then one per operand element
// (codegen/select_scatter_kernel.cpp).
#include "codegen/kernel_context.h"
#include "codegen/lowerings/families.h"

namespace weft::opencl::lowerings {

void define_window_lowerings(Lowerings& table) {
  table.add(own_kernel(OpKind::ReduceWindowSum, "window", emit_window_kernel));
  table.add(own_kernel(OpKind::ReduceWindowMax, "window", emit_window_kernel));
  table.add(own_kernel(OpKind::ReduceWindowMin, "window", emit_window_kernel));
  table.add(own_kernel(OpKind::SelectAndGatherAdd, "window", emit_window_kernel));
  table.add(own_kernel(OpKind::SelectAndScatterAdd, "select_scatter", emit_select_scatter_kernel));
}

}  // namespace weft::opencl::lowerings
