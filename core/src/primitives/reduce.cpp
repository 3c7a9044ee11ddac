// Reductions over attrs.axes.
#include "primitives/families.h"

namespace weft::prim {

void define_reduce_primitives(Definitions& defs) {
  defs.add(row(OpKind::ReduceSum, "reduce_sum", OpClass::Reduce, 1));
  defs.add(row(OpKind::ReduceProd, "reduce_prod", OpClass::Reduce, 1));
  defs.add(row(OpKind::ReduceMax, "reduce_max", OpClass::Reduce, 1));
  defs.add(row(OpKind::ReduceMin, "reduce_min", OpClass::Reduce, 1));
  defs.add(row(OpKind::ArgMax, "argmax", OpClass::Reduce, 1));
  defs.add(row(OpKind::ArgMin, "argmin", OpClass::Reduce, 1));
}

}  // namespace weft::prim
