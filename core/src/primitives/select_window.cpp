// reduce_window_max's and reduce_window_min's derivatives, as JAX's select_and_gather_add and
// select_and_scatter_add (jax/_src/lax/windowed_reductions.py), whose numbers on XLA's CPU
// backend they reproduce. Both choose one position per window by a fold in row-major window
// order that keeps the position chosen so far while select_prim(kept, candidate) holds (ge:
// the first maximum; a NaN is replaced by the next element):
//  - select_and_gather_add(tangents, operand) folds the operand's elements only (padding and
//    base-dilation holes are skipped) from (identity, tangent 0), as XLA's reduce_window of
//    (operand, tangent) pairs: a window whose elements all equal the identity (-inf for ge,
//    +inf for le) gets 0. Linear in the tangents; transposes to select_and_scatter_add.
//  - select_and_scatter_add(source, operand) folds from the window's first position on, the
//    padding holding the identity, as XLA's select_and_scatter over the operand padded with the
//    identity (JAX's CPU lowering): each source element is added at the chosen operand position
//    (nothing where that is padding). No dilation. Linear in the source; transposes to
//    select_and_gather_add.
// Each runs in a kernel of its own (opencl/src/codegen/window_kernel.cpp,
// select_scatter_kernel.cpp).
#include <cmath>
#include <limits>

#include "primitives/families.h"
#include "primitives/structural_rules.h"
#include "primitives/type_rule_checks.h"
#include "primitives/window_geometry.h"
#include "weft/error.h"
#include "weft/ir/op_attrs.h"
#include "weft/ops.h"
#include "weft/trace/trace.h"

namespace weft::prim {

namespace {

using interp::Operands;
using interp::Value;

// Both operands one float type; select_prim "ge" or "le".
void check_select_operands(OpKind op, std::span<const TensorType> operands, const Attrs& attrs) {
  if (!SelectWindowAttrs::valid_select(attrs))
    shape_fail(op, operands, "select_prim must be \"ge\" (max) or \"le\" (min)");
  if (operands[0].dtype != operands[1].dtype)
    dtype_fail(op, operands, "both operands must have one dtype");
  if (!is_float(operands[1].dtype)) dtype_fail(op, operands, "differentiates float operands only");
}

TensorType select_and_gather_add_type(OpKind op, std::span<const TensorType> operands,
                                      const Attrs& attrs, const TensorType&) {
  check_select_operands(op, operands, attrs);
  if (operands[0].shape != operands[1].shape)
    shape_fail(op, operands, "the tangents must have the operand's shape");
  const WindowAttrs a = WindowAttrs::read(attrs);
  return {operands[1].dtype, window_result_shape(op, operands, operands[1].shape, a)};
}

TensorType select_and_scatter_add_type(OpKind op, std::span<const TensorType> operands,
                                       const Attrs& attrs, const TensorType&) {
  check_select_operands(op, operands, attrs);
  const WindowAttrs a = WindowAttrs::read(attrs);
  const std::vector<std::int64_t> ones(a.window_dimensions.size(), 1);
  if (a.base_dilation != ones || a.window_dilation != ones)
    shape_fail(op, operands,
               "has no dilation (as JAX's); transpose a dilated select_and_gather_add instead");
  const Shape windows = window_result_shape(op, operands, operands[1].shape, a);
  if (operands[0].shape != windows)
    shape_fail(op, operands,
               "the source must have one element per window, shape " + shape_to_string(windows));
  return operands[1];
}

// ---- Evaluators ----------------------------------------------------------------------------

// The fold both ops make over each window.
struct Chooser {
  bool chooses_max;
  double identity() const {
    return chooses_max ? -std::numeric_limits<double>::infinity()
                       : std::numeric_limits<double>::infinity();
  }
  bool keeps(double kept, double candidate) const {
    return chooses_max ? kept >= candidate : kept <= candidate;
  }
};

Value evaluate_select_and_gather_add(const Node& node, Operands operands) {
  const Value& tangents = *operands[0];
  const Value& x = *operands[1];
  const SelectWindowAttrs a = SelectWindowAttrs::read(node.attrs);
  const Chooser choose{a.chooses_max};
  Value out = interp::make_value(node.dtype, node.shape);
  double kept = 0;
  for_each_window_position(x.shape, node.shape, a.window,
                           [&](std::int64_t o, std::int64_t w, std::int64_t at) {
                             if (w == 0) {
                               kept = choose.identity();
                               out.f[o] = 0;
                             }
                             if (at < 0 || choose.keeps(kept, x.f[at])) return;
                             kept = x.f[at];
                             out.f[o] = tangents.f[at];
                           });
  return out;
}

Value evaluate_select_and_scatter_add(const Node& node, Operands operands) {
  const Value& source = *operands[0];
  const Value& x = *operands[1];
  const SelectWindowAttrs a = SelectWindowAttrs::read(node.attrs);
  const Chooser choose{a.chooses_max};
  Value out = interp::make_value(node.dtype, node.shape);
  const std::int64_t last = num_elements(Shape(a.window.window_dimensions)) - 1;
  double kept = 0;
  std::int64_t chosen = -1;
  for_each_window_position(x.shape, source.shape, a.window,
                           [&](std::int64_t o, std::int64_t w, std::int64_t at) {
                             const double candidate = at < 0 ? choose.identity() : x.f[at];
                             if (w == 0 || !choose.keeps(kept, candidate)) {
                               kept = candidate;
                               chosen = at;
                             }
                             if (w == last && chosen >= 0) out.f[chosen] += source.f[o];
                           });
  for (double& v : out.f) v = interp::round_to(node.dtype, v);
  return out;
}

// ---- Rules ---------------------------------------------------------------------------------

// Linear in the first operand (the tangents, the source), the operand only choosing.
Tangent jvp_first_operand(const Node& n, std::span<const Array> primals,
                          std::span<const Tangent> tangents, const Array&,
                          const std::source_location& loc) {
  if (!tangents[0]) return std::nullopt;
  return apply_linear(n, primals, tangents, {true, false}, loc);
}

// JAX's _select_and_gather_add_transpose: base-dilation holes become identity elements of the
// operand (never chosen over a real one), the cotangent is scattered there and the holes are
// sliced away. Window dilation has no transpose, as in JAX.
std::vector<Tangent> transpose_select_and_gather_add(const Node& n, const Array& ct,
                                                     std::span<const std::optional<Array>> values,
                                                     std::span<const TensorType>,
                                                     const std::vector<bool>& linear,
                                                     const std::string& api,
                                                     const std::source_location& loc) {
  if (linear[1]) not_linear(n, api);
  const SelectWindowAttrs a = SelectWindowAttrs::read(n.attrs);
  const std::size_t rank = a.window.window_dimensions.size();
  const std::vector<std::int64_t> ones(rank, 1);
  if (a.window.window_dilation != ones)
    throw TransformError(api + ": select_and_gather_add at " + n.origin.describe() +
                         " has window_dilation=" + list_to_string(a.window.window_dilation) +
                         ", which has no transpose (as in JAX): reverse mode through a max or min "
                         "pool needs window_dilation 1");
  Array operand = *values[1];
  const bool dilated = a.window.base_dilation != ones;
  if (dilated) {
    const Chooser choose{a.chooses_max};
    Axes interior(rank);
    for (std::size_t d = 0; d < rank; ++d) interior[d] = a.window.base_dilation[d] - 1;
    operand = lax::pad(operand, lax::constant(choose.identity(), operand.dtype(), loc),
                       Axes(rank, 0), Axes(rank, 0), interior, loc);
  }
  WindowAttrs scatter = a.window;
  scatter.base_dilation = ones;
  Array result = lax::select_and_scatter_add(ct, operand, a.chooses_max, scatter, loc);
  if (dilated)
    result = lax::slice(result, Axes(rank, 0), result.shape(), a.window.base_dilation, loc);
  return {result, std::nullopt};
}

std::vector<Tangent> transpose_select_and_scatter_add(const Node& n, const Array& ct,
                                                      std::span<const std::optional<Array>> values,
                                                      std::span<const TensorType>,
                                                      const std::vector<bool>& linear,
                                                      const std::string& api,
                                                      const std::source_location& loc) {
  if (linear[1]) not_linear(n, api);
  const SelectWindowAttrs a = SelectWindowAttrs::read(n.attrs);
  return {lax::select_and_gather_add(ct, *values[1], a.chooses_max, a.window, loc), std::nullopt};
}

Primitive select_window(OpKind kind, std::string_view name) {
  Primitive p = row(kind, name, OpClass::Window, 2);
  p.info.own_kernel = true;
  p.jvp = rule_from(jvp_first_operand);
  p.batch = rule_from(batch_window);
  return p;
}

}  // namespace

void define_select_window_primitives(Definitions& defs) {
  Primitive gather = select_window(OpKind::SelectAndGatherAdd, "select_and_gather_add");
  gather.type = select_and_gather_add_type;
  gather.evaluate = evaluate_select_and_gather_add;
  gather.transpose = rule_from(transpose_select_and_gather_add);
  defs.add(std::move(gather));

  Primitive scatter = select_window(OpKind::SelectAndScatterAdd, "select_and_scatter_add");
  scatter.type = select_and_scatter_add_type;
  scatter.evaluate = evaluate_select_and_scatter_add;
  scatter.transpose = rule_from(transpose_select_and_scatter_add);
  defs.add(std::move(scatter));
}

}  // namespace weft::prim
