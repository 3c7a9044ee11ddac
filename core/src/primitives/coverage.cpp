// Which parts of a definition each class of primitive needs. Multi-result ops (control, custom
// and host ops) are walked by the graph evaluator, which asks for their control rules; value
// ops go through the per-value rules.
#include "weft/ir/primitive_coverage.h"

#include "primitives/primitive.h"

namespace weft {

std::vector<std::string> missing_definition_parts(OpKind kind) {
  const prim::Primitive& p = prim::primitive(kind);
  std::vector<std::string> missing;
  auto need = [&](bool stated, const char* part) {
    if (!stated) missing.emplace_back(part);
  };
  need(p.info.kind == kind, "a row for its own kind");
  need(!p.info.name.empty(), "a name");
  switch (p.info.op_class) {
    case OpClass::Control:
      need(p.regions.signatures != nullptr, "region signature rule");
      need(p.evaluate_control != nullptr, "evaluator");
      need(p.control_jvp.defined(), "jvp rule");
      need(p.control_linearize.defined(), "linearize rule");
      need(p.control_transpose.defined(), "transpose rule");
      need(p.control_batch.defined(), "batching rule");
      break;
    case OpClass::Host:
      // Run by the interpreter's graph walk (interp/host.cpp) and, under transformations, by
      // each walker's host-op hook; the value rules must say so.
      need(p.type != nullptr, "type rule");
      need(p.jvp.defined(), "jvp rule");
      need(p.transpose.defined(), "transpose rule");
      need(p.batch.defined(), "batching rule");
      break;
    case OpClass::Result:
      need(p.type != nullptr, "type rule");
      need(p.jvp.defined(), "jvp rule");
      need(p.transpose.defined(), "transpose rule");
      need(p.batch.defined(), "batching rule");
      break;
    case OpClass::Leaf:
    case OpClass::Unary:
    case OpClass::Binary:
    case OpClass::Compare:
    case OpClass::Select:
    case OpClass::Convert:
    case OpClass::Layout:
    case OpClass::Reduce:
    case OpClass::Dot:
    case OpClass::Token:
    case OpClass::Cumulative:
    case OpClass::Sort:
    case OpClass::Convolution:
    case OpClass::Window:
    case OpClass::Linalg:
      need(p.type != nullptr, "type rule");
      need(p.evaluate != nullptr || kind == OpKind::Parameter, "evaluator");
      need(p.jvp.defined(), "jvp rule");
      need(p.transpose.defined(), "transpose rule");
      need(p.batch.defined(), "batching rule");
      break;
  }
  return missing;
}

}  // namespace weft
