// Control flow: while, cond and scan run their regions with the interpreter itself.
#include "value.h"

#include "primitives/primitive.h"

#include <algorithm>

namespace weft::interp {
namespace {

// One row of a stacked value (its leading axis dropped), and writing one back.
Value row_of(const Value& stacked, std::int64_t row) {
  Value out = make_value(stacked.dtype, Shape(stacked.shape.begin() + 1, stacked.shape.end()));
  const std::int64_t n = out.size();
  if (is_float(stacked.dtype)) {
    std::copy_n(stacked.f.begin() + row * n, n, out.f.begin());
  } else {
    std::copy_n(stacked.i.begin() + row * n, n, out.i.begin());
  }
  return out;
}

void set_row(Value& stacked, std::int64_t row, const Value& value) {
  const std::int64_t n = value.size();
  if (is_float(stacked.dtype)) {
    std::copy_n(value.f.begin(), n, stacked.f.begin() + row * n);
  } else {
    std::copy_n(value.i.begin(), n, stacked.i.begin() + row * n);
  }
}

std::vector<Value> copies(Operands operands, std::size_t from, std::size_t to) {
  std::vector<Value> out;
  out.reserve(to - from);
  for (std::size_t k = from; k < to; ++k) out.push_back(*operands[k]);
  return out;
}

std::vector<Value> eval_scan(const Node& node, Operands operands, const RunGraph& run) {
  const auto n = static_cast<std::size_t>(node.attrs.get_int("carries"));
  const auto m = static_cast<std::size_t>(node.attrs.get_int("xs"));
  const std::int64_t length = node.attrs.get_int("length");
  const bool reverse = node.attrs.get_int("reverse") != 0;
  std::vector<Value> out = copies(operands, 0, n);
  for (std::size_t j = n; j < node.results.size(); ++j)
    out.push_back(make_value(node.results[j].dtype, node.results[j].shape));
  // Body parameters: the iteration, the carries, one row of each xs, the captured values.
  std::vector<Value> args(1 + n + m);
  for (std::size_t k = n + m; k < operands.size(); ++k) args.push_back(*operands[k]);
  for (std::int64_t step = 0; step < length; ++step) {
    const std::int64_t row = reverse ? length - 1 - step : step;
    args[0] = make_value(DType::I32, {});
    args[0].i[0] = row;
    for (std::size_t k = 0; k < n; ++k) args[1 + k] = std::move(out[k]);
    for (std::size_t j = 0; j < m; ++j) args[1 + n + j] = row_of(*operands[n + j], row);
    std::vector<Value> results = run(node.regions[0], args);
    for (std::size_t k = 0; k < n; ++k) out[k] = std::move(results[k]);
    for (std::size_t j = n; j < results.size(); ++j) set_row(out[j], row, results[j]);
  }
  return out;
}

}  // namespace

std::vector<Value> eval_control(const Node& node, Operands operands, const RunGraph& run) {
  if (const auto evaluate = prim::primitive(node.op).evaluate_control)
    return evaluate(node, operands, run);
  switch (node.op) {
    case OpKind::Scan:
      return eval_scan(node, operands, run);
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
