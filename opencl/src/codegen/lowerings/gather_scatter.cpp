// Gather and the scatters as element tasks. Gather reads its index vector, then its operand at
// the start plus the offset, so it fuses with what produces the operand and what consumes the
// result. A scatter's element folds, in update order, every update that lands on it: one
// work-item per output element, so sums are the same from run to run (and collisions need no
// atomics), at the price of visiting every index row per element.
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "codegen/cl_types.h"
#include "codegen/expr_emitter.h"
#include "codegen/lowerings/families.h"
#include "weft/ir/op_attrs.h"

namespace weft::opencl::lowerings {
namespace {

using Axes = std::vector<std::int64_t>;

bool has(const Axes& axes, std::int64_t d) {
  for (std::int64_t a : axes)
    if (a == d) return true;
  return false;
}

// Operand axes a window runs along: neither collapsed (inserted) nor batching, ascending.
Axes window_axes(std::size_t rank, const Axes& collapsed, const Axes& batching) {
  Axes out;
  for (std::size_t d = 0; d < rank; ++d)
    if (!has(collapsed, static_cast<std::int64_t>(d)) &&
        !has(batching, static_cast<std::int64_t>(d)))
      out.push_back(static_cast<std::int64_t>(d));
  return out;
}

// Positions of a rank-`rank` index not in `window_positions`, ascending.
Axes batch_positions(std::size_t rank, const Axes& window_positions) {
  Axes out;
  for (std::size_t d = 0; d < rank; ++d)
    if (!has(window_positions, static_cast<std::int64_t>(d)))
      out.push_back(static_cast<std::int64_t>(d));
  return out;
}

std::string fill_literal(const GatherAttrs& a, DType t) {
  if (is_float(t)) return cl_float_literal(a.fill_value.value_or(std::nan("")), t);
  if (t == DType::Bool) return a.fill_value ? (*a.fill_value != 0 ? "true" : "false") : "true";
  if (a.fill_value) return cl_int_literal(static_cast<std::int64_t>(*a.fill_value), t);
  return is_signed_integer(t) ? cl_lowest(t) : cl_highest(t);
}

// Reads the `k`-th start at `at` (indices' multi-index or linear index) as a long, and clamps it
// into [0, hi] in the index type; `in_bounds` gains the check before clamping.
struct Start {
  std::string clamped;
  std::string check;
};
Start clamped_start(ExprEmitter& emit, const std::string& raw, std::int64_t hi) {
  const std::string s = emit.fresh("st");
  emit.line("const long " + s + " = (long)(" + raw + ");");
  return {"((" + emit.index_type() + ")(" + s + " < 0 ? 0 : (" + s + " > " + std::to_string(hi) +
              "L ? " + std::to_string(hi) + "L : " + s + ")))",
          "(" + s + " >= 0 && " + s + " <= " + std::to_string(hi) + "L)"};
}

EmitTask gather(ExprEmitter& emit, const Node& n, Index idx) {
  const GatherAttrs a = GatherAttrs::read(n.attrs);
  const Shape& in = emit.graph().node(n.inputs[0]).shape;
  const Shape& ishape = emit.graph().node(n.inputs[1]).shape;
  const auto d = emit.dims_of(idx);
  const Axes window = window_axes(in.size(), a.collapsed_slice_dims, a.operand_batching_dims);
  const Axes batch = batch_positions(n.shape.size(), a.offset_dims);
  std::vector<std::string> g;  // the indices' batch position
  for (std::int64_t p : batch) g.push_back(d[p]);
  std::vector<std::string> start(in.size(), "0");
  std::string in_bounds = "true";
  for (std::size_t k = 0; k < a.start_index_map.size(); ++k) {
    Index at{{}, g, ishape};
    at.dims.push_back(std::to_string(k));
    std::string raw = co_await emit.operand(n.inputs[1], at);
    const auto axis = static_cast<std::size_t>(a.start_index_map[k]);
    const Start s = clamped_start(emit, raw, in[axis] - a.slice_sizes[axis]);
    start[axis] = s.clamped;
    in_bounds += " && " + s.check;
  }
  for (std::size_t b = 0; b < a.operand_batching_dims.size(); ++b)
    start[a.operand_batching_dims[b]] = g[a.start_indices_batching_dims[b]];
  Index at{{}, start, in};
  for (std::size_t j = 0; j < window.size(); ++j)
    at.dims[window[j]] = "(" + start[window[j]] + " + " + d[a.offset_dims[j]] + ")";
  std::string x = co_await emit.operand(n.inputs[0], at);
  if (a.mode != IndexMode::fill || a.start_index_map.empty()) co_return x;
  co_return emit.bind_value(n, idx,
                            "((" + in_bounds + ") ? " + x + " : " + fill_literal(a, n.dtype) + ")");
}

// `acc` combined with update `u` as the scatter's op does (scatter replaces).
std::string combined(OpKind op, DType t, const std::string& acc, const std::string& u) {
  const std::string T = cl_type(t);
  const bool is_add = op == OpKind::ScatterAdd, is_mul = op == OpKind::ScatterMul;
  if (is_add || is_mul) {
    const char* sign = is_add ? " + " : " * ";
    if (t == DType::Bool) return "(" + acc + (is_add ? " || " : " && ") + u + ")";
    if (is_signed_integer(t))  // signed overflow wraps through the unsigned type
      return "((" + T + ")((" + unsigned_of(t) + ")" + acc + sign + "(" + unsigned_of(t) + ")" + u +
             "))";
    return "(" + acc + sign + u + ")";
  }
  if (op == OpKind::ScatterMin || op == OpKind::ScatterMax) {
    const bool is_max = op == OpKind::ScatterMax;
    if (t == DType::Bool) return "(" + acc + (is_max ? " || " : " && ") + u + ")";
    if (!is_float(t)) return std::string(is_max ? "max(" : "min(") + acc + ", " + u + ")";
    return "((isnan(" + acc + ") || isnan(" + u + ")) ? (" + acc + " + " + u + ") : f" +
           (is_max ? "max(" : "min(") + acc + ", " + u + "))";
  }
  return u;
}

EmitTask scatter(ExprEmitter& emit, const Node& n, Index idx) {
  const ScatterAttrs a = ScatterAttrs::read(n.attrs);
  const Shape& in = n.shape;
  const Shape& ishape = emit.graph().node(n.inputs[1]).shape;
  const Shape& ushape = emit.graph().node(n.inputs[2]).shape;
  std::string base = co_await emit.operand(n.inputs[0], idx);
  const std::int64_t rows = num_elements(Shape(ishape.begin(), ishape.end() - 1));
  if (rows == 0 || num_elements(ushape) == 0) co_return base;
  const auto d = emit.dims_of(idx);
  const Axes window = window_axes(in.size(), a.inserted_window_dims, a.operand_batching_dims);
  const Axes scatter_pos = batch_positions(ushape.size(), a.update_window_dims);
  std::vector<std::int64_t> sizes(in.size(), 1);
  for (std::size_t j = 0; j < window.size(); ++j)
    sizes[window[j]] = ushape[a.update_window_dims[j]];
  const std::string I = emit.index_type();
  const std::string acc = emit.fresh("acc");
  const std::string q = emit.fresh("q");
  const auto vector = static_cast<std::int64_t>(a.scatter_dims_to_operand_dims.size());
  emit.line(cl_type(n.dtype) + " " + acc + " = " + base + ";");
  emit.line("for (" + I + " " + q + " = 0; " + q + " < " + std::to_string(rows) + "; ++" + q +
            ") {");
  emit.push_scope();
  // The row's batch position, axis by axis.
  std::vector<std::string> g(ishape.size() - 1);
  std::int64_t stride = 1;
  for (std::size_t j = g.size(); j-- > 0;) {
    g[j] = emit.fresh("g");
    emit.line("const " + I + " " + g[j] + " = (" + q + " / " + std::to_string(stride) + ") % " +
              std::to_string(ishape[j]) + ";");
    stride *= ishape[j];
  }
  std::vector<std::string> start(in.size(), "0");
  std::string ok = "true";
  for (std::int64_t k = 0; k < vector; ++k) {
    Index at{
        "(" + q + " * " + std::to_string(vector) + " + " + std::to_string(k) + ")", {}, ishape};
    std::string raw = co_await emit.operand(n.inputs[1], at);
    const auto axis = static_cast<std::size_t>(a.scatter_dims_to_operand_dims[k]);
    const Start s = clamped_start(emit, raw, in[axis] - sizes[axis]);
    start[axis] = s.clamped;
    if (a.mode == IndexMode::fill) ok += " && " + s.check;
  }
  for (std::size_t b = 0; b < a.operand_batching_dims.size(); ++b)
    start[a.operand_batching_dims[b]] = g[a.scatter_indices_batching_dims[b]];
  // Whether this element lies in the row's window, and where in the update it is.
  std::vector<std::string> u(ushape.size());
  for (std::size_t j = 0; j < scatter_pos.size(); ++j) u[scatter_pos[j]] = g[j];
  std::size_t w = 0;
  for (std::size_t axis = 0; axis < in.size(); ++axis) {
    if (w < window.size() && window[w] == static_cast<std::int64_t>(axis)) {
      const std::string rel = emit.fresh("r");
      emit.line("const " + I + " " + rel + " = " + d[axis] + " - " + start[axis] + ";");
      ok += " && " + rel + " >= 0 && " + rel + " < " + std::to_string(sizes[axis]);
      u[a.update_window_dims[w]] = rel;
      ++w;
    } else {
      ok += " && " + d[axis] + " == " + start[axis];
    }
  }
  emit.line("if (" + ok + ") {");
  emit.push_scope();
  const Index at_update{{}, u, ushape};  // named: no temporary may live across a co_await
  std::string update = co_await emit.operand(n.inputs[2], at_update);
  emit.line(acc + " = " + combined(n.op, n.dtype, acc, update) + ";");
  emit.pop_scope();
  emit.line("}");
  emit.pop_scope();
  emit.line("}");
  co_return acc;
}

}  // namespace

void define_gather_scatter_lowerings(Lowerings& table) {
  table.add(element(OpKind::Gather, gather));
  for (OpKind op : {OpKind::Scatter, OpKind::ScatterAdd, OpKind::ScatterMul, OpKind::ScatterMin,
                    OpKind::ScatterMax})
    table.add(element(op, scatter));
}

}  // namespace weft::opencl::lowerings
