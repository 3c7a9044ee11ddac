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

// Sums the cotangent of a broadcast back to the operand's shape.
Array unbroadcast(const Array& ct, const Shape& operand, const Axes& dims,
                  const std::source_location& loc) {
  const Shape& out = ct.shape();
  Axes summed;
  for (std::size_t d = 0; d < out.size(); ++d) {
    const auto axis = static_cast<std::int64_t>(d);
    auto at = std::find(dims.begin(), dims.end(), axis);
    if (at == dims.end()) {
      summed.push_back(axis);
    } else {
      const auto i = static_cast<std::size_t>(at - dims.begin());
      if (operand[i] == 1 && out[d] != 1) summed.push_back(axis);
    }
  }
  Array r = summed.empty() ? ct : reduce_sum(ct, summed, loc);
  // The remaining result axes, ascending, against the operand's order of them.
  Axes remaining;
  for (std::size_t d = 0; d < out.size(); ++d)
    if (!contains(summed, static_cast<std::int64_t>(d)))
      remaining.push_back(static_cast<std::int64_t>(d));
  Axes perm;
  for (std::size_t i = 0; i < dims.size(); ++i) {
    auto at = std::find(remaining.begin(), remaining.end(), dims[i]);
    if (at != remaining.end()) perm.push_back(at - remaining.begin());
  }
  bool identity = true;
  for (std::size_t i = 0; i < perm.size(); ++i)
    identity = identity && perm[i] == static_cast<std::int64_t>(i);
  if (!identity) r = transpose(r, perm, loc);
  return r.shape() == operand ? r : reshape(r, operand, loc);
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
    throw TransformError(api + ": " + std::string(op_name(n.op)) + " at " + n.origin.describe() +
                         " " + std::string(rule.refusal));
  std::vector<Tangent> out(n.inputs.size());
  auto other = [&](std::size_t i) -> const Array& { return *values[i]; };
  switch (n.op) {
    case OpKind::BroadcastInDim:
      out[0] = unbroadcast(ct, types[0].shape, n.attrs.get_ints("dims"), loc);
      break;
    case OpKind::Reshape:
      out[0] = reshape(ct, types[0].shape, loc);
      break;
    case OpKind::Transpose:
      out[0] = transpose(ct, inverse_permutation(n.attrs.get_ints("permutation")), loc);
      break;
    case OpKind::Slice: {
      const Shape& in = types[0].shape;
      const Axes& start = n.attrs.get_ints("start");
      const Axes& stride = n.attrs.get_ints("stride");
      Axes low(in.size()), high(in.size()), interior(in.size());
      bool empty = false;
      for (std::size_t d = 0; d < in.size(); ++d) {
        const std::int64_t count = ct.shape()[d];
        if (count == 0) empty = true;
        low[d] = start[d];
        interior[d] = stride[d] - 1;
        high[d] = in[d] - (start[d] + (count - 1) * stride[d] + 1);
      }
      out[0] = empty ? zeros_of(types[0], loc)
                     : pad(ct, constant(0, ct.dtype(), loc), low, high, interior, loc);
      break;
    }
    case OpKind::Pad: {
      const Shape& in = types[0].shape;
      const Axes& low = n.attrs.get_ints("low");
      const Axes& high = n.attrs.get_ints("high");
      const Axes& interior = n.attrs.get_ints("interior");
      // Undo cropping (negative padding) with zeros, then take every (interior+1)-th element.
      Axes grow_low(in.size()), grow_high(in.size()), none(in.size(), 0), start(in.size()),
          limit(in.size()), step(in.size());
      bool crops = false, empty = false;
      for (std::size_t d = 0; d < in.size(); ++d) {
        grow_low[d] = std::max<std::int64_t>(-low[d], 0);
        grow_high[d] = std::max<std::int64_t>(-high[d], 0);
        crops = crops || grow_low[d] > 0 || grow_high[d] > 0;
        empty = empty || in[d] == 0;
        start[d] = std::max<std::int64_t>(low[d], 0);
        step[d] = interior[d] + 1;
        limit[d] = start[d] + (in[d] - 1) * step[d] + 1;
      }
      const Array grown =
          crops ? pad(ct, constant(0, ct.dtype(), loc), grow_low, grow_high, none, loc) : ct;
      const Array ct_x = empty ? zeros_of(types[0], loc) : slice(grown, start, limit, step, loc);
      if (linear[0]) out[0] = ct_x;
      if (linear[1]) {
        const Axes all_out = iota_axes(0, ct.shape().size());
        const Axes all_in = iota_axes(0, in.size());
        out[1] = sub(reduce_sum(ct, all_out, loc), reduce_sum(ct_x, all_in, loc), loc);
      }
      break;
    }
    case OpKind::Concatenate: {
      const auto axis = static_cast<std::size_t>(n.attrs.get_int("dimension"));
      std::int64_t offset = 0;
      for (std::size_t i = 0; i < n.inputs.size(); ++i) {
        const Shape& s = types[i].shape;
        if (linear[i]) {
          Axes start(s.size(), 0), limit(ct.shape().begin(), ct.shape().end());
          start[axis] = offset;
          limit[axis] = offset + s[axis];
          out[i] = slice(ct, start, limit, Axes(s.size(), 1), loc);
        }
        offset += s[axis];
      }
      break;
    }
    case OpKind::DynamicSlice: {
      for (std::size_t i = 1; i < n.inputs.size(); ++i)
        if (linear[i]) not_linear(n, api);
      std::vector<Array> starts;
      for (std::size_t i = 1; i < n.inputs.size(); ++i) starts.push_back(other(i));
      out[0] = dynamic_update_slice(zeros_of(types[0], loc), ct, starts, loc);
      break;
    }
    case OpKind::DynamicUpdateSlice: {
      for (std::size_t i = 2; i < n.inputs.size(); ++i)
        if (linear[i]) not_linear(n, api);
      std::vector<Array> starts;
      for (std::size_t i = 2; i < n.inputs.size(); ++i) starts.push_back(other(i));
      if (linear[0]) out[0] = dynamic_update_slice(ct, zeros_of(types[1], loc), starts, loc);
      if (linear[1]) out[1] = dynamic_slice(ct, starts, types[1].shape, loc);
      break;
    }
    case OpKind::ReduceSum: {
      const Axes& axes = n.attrs.get_ints("axes");
      Axes kept;
      for (std::size_t d = 0; d < types[0].shape.size(); ++d)
        if (!contains(axes, static_cast<std::int64_t>(d)))
          kept.push_back(static_cast<std::int64_t>(d));
      out[0] = broadcast_in_dim(ct, types[0].shape, kept, loc);
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
