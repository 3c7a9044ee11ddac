// Layout primitives: they move elements, never compute them.
#include "primitives/families.h"

namespace weft::prim {

void define_layout_primitives(Definitions& defs) {
  defs.add(free_op(row(OpKind::BroadcastInDim, "broadcast_in_dim", OpClass::Layout, 1)));
  defs.add(free_op(row(OpKind::Reshape, "reshape", OpClass::Layout, 1)));
  defs.add(free_op(row(OpKind::Transpose, "transpose", OpClass::Layout, 1)));
  defs.add(free_op(row(OpKind::Slice, "slice", OpClass::Layout, 1)));
  defs.add(free_op(row(OpKind::DynamicSlice, "dynamic_slice", OpClass::Layout, -1)));
  defs.add(free_op(row(OpKind::DynamicUpdateSlice, "dynamic_update_slice", OpClass::Layout, -1)));
  defs.add(free_op(row(OpKind::Concatenate, "concatenate", OpClass::Layout, -1)));
  defs.add(free_op(row(OpKind::Pad, "pad", OpClass::Layout, 2)));
}

}  // namespace weft::prim
