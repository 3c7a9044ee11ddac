// Cumulative ops run as parallel scans in kernels of their own (codegen/scan_kernel.cpp); each
// says how two partial results combine. rev fuses, reading its operand at mirrored indices.
#include <string>

#include "codegen/cl_types.h"
#include "codegen/expr_emitter.h"
#include "codegen/kernel_context.h"
#include "codegen/lowerings/families.h"
#include "weft/ir/op_attrs.h"

namespace weft::opencl::lowerings {
namespace {

// Integers wrap around through an unsigned type at least as wide as uint: C promotes 8- and
// 16-bit operands to int, where a product such as 65535 * 65535 would overflow.
std::string wrapping(DType t, const char* op, const std::string& a, const std::string& b) {
  if (is_float(t)) return "(" + a + op + b + ")";
  const std::string U = dtype_size(t) < 4 ? "uint" : unsigned_of(t);
  return "((" + cl_type(t) + ")((" + U + ")" + a + op + "(" + U + ")" + b + "))";
}
std::string add(DType t, const std::string& a, const std::string& b) {
  return wrapping(t, " + ", a, b);
}
std::string multiply(DType t, const std::string& a, const std::string& b) {
  return wrapping(t, " * ", a, b);
}
// Floats: a NaN, once met, stays (as the reductions).
std::string extreme(DType t, const char* cmp, const char* integer_fn, const std::string& a,
                    const std::string& b) {
  if (!is_float(t)) return std::string(integer_fn) + "(" + a + ", " + b + ")";
  return "(isnan(" + a + ") ? " + a + " : ((isnan(" + b + ") || " + b + " " + cmp + " " + a +
         ") ? " + b + " : " + a + "))";
}
std::string maximum(DType t, const std::string& a, const std::string& b) {
  return extreme(t, ">", "max", a, b);
}
std::string minimum(DType t, const std::string& a, const std::string& b) {
  return extreme(t, "<", "min", a, b);
}
// log(exp(a) + exp(b)): NaN if either is, the larger where it is infinite.
std::string log_add_exp(DType, const std::string& a, const std::string& b) {
  const std::string m = "fmax(" + a + ", " + b + ")";
  return "((isnan(" + a + ") || isnan(" + b + ")) ? " + a + " + " + b + " : (isinf(" + m + ") ? " +
         m + " : " + m + " + log1p(exp(-fabs(" + a + " - " + b + ")))))";
}

template <ScanCombine combine>
void emit_cumulative(KernelContext& ctx, const FusionGroup& group, const std::string& name) {
  emit_scan_kernel(ctx, group, name, combine);
}

// rev reads its operand at the mirrored index along each reversed axis.
EmitTask rev(ExprEmitter& emit, const Node& n, Index idx) {
  const auto& d = emit.dims_of(idx);
  Index at{{}, d, emit.graph().node(n.inputs[0]).shape};
  for (std::int64_t k : RevAttrs::read(n.attrs).dimensions)
    at.dims[k] = "(" + std::to_string(at.shape[k] - 1) + " - " + d[k] + ")";
  std::string a = co_await emit.operand(n.inputs[0], at);
  co_return a;
}

}  // namespace

void define_cumulative_lowerings(Lowerings& table) {
  table.add(own_kernel(OpKind::Cumsum, "scan", emit_cumulative<add>));
  table.add(own_kernel(OpKind::Cumprod, "scan", emit_cumulative<multiply>));
  table.add(own_kernel(OpKind::Cummax, "scan", emit_cumulative<maximum>));
  table.add(own_kernel(OpKind::Cummin, "scan", emit_cumulative<minimum>));
  table.add(own_kernel(OpKind::Cumlogsumexp, "scan", emit_cumulative<log_add_exp>));
  table.add(element(OpKind::Rev, rev));
}

}  // namespace weft::opencl::lowerings
