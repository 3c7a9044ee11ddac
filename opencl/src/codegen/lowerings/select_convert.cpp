// select(pred, on_true, on_false) and convert (to the node's dtype).
#include <string>

#include "codegen/cl_types.h"
#include "codegen/expr_emitter.h"
#include "codegen/lowerings/families.h"

namespace weft::opencl::lowerings {
namespace {

EmitTask select(ExprEmitter& emit, const Node& n, Index idx) {
  std::string p = co_await emit.operand(n.inputs[0], idx);
  std::string x = co_await emit.operand(n.inputs[1], idx);
  std::string y = co_await emit.operand(n.inputs[2], idx);
  co_return emit.bind_value(n, idx, "(" + p + " ? " + x + " : " + y + ")");
}

// From the operand's dtype (op.dtype) to the node's.
std::string convert(const ElementOp& op, const std::string& a) {
  const DType from = op.dtype, to = op.node.dtype;
  if (from == to) return a;
  if (to == DType::Bool) return "(" + a + " != 0)";
  if (from == DType::Bool) return "(" + a + " ? (" + cl_type(to) + ")1 : (" + cl_type(to) + ")0)";
  // NaN must give 0; some drivers' saturating conversions (NVIDIA's to long) give the minimum.
  if (is_float(from) && !is_float(to))
    return "(isnan(" + a + ") ? (" + cl_type(to) + ")0 : convert_" + cl_type(to) + "_sat_rtz(" + a +
           "))";
  return "((" + cl_type(to) + ")(" + a + "))";
}

}  // namespace

void define_select_convert_lowerings(Lowerings& table) {
  table.add(element(OpKind::Select, select));
  table.add(unary(OpKind::Convert, convert));
}

}  // namespace weft::opencl::lowerings
