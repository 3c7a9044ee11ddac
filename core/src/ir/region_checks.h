// Checks shared by the control ops' region signature rules (core/src/primitives/): each throws
// what weft/ir/regions.h says, naming the op.
#pragma once

#include <cstddef>
#include <span>
#include <string>

#include "weft/ir/attrs.h"
#include "weft/ir/op_kind.h"
#include "weft/ir/shape_rules.h"

namespace weft::region_checks {

// An InvalidGraphError "<op>: <what>".
[[noreturn]] void fail(OpKind op, const std::string& what);

// An attribute giving a count of operands, checked against the `available` ones left for it.
std::size_t count_attr(OpKind op, const Attrs& attrs, const char* name, std::size_t available);

void expect_regions(OpKind op, std::size_t have, std::size_t want);

// A ShapeError unless `results` equal `want` (`what` names them: "the carries").
void expect_results(OpKind op, std::span<const TensorType> results,
                    std::span<const TensorType> want, const char* what);

}  // namespace weft::region_checks
