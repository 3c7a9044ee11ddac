#include "transforms/transpose_rules.h"

#include <algorithm>
#include <numeric>

#include "primitives/primitive.h"
#include "weft/error.h"
#include "weft/ops.h"
#include "weft/trace/trace.h"

namespace weft::detail {

namespace {

using namespace lax;

Array zeros_of(const TensorType& type, const std::source_location& loc) {
  const Array zero = constant(0, type.dtype, loc);
  return type.shape.empty() ? zero : broadcast_in_dim(zero, type.shape, {}, loc);
}

Axes iota_axes(std::size_t from, std::size_t count) {
  Axes axes(count);
  std::iota(axes.begin(), axes.end(), static_cast<std::int64_t>(from));
  return axes;
}

bool contains(const Axes& axes, std::int64_t d) {
  return std::find(axes.begin(), axes.end(), d) != axes.end();
}

Axes inverse_permutation(const Axes& perm) {
  Axes inverse(perm.size());
  for (std::size_t i = 0; i < perm.size(); ++i)
    inverse[static_cast<std::size_t>(perm[i])] = static_cast<std::int64_t>(i);
  return inverse;
}

// dot_general's cotangent for its left operand `x` (JAX's _dot_general_transpose_lhs):
// contract the cotangent with `y` over y's free axes, then put x's axes back in order.
Array dot_transpose_lhs(const Array& ct, const Array& y, const TensorType& x_type,
                        const Axes& x_contract, const Axes& y_contract, const Axes& x_batch,
                        const Axes& y_batch, bool swap_result, const std::source_location& loc) {
  const std::size_t x_rank = x_type.shape.size(), y_rank = y.shape().size();
  Axes x_kept, y_kept;
  for (std::size_t d = 0; d < x_rank; ++d)
    if (!contains(x_contract, static_cast<std::int64_t>(d)) &&
        !contains(x_batch, static_cast<std::int64_t>(d)))
      x_kept.push_back(static_cast<std::int64_t>(d));
  for (std::size_t d = 0; d < y_rank; ++d)
    if (!contains(y_contract, static_cast<std::int64_t>(d)) &&
        !contains(y_batch, static_cast<std::int64_t>(d)))
      y_kept.push_back(static_cast<std::int64_t>(d));
  // The result's axes: batch, then (lhs free, rhs free); for the rhs transpose x is the rhs.
  const Axes result_batch = iota_axes(0, x_batch.size());
  const Axes result_y = swap_result ? iota_axes(x_batch.size(), y_kept.size())
                                    : iota_axes(x_batch.size() + x_kept.size(), y_kept.size());
  const Array contracted = dot_general(ct, y,
                                       DotDims{.lhs_contracting = result_y,
                                               .rhs_contracting = y_kept,
                                               .lhs_batch = result_batch,
                                               .rhs_batch = y_batch},
                                       loc);
  // contracted's axes: x_batch, x_kept, then x_contract ordered as y_contract is sorted.
  std::vector<std::size_t> order(y_contract.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(),
            [&](std::size_t a, std::size_t b) { return y_contract[a] < y_contract[b]; });
  Axes layout = x_batch;
  layout.insert(layout.end(), x_kept.begin(), x_kept.end());
  for (std::size_t k : order) layout.push_back(x_contract[k]);
  // layout[j] is the x axis at contracted's axis j; transpose by its inverse.
  const Axes perm = inverse_permutation(layout);
  bool identity = true;
  for (std::size_t i = 0; i < perm.size(); ++i)
    identity = identity && perm[i] == static_cast<std::int64_t>(i);
  return identity ? contracted : transpose(contracted, perm, loc);
}

[[noreturn]] void not_linear(const Node& n, const std::string& api) {
  throw TransformError(api + ": " + std::string(op_name(n.op)) + " at " + n.origin.describe() +
                       " multiplies two values that both depend on the differentiated inputs "
                       "inside the linear part; this is a bug in weft's transformation rules");
}

}  // namespace

std::vector<Tangent> transpose_rule(const Node& n, const Array& ct,
                                    std::span<const std::optional<Array>> values,
                                    std::span<const TensorType> types,
                                    const std::vector<bool>& linear, const std::string& api,
                                    const std::source_location& loc) {
  // Migration to core/src/primitives/: a definition's rule wins over the switch below.
  const auto& rule = prim::primitive(n.op).transpose;
  if (rule.fn) return rule.fn(n, ct, values, types, linear, api, loc);
  if (!rule.refusal.empty())
    throw TransformError(api + ": " + std::string(rule.refusal) + " (" +
                         std::string(op_name(n.op)) + " at " + n.origin.describe() + ")");
  std::vector<Tangent> out(n.inputs.size());
  auto other = [&](std::size_t i) -> const Array& { return *values[i]; };
  switch (n.op) {
    case OpKind::Neg:
      out[0] = neg(ct, loc);
      break;
    case OpKind::Add:
      for (std::size_t i = 0; i < 2; ++i)
        if (linear[i]) out[i] = ct;
      break;
    case OpKind::Sub:
      if (linear[0]) out[0] = ct;
      if (linear[1]) out[1] = neg(ct, loc);
      break;
    case OpKind::Mul:
      if (linear[0] && linear[1]) not_linear(n, api);
      if (linear[0]) out[0] = mul(ct, other(1), loc);
      if (linear[1]) out[1] = mul(other(0), ct, loc);
      break;
    case OpKind::Div:
      if (linear[1]) not_linear(n, api);
      out[0] = div(ct, other(1), loc);
      break;
    case OpKind::Convert:
      out[0] = convert_element_type(ct, types[0].dtype, loc);
      break;
    case OpKind::Select: {
      if (linear[0]) not_linear(n, api);
      const Array zero = zeros_of({ct.dtype(), ct.shape()}, loc);
      if (linear[1]) out[1] = select(other(0), ct, zero, loc);
      if (linear[2]) out[2] = select(other(0), zero, ct, loc);
      break;
    }
    case OpKind::DotGeneral: {
      if (linear[0] && linear[1]) not_linear(n, api);
      const Axes& lc = n.attrs.get_ints("lhs_contracting");
      const Axes& rc = n.attrs.get_ints("rhs_contracting");
      const Axes& lb = n.attrs.get_ints("lhs_batch");
      const Axes& rb = n.attrs.get_ints("rhs_batch");
      if (linear[0]) out[0] = dot_transpose_lhs(ct, other(1), types[0], lc, rc, lb, rb, false, loc);
      if (linear[1]) out[1] = dot_transpose_lhs(ct, other(0), types[1], rc, lc, rb, lb, true, loc);
      break;
    }
    default:
      throw TransformError(api + ": " + std::string(op_name(n.op)) + " at " + n.origin.describe() +
                           " has no transpose rule, so reverse mode cannot pass through it");
  }
  // Only linear operands get cotangents.
  for (std::size_t i = 0; i < out.size(); ++i)
    if (out[i] && !linear[i]) out[i].reset();
  return out;
}

}  // namespace weft::detail
