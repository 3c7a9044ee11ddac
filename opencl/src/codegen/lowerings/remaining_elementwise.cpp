// The remaining elementwise primitives' OpenCL C: is_finite, nextafter, clamp and select_n
// (whose bounds and `which` may be scalars) and integer_pow (square-and-multiply, one product
// per statement).
#include <string>

#include "codegen/cl_types.h"
#include "codegen/expr_emitter.h"
#include "codegen/lowerings/families.h"
#include "weft/ir/op_attrs.h"

namespace weft::opencl::lowerings {
namespace {

const Index kScalarIndex{"0", {}, {}};

std::string is_finite(const ElementOp&, const std::string& a) {
  return "(isfinite(" + a + ") != 0)";
}

std::string nextafter(const ElementOp&, const std::string& a, const std::string& b) {
  return "nextafter(" + a + ", " + b + ")";
}

// An operand that is the result's shape or a scalar, at idx.
Index index_of(ExprEmitter& emit, ValueId v, const Index& idx) {
  return emit.graph().node(v).shape.empty() ? kScalarIndex : idx;
}

// min(max(x, lo), hi); NaN in any operand gives NaN, as the interpreter.
EmitTask clamp(ExprEmitter& emit, const Node& n, Index idx) {
  std::string lo = co_await emit.operand(n.inputs[0], index_of(emit, n.inputs[0], idx));
  std::string x = co_await emit.operand(n.inputs[1], idx);
  std::string hi = co_await emit.operand(n.inputs[2], index_of(emit, n.inputs[2], idx));
  if (!is_float(n.dtype))
    co_return emit.bind_value(n, idx, "min(max(" + x + ", " + lo + "), " + hi + ")");
  co_return emit.bind_value(n, idx,
                            "((isnan(" + x + ") || isnan(" + lo + ") || isnan(" + hi + ")) ? (" +
                                x + " + " + lo + " + " + hi + ") : fmin(fmax(" + x + ", " + lo +
                                "), " + hi + "))");
}

// A tree of selects on `which < middle`, as JAX lowers it: out of range, the nearest case.
EmitTask select_n(ExprEmitter& emit, const Node& n, Index idx) {
  std::string which = co_await emit.operand(n.inputs[0], index_of(emit, n.inputs[0], idx));
  std::vector<std::string> cases;
  for (std::size_t i = 1; i < n.inputs.size(); ++i)
    cases.push_back(co_await emit.operand(n.inputs[i], idx));
  const bool flag = emit.graph().node(n.inputs[0]).dtype == DType::Bool;
  // Cases [lo, hi) chosen by which.
  std::function<std::string(std::size_t, std::size_t)> tree = [&](std::size_t lo, std::size_t hi) {
    if (hi - lo == 1) return cases[lo];
    const std::size_t mid = lo + (hi - lo) / 2;
    const std::string test = flag ? "!" + which : which + " < " + std::to_string(mid);
    return "(" + test + " ? " + tree(lo, mid) + " : " + tree(mid, hi) + ")";
  };
  co_return emit.bind_value(n, idx, tree(0, cases.size()));
}

// JAX's _integer_pow: squares of x and the product of those |y|'s bits select, one statement
// each (an expression alone would repeat them), then 1 / product for y < 0.
EmitTask integer_pow(ExprEmitter& emit, const Node& n, Index idx) {
  std::string base = co_await emit.operand(n.inputs[0], idx);
  const std::int64_t y = IntegerPowAttrs::read(n.attrs).y;
  const DType t = n.dtype;
  const std::string T = cl_type(t);
  auto product = [&](const std::string& a, const std::string& b) {
    if (!is_signed_integer(t)) return emit.bind_value(n, idx, a + " * " + b);
    const std::string U = unsigned_of(t);
    return emit.bind_value(n, idx, "(" + T + ")((" + U + ")" + a + " * (" + U + ")" + b + ")");
  };
  if (y == 0) co_return emit.bind_value(n, idx, "(" + T + ")1");
  std::uint64_t left = y < 0 ? -static_cast<std::uint64_t>(y) : static_cast<std::uint64_t>(y);
  std::string acc;
  while (left > 0) {
    if (left & 1) acc = acc.empty() ? base : product(acc, base);
    left >>= 1;
    if (left > 0) base = product(base, base);
  }
  if (y < 0) acc = emit.bind_value(n, idx, cl_float_literal(1.0, t) + " / " + acc);
  co_return acc;
}

}  // namespace

void define_remaining_elementwise_lowerings(Lowerings& table) {
  table.add(unary(OpKind::IsFinite, is_finite));
  table.add(binary(OpKind::NextAfter, nextafter));
  table.add(element(OpKind::Clamp, clamp));
  table.add(element(OpKind::SelectN, select_n));
  table.add(element(OpKind::IntegerPow, integer_pow));
}

}  // namespace weft::opencl::lowerings
