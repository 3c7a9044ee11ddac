// Unary elementwise primitives.
#include "primitives/families.h"

namespace weft::prim {

void define_unary_primitives(Definitions& defs) {
  defs.add(row(OpKind::Neg, "neg", OpClass::Unary, 1));
  defs.add(row(OpKind::Abs, "abs", OpClass::Unary, 1));
  defs.add(expensive(row(OpKind::Sign, "sign", OpClass::Unary, 1)));
  defs.add(expensive(row(OpKind::Floor, "floor", OpClass::Unary, 1)));
  defs.add(expensive(row(OpKind::Ceil, "ceil", OpClass::Unary, 1)));
  defs.add(expensive(row(OpKind::Round, "round", OpClass::Unary, 1)));
  defs.add(math_call(row(OpKind::Exp, "exp", OpClass::Unary, 1)));
  defs.add(math_call(row(OpKind::Exp2, "exp2", OpClass::Unary, 1)));
  defs.add(math_call(row(OpKind::Log, "log", OpClass::Unary, 1)));
  defs.add(math_call(row(OpKind::Log1p, "log1p", OpClass::Unary, 1)));
  defs.add(math_call(row(OpKind::Expm1, "expm1", OpClass::Unary, 1)));
  defs.add(expensive(row(OpKind::Sqrt, "sqrt", OpClass::Unary, 1)));
  defs.add(expensive(row(OpKind::Rsqrt, "rsqrt", OpClass::Unary, 1)));
  defs.add(math_call(row(OpKind::Sin, "sin", OpClass::Unary, 1)));
  defs.add(math_call(row(OpKind::Cos, "cos", OpClass::Unary, 1)));
  defs.add(math_call(row(OpKind::Tan, "tan", OpClass::Unary, 1)));
  defs.add(math_call(row(OpKind::Tanh, "tanh", OpClass::Unary, 1)));
  defs.add(math_call(row(OpKind::Logistic, "logistic", OpClass::Unary, 1)));
  defs.add(math_call(row(OpKind::Erf, "erf", OpClass::Unary, 1)));
  defs.add(row(OpKind::Not, "not", OpClass::Unary, 1));
}

}  // namespace weft::prim
