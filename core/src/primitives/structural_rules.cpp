#include "primitives/structural_rules.h"

#include <algorithm>
#include <numeric>

#include "weft/error.h"
#include "weft/ops.h"
#include "weft/trace/trace.h"

namespace weft::prim {

Array full(const Array& like, double value, const std::source_location& loc) {
  const Array scalar = lax::constant(value, like.dtype(), loc);
  if (like.shape().empty()) return scalar;
  return lax::broadcast_in_dim(scalar, like.shape(), {}, loc);
}

Tangent add_tangents(Tangent a, Tangent b, const std::source_location& loc) {
  if (!a) return b;
  if (!b) return a;
  return lax::add(*a, *b, loc);
}

Array as_float(const Array& mask, DType dtype, const std::source_location& loc) {
  return lax::convert_element_type(mask, dtype, loc);
}

Array apply_linear(const Node& n, std::span<const Array> primals, std::span<const Tangent> tangents,
                   const std::vector<bool>& tangent_operands, const std::source_location& loc) {
  std::vector<Array> operands;
  operands.reserve(primals.size());
  for (std::size_t i = 0; i < primals.size(); ++i)
    operands.push_back(!tangent_operands[i] ? primals[i]
                       : tangents[i]        ? *tangents[i]
                                            : detail::zeros_like_value(primals[i], loc));
  return detail::bind(n.op, operands, n.attrs, n.type(), loc);
}

Tangent jvp_linear(const Node& n, std::span<const Array> primals, std::span<const Tangent> tangents,
                   const Array&, const std::source_location& loc) {
  return apply_linear(n, primals, tangents, std::vector<bool>(primals.size(), true), loc);
}

Array zeros_of(const TensorType& type, const std::source_location& loc) {
  const Array zero = lax::constant(0, type.dtype, loc);
  return type.shape.empty() ? zero : lax::broadcast_in_dim(zero, type.shape, {}, loc);
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

void not_linear(const Node& n, const std::string& api) {
  throw TransformError(api + ": " + std::string(op_name(n.op)) + " at " + n.origin.describe() +
                       " multiplies two values that both depend on the differentiated inputs "
                       "inside the linear part; this is a bug in weft's transformation rules");
}

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
  return b.batched ? b.value : detail::with_batch_axis(b.value, batch_size, loc);
}

Array axis_to_front(const Array& x, std::int64_t from, const std::source_location& loc) {
  if (from == 0) return x;
  Axes perm{from};
  for (std::int64_t d = 0; d < static_cast<std::int64_t>(x.shape().size()); ++d)
    if (d != from) perm.push_back(d);
  return lax::transpose(x, perm, loc);
}

Batched rebind_batched(const Node& n, std::span<const Batched> operands, std::int64_t batch_size,
                       const Attrs& attrs, const std::source_location& loc) {
  std::vector<Array> all;
  for (const Batched& b : operands) all.push_back(batched_value(b, batch_size, loc));
  return {detail::bind(n.op, all, attrs, {n.dtype, with_leading(batch_size, n.shape)}, loc), true};
}

Batched batch_as_leading_axis(const Node& n, std::span<const Batched> operands,
                              std::int64_t batch_size, const std::string&,
                              const std::source_location& loc) {
  return rebind_batched(n, operands, batch_size, n.attrs, loc);
}

}  // namespace weft::prim
