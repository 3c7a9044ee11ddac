// Control ops run their regions with the interpreter itself: each one's evaluator is in its
// definition (core/src/primitives/); custom_call, evaluated, is its body.
#include "primitives/primitive.h"
#include "value.h"

namespace weft::interp {
namespace {

std::vector<Value> copies(Operands operands, std::size_t from, std::size_t to) {
  std::vector<Value> out;
  out.reserve(to - from);
  for (std::size_t k = from; k < to; ++k) out.push_back(*operands[k]);
  return out;
}

}  // namespace

std::vector<Value> eval_control(const Node& node, Operands operands, const RunGraph& run) {
  if (const auto evaluate = prim::primitive(node.op).evaluate_control)
    return evaluate(node, operands, run);
  switch (node.op) {
    case OpKind::CustomCall:
      // Its rules matter to transformations only; evaluated, it is its body.
      if (node.regions.empty())
        throw InvalidGraphError(
            "interpret: custom_call (" + node.attrs.get_string("kind") +
            ") has no body: the linear part of a custom_vjp function only has a transpose; "
            "differentiate with grad or vjp instead of evaluating it");
      return run(node.regions[0], copies(operands, 0, operands.size()));
    default:
      throw InvalidGraphError("interpret: " + std::string(op_name(node.op)) +
                              " is not a control op");
  }
}

}  // namespace weft::interp
