// Leaves that make values from attributes alone: constant and iota.
#include "value.h"

namespace weft::interp {

Value eval_leaf(const Node& node) {
  Value out = make_value(node.dtype, node.shape);
  if (node.op == OpKind::Constant) {
    if (is_float(node.dtype)) {
      out.f[0] = round_to(node.dtype, node.attrs.get_float("value"));
    } else {
      out.i[0] = wrap_to(node.dtype, node.attrs.get_int("value"));
    }
    return out;
  }
  // Iota: each element is its index along `dimension`.
  const auto dim = static_cast<std::size_t>(node.attrs.get_int("dimension"));
  const std::int64_t stride = row_major_strides(node.shape)[dim];
  const std::int64_t extent = node.shape[dim];
  const std::int64_t n = out.size();
  for (std::int64_t k = 0; k < n; ++k) {
    const std::int64_t index = (k / stride) % extent;
    if (is_float(node.dtype)) {
      out.f[k] = convert_to_float(node.dtype, DType::I64, 0.0, index);
    } else {
      out.i[k] = wrap_to(node.dtype, index);
    }
  }
  return out;
}

}  // namespace weft::interp
