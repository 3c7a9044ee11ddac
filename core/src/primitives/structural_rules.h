// What the transformation rules of the structural families (layout, reduce, dot) share.
#pragma once

#include <cstdint>
#include <source_location>
#include <span>
#include <string>
#include <vector>

#include "primitives/primitive.h"
#include "weft/ops.h"

namespace weft::prim {

using detail::Batched;
using detail::Tangent;
using lax::Axes;

// A rule given by its function (no refusal).
template <typename Fn>
Rule<Fn> rule_from(Fn fn) {
  return Rule<Fn>{fn, {}};
}

// jvp.
// A constant of `like`'s dtype and shape.
Array full(const Array& like, double value, const std::source_location& loc);
// The sum of two tangents, either of which may be a symbolic zero.
Tangent add_tangents(Tangent a, Tangent b, const std::source_location& loc);
// A bool mask as 0/1 values of a float dtype.
Array as_float(const Array& mask, DType dtype, const std::source_location& loc);
// The node again, the operands `tangent_operands` names replaced by their tangents (zeros for
// a symbolic zero): the tangent of an op linear in those operands.
Array apply_linear(const Node& n, std::span<const Array> primals, std::span<const Tangent> tangents,
                   const std::vector<bool>& tangent_operands, const std::source_location& loc);
// The jvp rule of an op linear in all its operands.
Tangent jvp_linear(const Node& n, std::span<const Array> primals, std::span<const Tangent> tangents,
                   const Array& result, const std::source_location& loc);

// Transpose.
Array zeros_of(const TensorType& type, const std::source_location& loc);
Axes iota_axes(std::size_t from, std::size_t count);  // from, from+1, ..., count of them
bool contains(const Axes& axes, std::int64_t d);
Axes inverse_permutation(const Axes& perm);
// A transpose met a product of two linear values: a bug in the rules that built the linear part.
[[noreturn]] void not_linear(const Node& n, const std::string& api);

// Batching.
Shape with_leading(std::int64_t size, const Shape& shape);
Axes shifted(const Axes& axes);                                // each axis + 1
Axes with_leading_axis(std::int64_t first, const Axes& rest);  // first, then rest
// The operand with a leading batch axis (an unbatched one broadcast to it).
Array batched_value(const Batched& b, std::int64_t batch_size, const std::source_location& loc);
// Moves axis `from` of `x` to the front.
Array axis_to_front(const Array& x, std::int64_t from, const std::source_location& loc);
// The node bound again under `attrs` on its operands, each given a leading batch axis.
Batched rebind_batched(const Node& n, std::span<const Batched> operands, std::int64_t batch_size,
                       const Attrs& attrs, const std::source_location& loc);
// The batching rule of ops whose leading axes are batch axes (cholesky, lu, eigh): the new
// batch axis joins them in front, and the node is bound again as it was.
Batched batch_as_leading_axis(const Node& n, std::span<const Batched> operands,
                              std::int64_t batch_size, const std::string& api,
                              const std::source_location& loc);

}  // namespace weft::prim
