// Layout primitives: each reads its operands through index arithmetic, so that fusing one costs
// index math rather than a buffer.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "codegen/expr_emitter.h"
#include "codegen/lowerings/families.h"
#include "weft/ir/op_attrs.h"

namespace weft::opencl::lowerings {
namespace {

const Index kScalar{"0", {}, {}};

EmitTask broadcast_in_dim(ExprEmitter& emit, const Node& n, Index idx) {
  const Shape& in = emit.graph().node(n.inputs[0]).shape;
  if (in.empty()) {
    std::string a = co_await emit.operand(n.inputs[0], kScalar);
    co_return a;
  }
  const auto& d = emit.dims_of(idx);
  const auto map = BroadcastAttrs::read(n.attrs).dims;
  Index at{{}, {}, in};
  for (std::size_t i = 0; i < in.size(); ++i) at.dims.push_back(in[i] == 1 ? "0" : d[map[i]]);
  // Lanes run along the last axis: they reach the input only through its own last axis.
  at.lanes =
      idx.lanes && in.back() > 1 && map.back() == static_cast<std::int64_t>(n.shape.size()) - 1;
  std::string a = co_await emit.operand(n.inputs[0], at);
  co_return a;
}

EmitTask reshape(ExprEmitter& emit, const Node& n, Index idx) {
  // Lanes stay lanes: lane mode admits reshapes that keep the last axis.
  Index at{emit.linear_of(idx), {}, emit.graph().node(n.inputs[0]).shape};
  at.lanes = idx.lanes;
  std::string a = co_await emit.operand(n.inputs[0], at);
  co_return a;
}

EmitTask transpose(ExprEmitter& emit, const Node& n, Index idx) {
  const auto& d = emit.dims_of(idx);
  const auto perm = TransposeAttrs::read(n.attrs).permutation;
  Index at{{}, std::vector<std::string>(d.size()), emit.graph().node(n.inputs[0]).shape};
  for (std::size_t k = 0; k < d.size(); ++k) at.dims[perm[k]] = d[k];
  std::string a = co_await emit.operand(n.inputs[0], at);
  co_return a;
}

EmitTask slice(ExprEmitter& emit, const Node& n, Index idx) {
  const auto& d = emit.dims_of(idx);
  const SliceAttrs slice_attrs = SliceAttrs::read(n.attrs);
  const auto& start = slice_attrs.start;
  const auto& stride = slice_attrs.stride;
  Index at{{}, {}, emit.graph().node(n.inputs[0]).shape};
  for (std::size_t k = 0; k < d.size(); ++k) {
    std::string e = stride[k] == 1 ? d[k] : "(" + d[k] + ")*" + std::to_string(stride[k]);
    if (start[k] != 0) e = "(" + e + " + " + std::to_string(start[k]) + ")";
    at.dims.push_back(e);
  }
  std::string a = co_await emit.operand(n.inputs[0], at);
  co_return a;
}

EmitTask dynamic_slice(ExprEmitter& emit, const Node& n, Index idx) {
  const auto& d = emit.dims_of(idx);
  const Shape& in = emit.graph().node(n.inputs[0]).shape;
  Index at{{}, {}, in};
  for (std::size_t k = 0; k < d.size(); ++k) {
    std::string s = emit.fresh("s");
    std::string start = co_await emit.operand(n.inputs[k + 1], kScalar);
    emit.line("const " + emit.index_type() + " " + s + " = " +
              emit.clamp_start(start, 0, in[k] - n.shape[k]) + ";");
    at.dims.push_back("(" + d[k] + " + " + s + ")");
  }
  std::string a = co_await emit.operand(n.inputs[0], at);
  co_return a;
}

EmitTask dynamic_update_slice(ExprEmitter& emit, const Node& n, Index idx) {
  const Shape& upd = emit.graph().node(n.inputs[1]).shape;
  std::string base = co_await emit.operand(n.inputs[0], idx);
  if (num_elements(upd) == 0) co_return base;
  const auto& d = emit.dims_of(idx);
  Index at{{}, {}, upd};
  std::string inside = "true";
  for (std::size_t k = 0; k < d.size(); ++k) {
    std::string rel = emit.fresh("r");
    std::string start = co_await emit.operand(n.inputs[k + 2], kScalar);
    emit.line("const " + emit.index_type() + " " + rel + " = " + d[k] + " - " +
              emit.clamp_start(start, 0, n.shape[k] - upd[k]) + ";");
    inside += " && " + rel + " >= 0 && " + rel + " < " + std::to_string(upd[k]);
    at.dims.push_back(emit.clamp(rel, 0, upd[k] - 1));
  }
  std::string u = co_await emit.operand(n.inputs[1], at);
  co_return emit.bind_value(n, idx, "((" + inside + ") ? " + u + " : " + base + ")");
}

EmitTask concatenate(ExprEmitter& emit, const Node& n, Index idx) {
  const auto& d = emit.dims_of(idx);
  const auto dim = static_cast<std::size_t>(DimensionAttrs::read(n.attrs).dimension);
  std::int64_t offset = 0;
  std::vector<std::pair<std::int64_t, std::string>> parts;  // (end offset, value)
  for (std::size_t j = 0; j < n.inputs.size(); ++j) {
    const Shape& s = emit.graph().node(n.inputs[j]).shape;
    if (s[dim] == 0) continue;
    Index at{{}, d, s};
    std::string local = offset == 0 ? d[dim] : "(" + d[dim] + " - " + std::to_string(offset) + ")";
    at.dims[dim] = emit.clamp(local, 0, s[dim] - 1);
    offset += s[dim];
    std::string part = co_await emit.operand(n.inputs[j], at);
    parts.emplace_back(offset, std::move(part));
  }
  std::string result = parts.back().second;
  for (std::size_t j = parts.size() - 1; j-- > 0;)
    result = "(" + d[dim] + " < " + std::to_string(parts[j].first) + " ? " + parts[j].second +
             " : " + result + ")";
  co_return emit.bind_value(n, idx, result);
}

EmitTask pad(ExprEmitter& emit, const Node& n, Index idx) {
  const Shape& in = emit.graph().node(n.inputs[0]).shape;
  std::string pad_value = co_await emit.operand(n.inputs[1], kScalar);
  if (num_elements(in) == 0) co_return pad_value;
  const auto& d = emit.dims_of(idx);
  const PadAttrs pad_attrs = PadAttrs::read(n.attrs);
  const auto& low = pad_attrs.low;
  const auto& interior = pad_attrs.interior;
  Index at{{}, {}, in};
  std::string valid = "true";
  for (std::size_t k = 0; k < d.size(); ++k) {
    std::string t = emit.fresh("p");
    emit.line("const " + emit.index_type() + " " + t + " = " + d[k] + " - (" +
              std::to_string(low[k]) + ");");
    const std::int64_t step = interior[k] + 1;
    std::string q = step == 1 ? t : "(" + t + ")/" + std::to_string(step);
    valid += " && " + t + " >= 0 && " + q + " < " + std::to_string(in[k]);
    if (step != 1) valid += " && (" + t + ")%" + std::to_string(step) + " == 0";
    at.dims.push_back(emit.clamp(q, 0, in[k] - 1));
  }
  std::string x = co_await emit.operand(n.inputs[0], at);
  co_return emit.bind_value(n, idx, "((" + valid + ") ? " + x + " : " + pad_value + ")");
}

}  // namespace

void define_layout_lowerings(Lowerings& table) {
  table.add(element(OpKind::BroadcastInDim, broadcast_in_dim));
  table.add(element(OpKind::Reshape, reshape));
  table.add(element(OpKind::Transpose, transpose));
  table.add(element(OpKind::Slice, slice));
  table.add(element(OpKind::DynamicSlice, dynamic_slice));
  table.add(element(OpKind::DynamicUpdateSlice, dynamic_update_slice));
  table.add(element(OpKind::Concatenate, concatenate));
  table.add(element(OpKind::Pad, pad));
}

}  // namespace weft::opencl::lowerings
