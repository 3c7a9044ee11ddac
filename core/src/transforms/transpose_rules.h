// The transpose of each linear primitive: given the cotangent of a node's result, the
// cotangents of its linear operands. `linear[i]` says which operands are linear (depend on the
// linearized inputs); the others are ordinary values, given in `values`, and for the linear
// ones `values[i]` is unset and only `types[i]` is known.
#pragma once

#include <optional>
#include <source_location>
#include <span>
#include <vector>

#include "transforms/jvp_rules.h"
#include "weft/ir/graph.h"

namespace weft::detail {

// Cotangents for each operand (nullopt: zero, or not linear). Throws TransformError when `n`
// is not linear in its linear operands (a product of two linear values), or has no transpose.
std::vector<Tangent> transpose_rule(const Node& n, const Array& cotangent,
                                    std::span<const std::optional<Array>> values,
                                    std::span<const TensorType> types,
                                    const std::vector<bool>& linear, const std::string& api,
                                    const std::source_location& loc);

}  // namespace weft::detail
