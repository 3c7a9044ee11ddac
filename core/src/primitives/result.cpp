// result: one result of a multi-result node. Every graph walker (the interpreter's run_graph
// and the jvp, transpose and vmap walkers) reads it from its node's results itself, so it has
// no evaluator, and its transformation rules are refusals no walker reaches.
#include "primitives/families.h"
#include "primitives/type_rule_checks.h"
#include "weft/ir/op_attrs.h"

namespace weft::prim {

namespace {

// The type is the control node's result `index`; verify checks it there.
TensorType result_type(OpKind op, std::span<const TensorType> operands, const Attrs& attrs,
                       const TensorType& declared) {
  if (IndexAttrs::read(attrs).index < 0) shape_fail(op, operands, "negative result index");
  return declared;
}

}  // namespace

void define_result_primitive(Definitions& defs) {
  Primitive result = jax_names(row(OpKind::Result, "result", OpClass::Result, 1), "-");
  result.type = result_type;
  result.jvp = none<JvpRule>(
      "is not a value primitive; the graph walker reads it from its node's "
      "results, so this is a bug in weft's jvp");
  result.transpose = none<TransposeRule>(
      "is not a value primitive; the graph walker reads it from its node's results, so "
      "this is a bug in weft's transpose");
  result.batch = none<BatchRule>(
      "is not a value primitive; the graph walker reads it from its node's results, so "
      "this is a bug in weft's vmap");
  defs.add(std::move(result));
}

}  // namespace weft::prim
