// Control ops run their regions with the interpreter itself: each one's evaluator is in its
// definition (core/src/primitives/).
#include "primitives/primitive.h"
#include "value.h"

namespace weft::interp {

std::vector<Value> eval_control(const Node& node, Operands operands, const RunGraph& run) {
  if (const auto evaluate = prim::primitive(node.op).evaluate_control)
    return evaluate(node, operands, run);
  throw InvalidGraphError("interpret: " + std::string(op_name(node.op)) + " is not a control op");
}

}  // namespace weft::interp
