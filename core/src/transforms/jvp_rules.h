// The forward-mode rule of each value primitive: the tangent of a node's result from its
// primal operands, their tangents and its primal result. A tangent is optional: nullopt is a
// symbolic zero (an unperturbed value, or any integer or bool value), so rules skip work on it.
#pragma once

#include <optional>
#include <source_location>
#include <span>

#include "weft/array.h"
#include "weft/ir/graph.h"

namespace weft::detail {

using Tangent = std::optional<Array>;

// `n` is a value node (not control, host, parameter or result). Returns nullopt when the
// result's tangent is zero.
Tangent jvp_rule(const Node& n, std::span<const Array> primals, std::span<const Tangent> tangents,
                 const Array& result, const std::source_location& loc);

// A zero tangent made concrete: zeros of `like`'s dtype and shape.
Array zeros_like_value(const Array& like, const std::source_location& loc);

// Whether values of this dtype carry tangents (floating point only).
bool has_tangent(DType dtype);

}  // namespace weft::detail
