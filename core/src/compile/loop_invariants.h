// Which values of a while or scan body are the same in every iteration (loop-invariant code
// motion moves work on them; dot canonicalisation counts transposing them as free).
#pragma once

#include <vector>

#include "weft/ir/graph.h"

namespace weft {

// Per node of `loop`'s region `region`: whether it computes the same value in every iteration
// (a closed-over value, a carry the body returns unchanged, or a pure op reading only such
// values). Empty unless `loop` is a while or scan and `region` its body.
std::vector<bool> loop_body_invariants(const Node& loop, std::size_t region);

}  // namespace weft
