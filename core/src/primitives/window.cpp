// Windowed reductions, as jax.lax's reduce_window_sum, reduce_window_max and reduce_window_min
// (jax/_src/lax/windowed_reductions.py): each result element reduces one window of the operand,
// whose padding and base-dilation holes hold the reduction's identity (0, -inf or +inf, an
// integer dtype's lowest or highest). Floats reduce in double and each result rounds once;
// integer sums wrap; max and min propagate NaN. reduce_window_sum is linear (its transpose pads
// the cotangent and sums its windows again); max and min differentiate through
// select_and_gather_add (select_window.cpp). Batching adds a leading window of size 1. Each runs
// in a kernel of its own (opencl/src/codegen/window_kernel.cpp).
#include <algorithm>
#include <cmath>
#include <limits>

#include "primitives/families.h"
#include "primitives/structural_rules.h"
#include "primitives/type_rule_checks.h"
#include "primitives/window_geometry.h"
#include "weft/ir/op_attrs.h"
#include "weft/ops.h"
#include "weft/trace/trace.h"

namespace weft::prim {

Shape window_result_shape(OpKind op, std::span<const TensorType> operands, const Shape& operand,
                          const WindowAttrs& a) {
  const std::size_t rank = operand.size();
  auto check_length = [&](const std::vector<std::int64_t>& v, const char* attr) {
    if (v.size() != rank)
      shape_fail(op, operands,
                 std::string(attr) + "=" + list_to_string(v) +
                     " needs one entry per axis of the rank-" + std::to_string(rank) + " operand");
  };
  auto check_positive = [&](const std::vector<std::int64_t>& v, const char* attr) {
    for (std::int64_t e : v)
      if (e < 1)
        shape_fail(op, operands,
                   std::string(attr) + "=" + list_to_string(v) + " must be positive on every axis");
  };
  check_length(a.window_dimensions, WindowAttrs::kWindowDimensions);
  check_length(a.window_strides, WindowAttrs::kWindowStrides);
  check_length(a.padding_low, WindowAttrs::kPaddingLow);
  check_length(a.padding_high, WindowAttrs::kPaddingHigh);
  check_length(a.base_dilation, WindowAttrs::kBaseDilation);
  check_length(a.window_dilation, WindowAttrs::kWindowDilation);
  check_positive(a.window_dimensions, WindowAttrs::kWindowDimensions);
  check_positive(a.window_strides, WindowAttrs::kWindowStrides);
  check_positive(a.base_dilation, WindowAttrs::kBaseDilation);
  check_positive(a.window_dilation, WindowAttrs::kWindowDilation);
  Shape result(rank);
  for (std::size_t d = 0; d < rank; ++d) {
    const std::int64_t dilated = operand[d] == 0 ? 0 : (operand[d] - 1) * a.base_dilation[d] + 1;
    const std::int64_t padded = dilated + a.padding_low[d] + a.padding_high[d];
    const std::int64_t window = (a.window_dimensions[d] - 1) * a.window_dilation[d] + 1;
    if (padded < window)
      shape_fail(op, operands,
                 "the window (" + std::to_string(window) + " elements dilated) on axis " +
                     std::to_string(d) + " is larger than the padded, dilated operand (" +
                     std::to_string(padded) + "); pad more or pass a smaller window");
    result[d] = (padded - window) / a.window_strides[d] + 1;
  }
  return result;
}

namespace {

using interp::Operands;
using interp::Value;

TensorType reduce_window_type(OpKind op, std::span<const TensorType> operands, const Attrs& attrs,
                              const TensorType&) {
  const TensorType& x = operands[0];
  if (x.dtype == DType::Bool)
    dtype_fail(op, operands, "takes numbers, not bool; convert the operand to an integer first");
  return {x.dtype, window_result_shape(op, operands, x.shape, WindowAttrs::read(attrs))};
}

// ---- Evaluators ----------------------------------------------------------------------------

Value evaluate_reduce_window(const Node& node, Operands operands) {
  const Value& x = *operands[0];
  const DType t = node.dtype;
  Value out = interp::make_value(t, node.shape);
  const bool floats = is_float(t);
  const double inf = std::numeric_limits<double>::infinity();
  // The identity, and the fold.
  double f_acc = 0;
  std::uint64_t i_acc = 0;
  auto start = [&] {
    switch (node.op) {
      case OpKind::ReduceWindowMax:
        f_acc = -inf;
        i_acc = static_cast<std::uint64_t>(interp::int_lowest(t));
        break;
      case OpKind::ReduceWindowMin:
        f_acc = inf;
        i_acc = static_cast<std::uint64_t>(interp::int_highest(t));
        break;
      default:
        f_acc = 0;
        i_acc = 0;
    }
  };
  auto fold = [&](std::int64_t at) {
    const auto acc = static_cast<std::int64_t>(i_acc);
    switch (node.op) {
      case OpKind::ReduceWindowMax:
        if (floats)
          f_acc = std::isnan(f_acc) || std::isnan(x.f[at]) ? NAN : std::max(f_acc, x.f[at]);
        else
          i_acc = static_cast<std::uint64_t>(interp::int_max(t, acc, x.i[at]));
        break;
      case OpKind::ReduceWindowMin:
        if (floats)
          f_acc = std::isnan(f_acc) || std::isnan(x.f[at]) ? NAN : std::min(f_acc, x.f[at]);
        else
          i_acc = static_cast<std::uint64_t>(interp::int_min(t, acc, x.i[at]));
        break;
      default:
        if (floats)
          f_acc += x.f[at];
        else
          i_acc += static_cast<std::uint64_t>(x.i[at]);
    }
  };
  const WindowAttrs a = WindowAttrs::read(node.attrs);
  const std::int64_t last = num_elements(Shape(a.window_dimensions)) - 1;
  for_each_window_position(x.shape, node.shape, a,
                           [&](std::int64_t o, std::int64_t w, std::int64_t at) {
                             if (w == 0) start();
                             if (at >= 0) fold(at);
                             if (w != last) return;
                             if (floats)
                               out.f[o] = interp::round_to(t, f_acc);
                             else
                               out.i[o] = interp::wrap_to(t, i_acc);
                           });
  return out;
}

// ---- Rules ---------------------------------------------------------------------------------

// The cotangent padded (zeros between its elements, `stride - 1` of them, and around, as
// JAX's _conv_general_vjp_lhs_padding) and summed over windows again, the base dilation as the
// stride: each operand element gets the cotangents of the windows that cover it.
std::vector<Tangent> transpose_reduce_window_sum(const Node& n, const Array& ct,
                                                 std::span<const std::optional<Array>>,
                                                 std::span<const TensorType> types,
                                                 const std::vector<bool>&, const std::string&,
                                                 const std::source_location& loc) {
  const WindowAttrs a = WindowAttrs::read(n.attrs);
  const Shape& in = types[0].shape;
  const std::size_t rank = in.size();
  Axes low(rank), high(rank), interior(rank);
  for (std::size_t d = 0; d < rank; ++d) {
    auto dilate = [](std::int64_t size, std::int64_t by) {
      return size == 0 ? 0 : (size - 1) * by + 1;
    };
    const std::int64_t operand = dilate(in[d], a.base_dilation[d]);
    const std::int64_t window = dilate(a.window_dimensions[d], a.window_dilation[d]);
    const std::int64_t result = dilate(ct.shape()[d], a.window_strides[d]);
    low[d] = window - a.padding_low[d] - 1;
    high[d] = operand + window - 1 - result - low[d];
    interior[d] = a.window_strides[d] - 1;
  }
  const Array padded = lax::pad(ct, lax::constant(0, ct.dtype(), loc), low, high, interior, loc);
  WindowAttrs back;
  back.window_dimensions = a.window_dimensions;
  back.window_strides = a.base_dilation;
  back.padding_low.assign(rank, 0);
  back.padding_high.assign(rank, 0);
  back.base_dilation.assign(rank, 1);
  back.window_dilation = a.window_dilation;
  return {lax::reduce_window_sum(padded, back, loc)};
}

// max and min: the tangent where each window's fold chooses (JAX's
// _reduce_window_chooser_jvp_rule).
Tangent jvp_reduce_window_chooser(const Node& n, std::span<const Array> primals,
                                  std::span<const Tangent> tangents, const Array&,
                                  const std::source_location& loc) {
  if (!tangents[0]) return std::nullopt;
  return lax::select_and_gather_add(*tangents[0], primals[0], n.op == OpKind::ReduceWindowMax,
                                    WindowAttrs::read(n.attrs), loc);
}

Primitive reduce_window(OpKind kind, std::string_view name) {
  Primitive p = row(kind, name, OpClass::Window, 1);
  p.info.own_kernel = true;
  p.type = reduce_window_type;
  p.evaluate = evaluate_reduce_window;
  p.batch = rule_from(batch_window);
  return p;
}

}  // namespace

// A leading window axis of size 1 over the batch axis, moved to the front of every operand.
Batched batch_window(const Node& n, std::span<const Batched> operands, std::int64_t batch_size,
                     const std::string&, const std::source_location& loc) {
  WindowAttrs a = WindowAttrs::read(n.attrs);
  auto lead = [](std::vector<std::int64_t>& v, std::int64_t first) { v.insert(v.begin(), first); };
  lead(a.window_dimensions, 1);
  lead(a.window_strides, 1);
  lead(a.padding_low, 0);
  lead(a.padding_high, 0);
  lead(a.base_dilation, 1);
  lead(a.window_dilation, 1);
  const bool dilated = n.attrs.has(WindowAttrs::kBaseDilation);
  return rebind_batched(n, operands, batch_size,
                        updated_attrs(n.attrs, dilated ? a.write() : a.write_undilated()), loc);
}

void define_window_primitives(Definitions& defs) {
  Primitive sum = reduce_window(OpKind::ReduceWindowSum, "reduce_window_sum");
  sum.jvp = rule_from(jvp_linear);
  sum.transpose = rule_from(transpose_reduce_window_sum);
  defs.add(std::move(sum));

  for (auto [kind, name] : {std::pair{OpKind::ReduceWindowMax, "reduce_window_max"},
                            std::pair{OpKind::ReduceWindowMin, "reduce_window_min"}}) {
    Primitive chooser = reduce_window(kind, name);
    chooser.jvp = rule_from(jvp_reduce_window_chooser);
    chooser.transpose = no_transpose();
    defs.add(std::move(chooser));
  }
}

}  // namespace weft::prim
