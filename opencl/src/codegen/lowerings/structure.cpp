// Results and control ops: the program plan turns them into steps (plan_program.cpp), never
// into expressions.
#include "codegen/lowerings/families.h"

namespace weft::opencl::lowerings {

void define_structure_lowerings(Lowerings& table) {
  table.add(
      never(OpKind::Result, "a result is a buffer its multi-result node's step or kernel writes"));
  table.add(never(OpKind::While,
                  "a while loop is a control step: the runtime runs its regions' kernels"));
  table.add(never(OpKind::Cond,
                  "a cond is a control step: the runtime runs the chosen branch's kernels"));
  // A scan whose carries evolve element by element is one kernel that loops inside
  // (codegen/loop_in_kernel.cpp); any other is a control step like a while loop.
  table.add(kernel(OpKind::Scan, "loop_in"));
}

}  // namespace weft::opencl::lowerings
