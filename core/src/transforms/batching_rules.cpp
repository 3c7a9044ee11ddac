#include "transforms/batching_rules.h"

#include <algorithm>
#include <numeric>
#include <vector>

#include "primitives/primitive.h"
#include "weft/control_flow.h"
#include "weft/error.h"
#include "weft/ops.h"
#include "weft/trace/trace.h"

namespace weft::detail {

namespace {

using namespace lax;

Shape with_leading(std::int64_t size, const Shape& shape) {
  Shape out{size};
  out.insert(out.end(), shape.begin(), shape.end());
  return out;
}

Axes shifted(const Axes& axes) {
  Axes out;
  out.reserve(axes.size());
  for (std::int64_t a : axes) out.push_back(a + 1);
  return out;
}

Axes with_leading_axis(std::int64_t first, const Axes& rest) {
  Axes out{first};
  out.insert(out.end(), rest.begin(), rest.end());
  return out;
}

Array batched_value(const Batched& b, std::int64_t batch_size, const std::source_location& loc) {
  return b.batched ? b.value : with_batch_axis(b.value, batch_size, loc);
}

// Moves axis `from` of `x` to the front.
Array axis_to_front(const Array& x, std::int64_t from, const std::source_location& loc) {
  if (from == 0) return x;
  Axes perm{from};
  for (std::int64_t d = 0; d < static_cast<std::int64_t>(x.shape().size()); ++d)
    if (d != from) perm.push_back(d);
  return transpose(x, perm, loc);
}

[[noreturn]] void unsupported(const Node& n, const std::string& api, const std::string& what) {
  throw TransformError(api + ": " + std::string(op_name(n.op)) + " at " + n.origin.describe() +
                       " " + what);
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
        return std::pair<Array, Array>(c, bind(n.op, row, n.attrs, n.type(), loc));
      },
      none, xs, lax::ScanOptions{}, loc);
  return {ys, true};
}

Batched batch_dot(const Node& n, std::span<const Batched> operands, std::int64_t batch_size,
                  const std::source_location& loc) {
  const Axes& lc = n.attrs.get_ints("lhs_contracting");
  const Axes& rc = n.attrs.get_ints("rhs_contracting");
  const Axes& lb = n.attrs.get_ints("lhs_batch");
  const Axes& rb = n.attrs.get_ints("rhs_batch");
  const Batched& lhs = operands[0];
  const Batched& rhs = operands[1];
  Attrs attrs = n.attrs;
  const Array both[] = {lhs.value, rhs.value};
  if (lhs.batched && rhs.batched) {
    attrs.set("lhs_contracting", shifted(lc));
    attrs.set("rhs_contracting", shifted(rc));
    attrs.set("lhs_batch", with_leading_axis(0, shifted(lb)));
    attrs.set("rhs_batch", with_leading_axis(0, shifted(rb)));
    return {bind(n.op, both, attrs, {n.dtype, with_leading(batch_size, n.shape)}, loc), true};
  }
  // One side batched: its batch axis is a free axis of the product; find it and move it first.
  const auto nb = static_cast<std::int64_t>(lb.size());
  std::int64_t position = nb;
  if (lhs.batched) {
    attrs.set("lhs_contracting", shifted(lc));
    attrs.set("lhs_batch", shifted(lb));
  } else {
    attrs.set("rhs_contracting", shifted(rc));
    attrs.set("rhs_batch", shifted(rb));
    position += static_cast<std::int64_t>(lhs.value.shape().size() - lc.size() - lb.size());
  }
  Shape shape = n.shape;
  shape.insert(shape.begin() + position, batch_size);
  return {axis_to_front(bind(n.op, both, attrs, {n.dtype, shape}, loc), position, loc), true};
}

}  // namespace

Array with_batch_axis(const Array& value, std::int64_t batch_size,
                      const std::source_location& loc) {
  Axes dims(value.shape().size());
  std::iota(dims.begin(), dims.end(), 1);
  return broadcast_in_dim(value, with_leading(batch_size, value.shape()), dims, loc);
}

Batched batch_rule(const Node& n, std::span<const Batched> operands, std::int64_t batch_size,
                   const std::string& api, const std::source_location& loc) {
  // Migration to core/src/primitives/: a definition's rule wins over the switch below.
  const auto& rule = prim::primitive(n.op).batch;
  if (rule.fn) return rule.fn(n, operands, batch_size, api, loc);
  if (!rule.refusal.empty()) unsupported(n, api, std::string(rule.refusal));
  const TensorType result{n.dtype, with_leading(batch_size, n.shape)};
  auto all_batched = [&] {
    std::vector<Array> out;
    for (const Batched& b : operands) out.push_back(batched_value(b, batch_size, loc));
    return out;
  };
  Attrs attrs = n.attrs;
  switch (op_info(n.op).op_class) {
    case OpClass::Reduce:
      attrs.set("axes", shifted(n.attrs.get_ints("axes")));
      return {bind(n.op, all_batched(), attrs, result, loc), true};
    case OpClass::Dot:
      return batch_dot(n, operands, batch_size, loc);
    case OpClass::Layout:
      break;
    default:
      unsupported(n, api, "is not a value primitive; this is a bug in weft's vmap");
  }
  switch (n.op) {
    case OpKind::BroadcastInDim:
      attrs.set("dims", with_leading_axis(0, shifted(n.attrs.get_ints("dims"))));
      break;
    case OpKind::Reshape:
      break;
    case OpKind::Transpose:
      attrs.set("permutation", with_leading_axis(0, shifted(n.attrs.get_ints("permutation"))));
      break;
    case OpKind::Slice:
      attrs.set("start", with_leading_axis(0, n.attrs.get_ints("start")));
      attrs.set("limit", with_leading_axis(batch_size, n.attrs.get_ints("limit")));
      attrs.set("stride", with_leading_axis(1, n.attrs.get_ints("stride")));
      break;
    case OpKind::Pad: {
      attrs.set("low", with_leading_axis(0, n.attrs.get_ints("low")));
      attrs.set("high", with_leading_axis(0, n.attrs.get_ints("high")));
      attrs.set("interior", with_leading_axis(0, n.attrs.get_ints("interior")));
      const Array x = batched_value(operands[0], batch_size, loc);
      if (!operands[1].batched) {
        const Array padded[] = {x, operands[1].value};
        return {bind(n.op, padded, attrs, result, loc), true};
      }
      // A padding value per example: pad with zero, and mark where the padding went by padding
      // zeros with one; then select each example's value there.
      const Array zero = constant(0, x.dtype(), loc);
      const Array with_zero[] = {x, zero};
      const Array padded = bind(n.op, with_zero, attrs, result, loc);
      const Array marks_of[] = {broadcast_in_dim(constant(0, DType::I32, loc), x.shape(), {}, loc),
                                constant(1, DType::I32, loc)};
      const Array marks = bind(n.op, marks_of, attrs, {DType::I32, result.shape}, loc);
      const Array is_padding =
          eq(marks, broadcast_in_dim(constant(1, DType::I32, loc), result.shape, {}, loc), loc);
      const Array values = broadcast_in_dim(operands[1].value, result.shape, {0}, loc);
      return {select(is_padding, values, padded, loc), true};
    }
    case OpKind::Concatenate:
      attrs.set("dimension", n.attrs.get_int("dimension") + 1);
      break;
    case OpKind::DynamicSlice:
    case OpKind::DynamicUpdateSlice: {
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
      if (n.op == OpKind::DynamicSlice)
        attrs.set("sizes", with_leading_axis(batch_size, n.attrs.get_ints("sizes")));
      return {bind(n.op, args, attrs, result, loc), true};
    }
    default:
      unsupported(n, api, "has no batching rule");
  }
  return {bind(n.op, all_batched(), attrs, result, loc), true};
}

}  // namespace weft::detail
