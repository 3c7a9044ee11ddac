// Binary elementwise primitives (operands of one shape and dtype).
#include "primitives/families.h"

namespace weft::prim {

void define_binary_primitives(Definitions& defs) {
  defs.add(row(OpKind::Add, "add", OpClass::Binary, 2));
  defs.add(row(OpKind::Sub, "sub", OpClass::Binary, 2));
  defs.add(row(OpKind::Mul, "mul", OpClass::Binary, 2));
  defs.add(division(row(OpKind::Div, "div", OpClass::Binary, 2)));
  defs.add(division(row(OpKind::Rem, "rem", OpClass::Binary, 2)));
  defs.add(math_call(row(OpKind::Pow, "pow", OpClass::Binary, 2)));
  defs.add(row(OpKind::Max, "max", OpClass::Binary, 2));
  defs.add(row(OpKind::Min, "min", OpClass::Binary, 2));
  defs.add(math_call(row(OpKind::Atan2, "atan2", OpClass::Binary, 2)));
  defs.add(row(OpKind::And, "and", OpClass::Binary, 2));
  defs.add(row(OpKind::Or, "or", OpClass::Binary, 2));
  defs.add(row(OpKind::Xor, "xor", OpClass::Binary, 2));
}

}  // namespace weft::prim
