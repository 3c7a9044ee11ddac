// Gather as an element task: it reads its index vector, then its operand at the start plus the
// offset, so it fuses with what produces the operand and what consumes the result. The
// scatters run in kernels of their own (codegen/scatter_kernel.cpp).
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "codegen/cl_types.h"
#include "codegen/expr_emitter.h"
#include "codegen/lowerings/families.h"
#include "codegen/scatter_kernel.h"
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

}  // namespace

void define_gather_scatter_lowerings(Lowerings& table) {
  table.add(element(OpKind::Gather, gather));
  for (OpKind op : {OpKind::Scatter, OpKind::ScatterAdd, OpKind::ScatterMul, OpKind::ScatterMin,
                    OpKind::ScatterMax})
    table.add(own_kernel(op, "scatter", emit_scatter_kernel));
}

}  // namespace weft::opencl::lowerings
