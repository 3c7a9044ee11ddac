// Layout ops. Each one computes, for every result element, which operand element it copies
// (an index into the operands' elements laid end to end), then gathers.
#include <algorithm>

#include "index.h"

namespace weft::interp {

namespace {

Value broadcast_in_dim(const Node& node, const Value& x) {
  const auto& dims = node.attrs.get_ints("dims");
  const auto in_strides = row_major_strides(x.shape);
  // Result axes that no operand axis maps to, and operand axes of extent 1, repeat.
  std::vector<std::int64_t> strides(node.shape.size(), 0);
  for (std::size_t i = 0; i < dims.size(); ++i)
    if (x.shape[i] != 1) strides[dims[i]] = in_strides[i];
  const Value* sources[] = {&x};
  return gather(node.dtype, node.shape, sources, strided_map(node.shape, strides, 0));
}

Value slice(const Node& node, const Value& x) {
  const auto& start = node.attrs.get_ints("start");
  const auto& stride = node.attrs.get_ints("stride");
  const auto in_strides = row_major_strides(x.shape);
  std::vector<std::int64_t> strides(x.shape.size());
  std::int64_t offset = 0;
  for (std::size_t d = 0; d < x.shape.size(); ++d) {
    strides[d] = in_strides[d] * stride[d];
    offset += start[d] * in_strides[d];
  }
  const Value* sources[] = {&x};
  return gather(node.dtype, node.shape, sources, strided_map(node.shape, strides, offset));
}

// The start of a window of `size` on each axis, read from scalar operands and clamped so the
// window stays inside `shape`.
std::vector<std::int64_t> clamped_starts(Operands starts, const Shape& shape, const Shape& size) {
  std::vector<std::int64_t> out(shape.size());
  for (std::size_t d = 0; d < shape.size(); ++d)
    out[d] = std::clamp<std::int64_t>(starts[d]->i[0], 0, shape[d] - size[d]);
  return out;
}

Value dynamic_slice(const Node& node, Operands operands) {
  const Value& x = *operands[0];
  const auto start = clamped_starts(operands.subspan(1), x.shape, node.shape);
  const auto strides = row_major_strides(x.shape);
  std::int64_t offset = 0;
  for (std::size_t d = 0; d < x.shape.size(); ++d) offset += start[d] * strides[d];
  const Value* sources[] = {&x};
  return gather(node.dtype, node.shape, sources, strided_map(node.shape, strides, offset));
}

Value dynamic_update_slice(const Node& node, Operands operands) {
  const Value& x = *operands[0];
  const Value& update = *operands[1];
  const auto start = clamped_starts(operands.subspan(2), x.shape, update.shape);
  const auto strides = row_major_strides(x.shape);
  std::int64_t offset = 0;
  for (std::size_t d = 0; d < x.shape.size(); ++d) offset += start[d] * strides[d];
  std::vector<std::int64_t> src(static_cast<std::size_t>(x.size()));
  for (std::size_t k = 0; k < src.size(); ++k) src[k] = static_cast<std::int64_t>(k);
  // Update element u lands at targets[u] and is source element x.size() + u.
  const auto targets = strided_map(update.shape, strides, offset);
  for (std::size_t u = 0; u < targets.size(); ++u)
    src[targets[u]] = x.size() + static_cast<std::int64_t>(u);
  const Value* sources[] = {&x, &update};
  return gather(node.dtype, node.shape, sources, src);
}

Value concatenate(const Node& node, Operands operands) {
  const auto dim = static_cast<std::size_t>(node.attrs.get_int("dimension"));
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
  return gather(node.dtype, node.shape, operands, src);
}

Value pad(const Node& node, Operands operands) {
  const Value& x = *operands[0];
  const auto& low = node.attrs.get_ints("low");
  const auto& interior = node.attrs.get_ints("interior");
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
  for_each_index(node.shape, [&](std::int64_t k, const std::vector<std::int64_t>& index) {
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
  return gather(node.dtype, node.shape, operands, src);
}

}  // namespace

Value eval_layout(const Node& node, Operands operands) {
  const Value& x = *operands[0];
  switch (node.op) {
    case OpKind::BroadcastInDim:
      return broadcast_in_dim(node, x);
    case OpKind::Reshape: {
      Value out = x;
      out.shape = node.shape;
      return out;
    }
    case OpKind::Transpose:
      return transposed(x, node.attrs.get_ints("permutation"));
    case OpKind::Slice:
      return slice(node, x);
    case OpKind::DynamicSlice:
      return dynamic_slice(node, operands);
    case OpKind::DynamicUpdateSlice:
      return dynamic_update_slice(node, operands);
    case OpKind::Concatenate:
      return concatenate(node, operands);
    case OpKind::Pad:
      return pad(node, operands);
    default:
      break;
  }
  throw InvalidGraphError("interpret: " + std::string(op_name(node.op)) + " is not a layout op");
}

}  // namespace weft::interp
