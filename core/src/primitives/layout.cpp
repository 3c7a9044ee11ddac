// Layout primitives: they move elements, never compute them. Each evaluator computes, for every
// result element, which operand element it copies (an index into the operands' elements laid
// end to end), then gathers. Each is linear in its array operands, so its jvp is the op again
// on the tangents and its transpose moves the cotangent back.
#include <algorithm>
#include <numeric>

#include "interp/index.h"
#include "primitives/families.h"
#include "primitives/structural_rules.h"
#include "primitives/type_rule_checks.h"
#include "weft/control_flow.h"
#include "weft/ir/op_attrs.h"
#include "weft/ops.h"
#include "weft/trace/trace.h"

namespace weft::prim {

namespace {

using interp::Operands;
using interp::Value;
using namespace lax;

// A layout op: free to fuse, linear in every operand (dynamic slices: see their rules).
Primitive layout_op(OpKind kind, std::string_view name, int arity) {
  Primitive p = free_op(row(kind, name, OpClass::Layout, arity));
  p.jvp = rule_from(jvp_linear);
  return p;
}

// ---- broadcast_in_dim ----------------------------------------------------------------------

TensorType broadcast_in_dim_type(OpKind op, std::span<const TensorType> operands,
                                 const Attrs& attrs, const TensorType& declared) {
  const TensorType& in = operands[0];
  const std::size_t rank = in.shape.size();
  const Axes dims = BroadcastAttrs::read(attrs).dims;
  if (dims.size() != rank)
    shape_fail(op, operands,
               "dims=" + list_to_string(dims) + " must name one result axis per operand axis");
  check_axes_list(op, operands, dims, declared.shape.size(), BroadcastAttrs::kDims);
  for (std::size_t i = 0; i < rank; ++i)
    if (in.shape[i] != 1 && in.shape[i] != declared.shape[dims[i]])
      shape_fail(op, operands,
                 "operand axis " + std::to_string(i) + " of size " + std::to_string(in.shape[i]) +
                     " cannot broadcast to size " + std::to_string(declared.shape[dims[i]]) +
                     " of result " + shape_to_string(declared.shape));
  return {in.dtype, declared.shape};
}

Value evaluate_broadcast_in_dim(const Node& node, Operands operands) {
  const Value& x = *operands[0];
  const Axes dims = BroadcastAttrs::read(node.attrs).dims;
  const auto in_strides = row_major_strides(x.shape);
  // Result axes that no operand axis maps to, and operand axes of extent 1, repeat.
  std::vector<std::int64_t> strides(node.shape.size(), 0);
  for (std::size_t i = 0; i < dims.size(); ++i)
    if (x.shape[i] != 1) strides[dims[i]] = in_strides[i];
  return interp::strided_copy(node.dtype, node.shape, x, strides, 0);
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

std::vector<Tangent> transpose_broadcast_in_dim(const Node& n, const Array& ct,
                                                std::span<const std::optional<Array>>,
                                                std::span<const TensorType> types,
                                                const std::vector<bool>&, const std::string&,
                                                const std::source_location& loc) {
  return {unbroadcast(ct, types[0].shape, BroadcastAttrs::read(n.attrs).dims, loc)};
}

Batched batch_broadcast_in_dim(const Node& n, std::span<const Batched> operands,
                               std::int64_t batch_size, const std::string&,
                               const std::source_location& loc) {
  Attrs attrs = n.attrs;
  attrs.set(BroadcastAttrs::kDims,
            with_leading_axis(0, shifted(BroadcastAttrs::read(n.attrs).dims)));
  return rebind_batched(n, operands, batch_size, attrs, loc);
}

// ---- reshape -------------------------------------------------------------------------------

TensorType reshape_type(OpKind op, std::span<const TensorType> operands, const Attrs&,
                        const TensorType& declared) {
  const TensorType& in = operands[0];
  if (num_elements(in.shape) != num_elements(declared.shape))
    shape_fail(op, operands,
               "cannot reshape " + shape_to_string(in.shape) + " (" +
                   std::to_string(num_elements(in.shape)) + " elements) to " +
                   shape_to_string(declared.shape) + " (" +
                   std::to_string(num_elements(declared.shape)) + " elements)");
  return {in.dtype, declared.shape};
}

Value evaluate_reshape(const Node& node, Operands operands) {
  Value out = *operands[0];
  out.shape = node.shape;
  return out;
}

std::vector<Tangent> transpose_reshape(const Node&, const Array& ct,
                                       std::span<const std::optional<Array>>,
                                       std::span<const TensorType> types, const std::vector<bool>&,
                                       const std::string&, const std::source_location& loc) {
  return {reshape(ct, types[0].shape, loc)};
}

Batched batch_reshape(const Node& n, std::span<const Batched> operands, std::int64_t batch_size,
                      const std::string&, const std::source_location& loc) {
  return rebind_batched(n, operands, batch_size, n.attrs, loc);
}

// ---- transpose -----------------------------------------------------------------------------

TensorType transpose_type(OpKind op, std::span<const TensorType> operands, const Attrs& attrs,
                          const TensorType&) {
  const TensorType& in = operands[0];
  const std::size_t rank = in.shape.size();
  const Axes perm = TransposeAttrs::read(attrs).permutation;
  std::vector<std::int64_t> sorted = perm;
  std::sort(sorted.begin(), sorted.end());
  std::vector<std::int64_t> iota(rank);
  std::iota(iota.begin(), iota.end(), 0);
  if (sorted != iota)
    shape_fail(op, operands,
               "permutation=" + list_to_string(perm) + " is not a permutation of rank " +
                   std::to_string(rank));
  Shape out(rank);
  for (std::size_t i = 0; i < rank; ++i) out[i] = in.shape[perm[i]];
  return {in.dtype, out};
}

Value evaluate_transpose(const Node& node, Operands operands) {
  return interp::transposed(*operands[0], TransposeAttrs::read(node.attrs).permutation);
}

std::vector<Tangent> transpose_transpose(const Node& n, const Array& ct,
                                         std::span<const std::optional<Array>>,
                                         std::span<const TensorType>, const std::vector<bool>&,
                                         const std::string&, const std::source_location& loc) {
  return {transpose(ct, inverse_permutation(TransposeAttrs::read(n.attrs).permutation), loc)};
}

Batched batch_transpose(const Node& n, std::span<const Batched> operands, std::int64_t batch_size,
                        const std::string&, const std::source_location& loc) {
  Attrs attrs = n.attrs;
  attrs.set(TransposeAttrs::kPermutation,
            with_leading_axis(0, shifted(TransposeAttrs::read(n.attrs).permutation)));
  return rebind_batched(n, operands, batch_size, attrs, loc);
}

// ---- slice ---------------------------------------------------------------------------------

TensorType slice_type(OpKind op, std::span<const TensorType> operands, const Attrs& attrs,
                      const TensorType&) {
  const TensorType& in = operands[0];
  const std::size_t rank = in.shape.size();
  const SliceAttrs slice_attrs = SliceAttrs::read(attrs);
  const auto& start = slice_attrs.start;
  const auto& limit = slice_attrs.limit;
  const auto& stride = slice_attrs.stride;
  if (start.size() != rank || limit.size() != rank || stride.size() != rank)
    shape_fail(op, operands, "start, limit and stride need one entry per axis");
  Shape out(rank);
  for (std::size_t i = 0; i < rank; ++i) {
    if (start[i] < 0 || start[i] > limit[i] || limit[i] > in.shape[i] || stride[i] < 1)
      shape_fail(op, operands,
                 "axis " + std::to_string(i) + ": start=" + std::to_string(start[i]) +
                     " limit=" + std::to_string(limit[i]) + " stride=" + std::to_string(stride[i]) +
                     " is not a valid range of size " + std::to_string(in.shape[i]));
    out[i] = (limit[i] - start[i] + stride[i] - 1) / stride[i];
  }
  return {in.dtype, out};
}

Value evaluate_slice(const Node& node, Operands operands) {
  const Value& x = *operands[0];
  const SliceAttrs slice_attrs = SliceAttrs::read(node.attrs);
  const auto& start = slice_attrs.start;
  const auto& stride = slice_attrs.stride;
  const auto in_strides = row_major_strides(x.shape);
  std::vector<std::int64_t> strides(x.shape.size());
  std::int64_t offset = 0;
  for (std::size_t d = 0; d < x.shape.size(); ++d) {
    strides[d] = in_strides[d] * stride[d];
    offset += start[d] * in_strides[d];
  }
  return interp::strided_copy(node.dtype, node.shape, x, strides, offset);
}

std::vector<Tangent> transpose_slice(const Node& n, const Array& ct,
                                     std::span<const std::optional<Array>>,
                                     std::span<const TensorType> types, const std::vector<bool>&,
                                     const std::string&, const std::source_location& loc) {
  const Shape& in = types[0].shape;
  const SliceAttrs slice_attrs = SliceAttrs::read(n.attrs);
  const auto& start = slice_attrs.start;
  const auto& stride = slice_attrs.stride;
  Axes low(in.size()), high(in.size()), interior(in.size());
  bool empty = false;
  for (std::size_t d = 0; d < in.size(); ++d) {
    const std::int64_t count = ct.shape()[d];
    if (count == 0) empty = true;
    low[d] = start[d];
    interior[d] = stride[d] - 1;
    high[d] = in[d] - (start[d] + (count - 1) * stride[d] + 1);
  }
  return {empty ? zeros_of(types[0], loc)
                : pad(ct, constant(0, ct.dtype(), loc), low, high, interior, loc)};
}

Batched batch_slice(const Node& n, std::span<const Batched> operands, std::int64_t batch_size,
                    const std::string&, const std::source_location& loc) {
  Attrs attrs = n.attrs;
  const SliceAttrs slice_attrs = SliceAttrs::read(n.attrs);
  attrs.set(SliceAttrs::kStart, with_leading_axis(0, slice_attrs.start));
  attrs.set(SliceAttrs::kLimit, with_leading_axis(batch_size, slice_attrs.limit));
  attrs.set(SliceAttrs::kStride, with_leading_axis(1, slice_attrs.stride));
  return rebind_batched(n, operands, batch_size, attrs, loc);
}

// ---- dynamic_slice and dynamic_update_slice ------------------------------------------------
// Their start indices are operands (integer scalars, clamped so the window stays inside).

void check_start_indices(OpKind op, std::span<const TensorType> operands, std::size_t first_start,
                         std::size_t rank) {
  if (operands.size() != first_start + rank)
    shape_fail(op, operands,
               "expects " + std::to_string(first_start) +
                   " array operand(s) and one scalar start index per axis (" +
                   std::to_string(rank) + ")");
  for (std::size_t i = first_start; i < operands.size(); ++i)
    if (!operands[i].shape.empty() || !is_integer(operands[i].dtype))
      dtype_fail(op, operands, "start indices must be integer scalars");
}

TensorType dynamic_slice_type(OpKind op, std::span<const TensorType> operands, const Attrs& attrs,
                              const TensorType& declared) {
  const TensorType& in = operands.empty() ? declared : operands[0];
  const std::size_t rank = in.shape.size();
  check_start_indices(op, operands, 1, rank);
  const Axes sizes = DynamicSliceAttrs::read(attrs).sizes;
  if (sizes.size() != rank)
    shape_fail(op, operands, "sizes=" + list_to_string(sizes) + " needs one entry per axis");
  for (std::size_t i = 0; i < rank; ++i)
    if (sizes[i] < 0 || sizes[i] > in.shape[i])
      shape_fail(
          op, operands,
          "sizes=" + list_to_string(sizes) + " exceeds the operand on axis " + std::to_string(i));
  return {in.dtype, sizes};
}

TensorType dynamic_update_slice_type(OpKind op, std::span<const TensorType> operands, const Attrs&,
                                     const TensorType& declared) {
  const TensorType& in = operands.empty() ? declared : operands[0];
  const std::size_t rank = in.shape.size();
  check_start_indices(op, operands, 2, rank);
  const TensorType& update = operands[1];
  if (update.dtype != in.dtype) dtype_fail(op, operands, "update dtype must match the operand");
  if (update.shape.size() != rank) shape_fail(op, operands, "update rank must match the operand");
  for (std::size_t i = 0; i < rank; ++i)
    if (update.shape[i] > in.shape[i])
      shape_fail(op, operands, "update is larger than the operand on axis " + std::to_string(i));
  return in;
}

// The start of a window of `size` on each axis, read from scalar operands and clamped so the
// window stays inside `shape`.
std::vector<std::int64_t> clamped_starts(Operands starts, const Shape& shape, const Shape& size) {
  std::vector<std::int64_t> out(shape.size());
  for (std::size_t d = 0; d < shape.size(); ++d)
    out[d] = std::clamp<std::int64_t>(starts[d]->i[0], 0, shape[d] - size[d]);
  return out;
}

Value evaluate_dynamic_slice(const Node& node, Operands operands) {
  const Value& x = *operands[0];
  const auto start = clamped_starts(operands.subspan(1), x.shape, node.shape);
  const auto strides = row_major_strides(x.shape);
  std::int64_t offset = 0;
  for (std::size_t d = 0; d < x.shape.size(); ++d) offset += start[d] * strides[d];
  return interp::strided_copy(node.dtype, node.shape, x, strides, offset);
}

Value evaluate_dynamic_update_slice(const Node& node, Operands operands) {
  const Value& x = *operands[0];
  const Value& update = *operands[1];
  const auto start = clamped_starts(operands.subspan(2), x.shape, update.shape);
  const auto strides = row_major_strides(x.shape);
  std::int64_t offset = 0;
  for (std::size_t d = 0; d < x.shape.size(); ++d) offset += start[d] * strides[d];
  Value out = x;
  out.dtype = node.dtype;
  // Each run of the update's innermost axis lands on a run of the result's.
  interp::for_each_strided_row(
      update.shape, strides, offset,
      [&](std::int64_t from, std::int64_t to, std::int64_t count, std::int64_t step) {
        for (std::int64_t j = 0; j < count; ++j) {
          if (is_float(node.dtype))
            out.f[to + j * step] = update.f[from + j];
          else
            out.i[to + j * step] = update.i[from + j];
        }
      });
  return out;
}

// Linear in the array operands; the start indices stay primal.
Tangent jvp_dynamic_slice(const Node& n, std::span<const Array> primals,
                          std::span<const Tangent> tangents, const Array&,
                          const std::source_location& loc) {
  std::vector<bool> replaced(primals.size(), false);
  replaced[0] = true;
  return apply_linear(n, primals, tangents, replaced, loc);
}

Tangent jvp_dynamic_update_slice(const Node& n, std::span<const Array> primals,
                                 std::span<const Tangent> tangents, const Array&,
                                 const std::source_location& loc) {
  std::vector<bool> replaced(primals.size(), false);
  replaced[0] = replaced[1] = true;
  return apply_linear(n, primals, tangents, replaced, loc);
}

// The start indices (operands from `first_start` on), which must not be linear.
std::vector<Array> primal_starts(const Node& n, std::span<const std::optional<Array>> values,
                                 const std::vector<bool>& linear, std::size_t first_start,
                                 const std::string& api) {
  for (std::size_t i = first_start; i < n.inputs.size(); ++i)
    if (linear[i]) not_linear(n, api);
  std::vector<Array> starts;
  for (std::size_t i = first_start; i < n.inputs.size(); ++i) starts.push_back(*values[i]);
  return starts;
}

std::vector<Tangent> transpose_dynamic_slice(const Node& n, const Array& ct,
                                             std::span<const std::optional<Array>> values,
                                             std::span<const TensorType> types,
                                             const std::vector<bool>& linear,
                                             const std::string& api,
                                             const std::source_location& loc) {
  const std::vector<Array> starts = primal_starts(n, values, linear, 1, api);
  std::vector<Tangent> out(n.inputs.size());
  out[0] = dynamic_update_slice(zeros_of(types[0], loc), ct, starts, loc);
  return out;
}

std::vector<Tangent> transpose_dynamic_update_slice(const Node& n, const Array& ct,
                                                    std::span<const std::optional<Array>> values,
                                                    std::span<const TensorType> types,
                                                    const std::vector<bool>& linear,
                                                    const std::string& api,
                                                    const std::source_location& loc) {
  const std::vector<Array> starts = primal_starts(n, values, linear, 2, api);
  std::vector<Tangent> out(n.inputs.size());
  if (linear[0]) out[0] = dynamic_update_slice(ct, zeros_of(types[1], loc), starts, loc);
  if (linear[1]) out[1] = dynamic_slice(ct, starts, types[1].shape, loc);
  return out;
}

// The node applied to each example in turn: a scan over the batch whose body is the node on
// one row of every operand (an unbatched operand broadcast first). For what has no batched form
// (per-example start indices: weft has no gather).
Batched batch_per_example(const Node& n, std::span<const Batched> operands, std::int64_t batch_size,
                          const std::source_location& loc) {
  std::vector<Array> xs;
  for (const Batched& b : operands) xs.push_back(batched_value(b, batch_size, loc));
  const Array none = Array::scalar_int(0, DType::I32);
  const auto [carry, ys] = lax::scan(
      [&](const Array& c, const std::vector<Array>& row) {
        return std::pair<Array, Array>(c, detail::bind(n.op, row, n.attrs, n.type(), loc));
      },
      none, xs, lax::ScanOptions{}, loc);
  return {ys, true};
}

// Shared start indices: a zero start on the new leading axis; per-example ones: one op per
// example.
Batched batch_dynamic_slices(const Node& n, std::span<const Batched> operands,
                             std::int64_t batch_size, const std::source_location& loc) {
  const std::size_t first_start = n.op == OpKind::DynamicSlice ? 1 : 2;
  bool starts_batched = false;
  for (std::size_t i = first_start; i < operands.size(); ++i)
    starts_batched = starts_batched || operands[i].batched;
  if (starts_batched) return batch_per_example(n, operands, batch_size, loc);
  std::vector<Array> args;
  for (std::size_t i = 0; i < first_start; ++i)
    args.push_back(batched_value(operands[i], batch_size, loc));
  const DType index_type = operands[first_start].value.dtype();
  args.push_back(is_float(index_type) ? Array::scalar(0, index_type)
                                      : Array::scalar_int(0, index_type));
  for (std::size_t i = first_start; i < operands.size(); ++i) args.push_back(operands[i].value);
  Attrs attrs = n.attrs;
  if (n.op == OpKind::DynamicSlice)
    attrs.set(DynamicSliceAttrs::kSizes,
              with_leading_axis(batch_size, DynamicSliceAttrs::read(n.attrs).sizes));
  return {detail::bind(n.op, args, attrs, {n.dtype, with_leading(batch_size, n.shape)}, loc), true};
}

Batched batch_dynamic_slice(const Node& n, std::span<const Batched> operands,
                            std::int64_t batch_size, const std::string&,
                            const std::source_location& loc) {
  return batch_dynamic_slices(n, operands, batch_size, loc);
}

Batched batch_dynamic_update_slice(const Node& n, std::span<const Batched> operands,
                                   std::int64_t batch_size, const std::string&,
                                   const std::source_location& loc) {
  return batch_dynamic_slices(n, operands, batch_size, loc);
}

// ---- concatenate ---------------------------------------------------------------------------

TensorType concatenate_type(OpKind op, std::span<const TensorType> operands, const Attrs& attrs,
                            const TensorType& declared) {
  const TensorType& in = operands.empty() ? declared : operands[0];
  const std::size_t rank = in.shape.size();
  if (operands.empty()) shape_fail(op, operands, "needs at least one operand");
  const std::int64_t dim = DimensionAttrs::read(attrs).dimension;
  if (dim < 0 || dim >= static_cast<std::int64_t>(rank))
    shape_fail(op, operands,
               "dimension=" + std::to_string(dim) + " is outside rank " + std::to_string(rank));
  Shape out = in.shape;
  out[dim] = 0;
  for (const auto& t : operands) {
    if (t.dtype != in.dtype) dtype_fail(op, operands, "operands must share one dtype");
    if (t.shape.size() != rank) shape_fail(op, operands, "operands must share one rank");
    for (std::size_t i = 0; i < rank; ++i)
      if (static_cast<std::int64_t>(i) != dim && t.shape[i] != in.shape[i])
        shape_fail(op, operands,
                   "operands differ on axis " + std::to_string(i) +
                       ", which is not the concatenation axis " + std::to_string(dim));
    out[dim] += t.shape[dim];
  }
  return {in.dtype, out};
}

Value evaluate_concatenate(const Node& node, Operands operands) {
  const auto dim = static_cast<std::size_t>(DimensionAttrs::read(node.attrs).dimension);
  std::int64_t outer = 1;
  for (std::size_t d = 0; d < dim; ++d) outer *= node.shape[d];
  // Seen as [outer, block] matrices, the result's rows are the operands' rows side by side.
  std::vector<std::int64_t> base, block;
  std::int64_t total = 0;
  for (const Value* v : operands) {
    base.push_back(total);
    total += v->size();
    block.push_back(outer == 0 ? 0 : v->size() / outer);
  }
  std::vector<std::int64_t> src;
  src.reserve(static_cast<std::size_t>(num_elements(node.shape)));
  for (std::int64_t o = 0; o < outer; ++o)
    for (std::size_t j = 0; j < operands.size(); ++j)
      for (std::int64_t e = 0; e < block[j]; ++e) src.push_back(base[j] + o * block[j] + e);
  return interp::gather(node.dtype, node.shape, operands, src);
}

std::vector<Tangent> transpose_concatenate(const Node& n, const Array& ct,
                                           std::span<const std::optional<Array>>,
                                           std::span<const TensorType> types,
                                           const std::vector<bool>& linear, const std::string&,
                                           const std::source_location& loc) {
  std::vector<Tangent> out(n.inputs.size());
  const auto axis = static_cast<std::size_t>(DimensionAttrs::read(n.attrs).dimension);
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
  return out;
}

Batched batch_concatenate(const Node& n, std::span<const Batched> operands, std::int64_t batch_size,
                          const std::string&, const std::source_location& loc) {
  Attrs attrs = n.attrs;
  attrs.set(DimensionAttrs::kDimension, DimensionAttrs::read(n.attrs).dimension + 1);
  return rebind_batched(n, operands, batch_size, attrs, loc);
}

// ---- pad -----------------------------------------------------------------------------------

TensorType pad_type(OpKind op, std::span<const TensorType> operands, const Attrs& attrs,
                    const TensorType&) {
  const TensorType& in = operands[0];
  const std::size_t rank = in.shape.size();
  if (!operands[1].shape.empty() || operands[1].dtype != in.dtype)
    dtype_fail(op, operands, "the pad value must be a scalar of the operand's dtype");
  const PadAttrs pad_attrs = PadAttrs::read(attrs);
  const auto& low = pad_attrs.low;
  const auto& high = pad_attrs.high;
  const auto& interior = pad_attrs.interior;
  if (low.size() != rank || high.size() != rank || interior.size() != rank)
    shape_fail(op, operands, "low, high and interior need one entry per axis");
  Shape out(rank);
  for (std::size_t i = 0; i < rank; ++i) {
    if (interior[i] < 0) shape_fail(op, operands, "interior padding must be non-negative");
    out[i] =
        low[i] + high[i] + in.shape[i] + std::max<std::int64_t>(in.shape[i] - 1, 0) * interior[i];
    if (out[i] < 0)
      shape_fail(op, operands, "padding leaves a negative size on axis " + std::to_string(i));
  }
  return {in.dtype, out};
}

Value evaluate_pad(const Node& node, Operands operands) {
  const Value& x = *operands[0];
  const PadAttrs pad_attrs = PadAttrs::read(node.attrs);
  const auto& low = pad_attrs.low;
  const auto& interior = pad_attrs.interior;
  const std::size_t rank = x.shape.size();
  // axis_map[d][o]: the operand index on axis d that result index o copies, or -1 for padding.
  std::vector<std::vector<std::int64_t>> axis_map(rank);
  for (std::size_t d = 0; d < rank; ++d) {
    axis_map[d].assign(static_cast<std::size_t>(node.shape[d]), -1);
    const std::int64_t step = interior[d] + 1;
    for (std::int64_t o = 0; o < node.shape[d]; ++o) {
      const std::int64_t rel = o - low[d];
      if (rel >= 0 && rel % step == 0 && rel / step < x.shape[d]) axis_map[d][o] = rel / step;
    }
  }
  const auto strides = row_major_strides(x.shape);
  const std::int64_t pad_source = x.size();  // the pad value follows x's elements
  std::vector<std::int64_t> src(static_cast<std::size_t>(num_elements(node.shape)));
  interp::for_each_index(node.shape, [&](std::int64_t k, const std::vector<std::int64_t>& index) {
    std::int64_t at = 0;
    for (std::size_t d = 0; d < rank; ++d) {
      const std::int64_t i = axis_map[d][index[d]];
      if (i < 0) {
        at = pad_source;
        break;
      }
      at += i * strides[d];
    }
    src[k] = at;
  });
  return interp::gather(node.dtype, node.shape, operands, src);
}

std::vector<Tangent> transpose_pad(const Node& n, const Array& ct,
                                   std::span<const std::optional<Array>>,
                                   std::span<const TensorType> types,
                                   const std::vector<bool>& linear, const std::string&,
                                   const std::source_location& loc) {
  std::vector<Tangent> out(n.inputs.size());
  const Shape& in = types[0].shape;
  const PadAttrs pad_attrs = PadAttrs::read(n.attrs);
  const auto& low = pad_attrs.low;
  const auto& high = pad_attrs.high;
  const auto& interior = pad_attrs.interior;
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
  return out;
}

Batched batch_pad(const Node& n, std::span<const Batched> operands, std::int64_t batch_size,
                  const std::string&, const std::source_location& loc) {
  const TensorType result{n.dtype, with_leading(batch_size, n.shape)};
  Attrs attrs = n.attrs;
  const PadAttrs pad_attrs = PadAttrs::read(n.attrs);
  attrs.set(PadAttrs::kLow, with_leading_axis(0, pad_attrs.low));
  attrs.set(PadAttrs::kHigh, with_leading_axis(0, pad_attrs.high));
  attrs.set(PadAttrs::kInterior, with_leading_axis(0, pad_attrs.interior));
  const Array x = batched_value(operands[0], batch_size, loc);
  if (!operands[1].batched) {
    const Array padded[] = {x, operands[1].value};
    return {detail::bind(n.op, padded, attrs, result, loc), true};
  }
  // A padding value per example: pad with zero, and mark where the padding went by padding
  // zeros with one; then select each example's value there.
  const Array zero = constant(0, x.dtype(), loc);
  const Array with_zero[] = {x, zero};
  const Array padded = detail::bind(n.op, with_zero, attrs, result, loc);
  const Array marks_of[] = {broadcast_in_dim(constant(0, DType::I32, loc), x.shape(), {}, loc),
                            constant(1, DType::I32, loc)};
  const Array marks = detail::bind(n.op, marks_of, attrs, {DType::I32, result.shape}, loc);
  const Array is_padding =
      eq(marks, broadcast_in_dim(constant(1, DType::I32, loc), result.shape, {}, loc), loc);
  const Array values = broadcast_in_dim(operands[1].value, result.shape, {0}, loc);
  return {select(is_padding, values, padded, loc), true};
}

}  // namespace

void define_layout_primitives(Definitions& defs) {
  Primitive broadcast = layout_op(OpKind::BroadcastInDim, "broadcast_in_dim", 1);
  broadcast.type = broadcast_in_dim_type;
  broadcast.evaluate = evaluate_broadcast_in_dim;
  broadcast.transpose = rule_from(transpose_broadcast_in_dim);
  broadcast.batch = rule_from(batch_broadcast_in_dim);
  defs.add(std::move(broadcast));

  Primitive reshape = layout_op(OpKind::Reshape, "reshape", 1);
  reshape.type = reshape_type;
  reshape.evaluate = evaluate_reshape;
  reshape.transpose = rule_from(transpose_reshape);
  reshape.batch = rule_from(batch_reshape);
  defs.add(std::move(reshape));

  Primitive transpose = layout_op(OpKind::Transpose, "transpose", 1);
  transpose.type = transpose_type;
  transpose.evaluate = evaluate_transpose;
  transpose.transpose = rule_from(transpose_transpose);
  transpose.batch = rule_from(batch_transpose);
  defs.add(std::move(transpose));

  Primitive slice = layout_op(OpKind::Slice, "slice", 1);
  slice.type = slice_type;
  slice.evaluate = evaluate_slice;
  slice.transpose = rule_from(transpose_slice);
  slice.batch = rule_from(batch_slice);
  defs.add(std::move(slice));

  Primitive dynamic_slice = layout_op(OpKind::DynamicSlice, "dynamic_slice", -1);
  dynamic_slice.type = dynamic_slice_type;
  dynamic_slice.evaluate = evaluate_dynamic_slice;
  dynamic_slice.jvp = rule_from(jvp_dynamic_slice);
  dynamic_slice.transpose = rule_from(transpose_dynamic_slice);
  dynamic_slice.batch = rule_from(batch_dynamic_slice);
  defs.add(std::move(dynamic_slice));

  Primitive update = layout_op(OpKind::DynamicUpdateSlice, "dynamic_update_slice", -1);
  update.type = dynamic_update_slice_type;
  update.evaluate = evaluate_dynamic_update_slice;
  update.jvp = rule_from(jvp_dynamic_update_slice);
  update.transpose = rule_from(transpose_dynamic_update_slice);
  update.batch = rule_from(batch_dynamic_update_slice);
  defs.add(std::move(update));

  Primitive concatenate = layout_op(OpKind::Concatenate, "concatenate", -1);
  concatenate.type = concatenate_type;
  concatenate.evaluate = evaluate_concatenate;
  concatenate.transpose = rule_from(transpose_concatenate);
  concatenate.batch = rule_from(batch_concatenate);
  defs.add(std::move(concatenate));

  Primitive pad = layout_op(OpKind::Pad, "pad", 2);  // linear in x and in the pad value
  pad.type = pad_type;
  pad.evaluate = evaluate_pad;
  pad.transpose = rule_from(transpose_pad);
  pad.batch = rule_from(batch_pad);
  defs.add(std::move(pad));
}

}  // namespace weft::prim
