// Host ops (debug_print, host_call) and after_all. A host op has several results (an optional
// token, then the host function's results): the interpreter's run_graph runs it (see
// interp/host.cpp) and the jvp, transpose and vmap graph walkers handle it themselves, so it
// has no evaluator and its value rules are refusals. after_all joins tokens: effects order
// through tokens, which carry nothing.
#include <string>

#include "primitives/families.h"
#include "primitives/type_rule_checks.h"
#include "weft/error.h"

namespace weft::prim {

namespace {

TensorType host_op_type(OpKind op, std::span<const TensorType>, const Attrs&, const TensorType&) {
  throw InvalidGraphError(std::string(op_name(op)) +
                          " has several results: verify checks them with the op's rules");
}

Primitive host_op(OpKind kind, std::string_view name) {
  Primitive p = row(kind, name, OpClass::Host, -1);
  p.type = host_op_type;
  return p;
}

TensorType after_all_type(OpKind op, std::span<const TensorType> operands, const Attrs&,
                          const TensorType&) {
  for (const TensorType& t : operands)
    if (t.dtype != DType::Token)
      dtype_fail(op, operands, "takes tokens only; effects order through tokens");
  return {DType::Token, {}};
}

interp::Value evaluate_after_all(const Node&, interp::Operands) {
  return interp::make_value(DType::Token, {});
}

// Tokens carry no tangent.
detail::Tangent jvp_after_all(const Node&, std::span<const Array>, std::span<const detail::Tangent>,
                              const Array&, const std::source_location&) {
  return std::nullopt;
}

}  // namespace

void define_host_primitives(Definitions& defs) {
  Primitive print = jax_names(host_op(OpKind::DebugPrint, "debug_print"), "debug_callback");
  print.jvp = none<JvpRule>(
      "is not a value primitive; the jvp graph walker handles it, so this is a "
      "bug in weft's jvp");
  print.transpose = no_transpose();
  print.batch = none<BatchRule>(
      "is not a value primitive; the vmap graph walker handles it, so this is a bug "
      "in weft's vmap");
  defs.add(std::move(print));

  Primitive call = jax_names(host_op(OpKind::HostCall, "host_call"), "pure_callback io_callback");
  call.jvp = none<JvpRule>(
      "is not a value primitive; the jvp graph walker handles it, so this is a "
      "bug in weft's jvp");
  call.transpose = no_transpose();
  call.batch = none<BatchRule>(
      "is not a value primitive; the vmap graph walker handles it, so this is a bug "
      "in weft's vmap");
  defs.add(std::move(call));

  Primitive after_all = row(OpKind::AfterAll, "after_all", OpClass::Token, -1);
  after_all.type = after_all_type;
  after_all.evaluate = evaluate_after_all;
  after_all.jvp = Rule<JvpRule>{jvp_after_all, {}};
  after_all.transpose = no_transpose();
  after_all.batch = none<BatchRule>("is not a value primitive; this is a bug in weft's vmap");
  defs.add(std::move(after_all));
}

}  // namespace weft::prim
