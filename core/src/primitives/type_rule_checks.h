// What type rules share: the ShapeError and DTypeError that name the op and its operands, and
// the check of an axes attribute.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "weft/ir/shape_rules.h"

namespace weft::prim {

std::string list_to_string(const std::vector<std::int64_t>& v);  // "[0,2]"

[[noreturn]] void shape_fail(OpKind op, std::span<const TensorType> operands,
                             const std::string& what);
[[noreturn]] void dtype_fail(OpKind op, std::span<const TensorType> operands,
                             const std::string& what);

// `axes` (the attribute named `attr`) names axes of a rank-`rank` value, strictly increasing.
void check_axes_list(OpKind op, std::span<const TensorType> operands,
                     const std::vector<std::int64_t>& axes, std::size_t rank, const char* attr);

}  // namespace weft::prim
