// What a primitive's one definition (core/src/primitives/) states, for the test that walks
// every primitive (tests/primitive_walk_test.cpp).
#pragma once

#include <string>
#include <vector>

#include "weft/ir/op_kind.h"

namespace weft {

// The parts the definition of `kind` lacks ("type rule", "evaluator", "jvp rule", ...); empty
// when it states every part its class needs. A rule counts as stated when it is a function or
// an explicit refusal with the message users get.
std::vector<std::string> missing_definition_parts(OpKind kind);

}  // namespace weft
