// The batching rule of each value primitive: the node applied to operands of which some carry
// a leading batch axis, producing a result with the batch axis leading too.
#pragma once

#include <source_location>
#include <span>
#include <vector>

#include "weft/array.h"
#include "weft/ir/graph.h"

namespace weft::detail {

struct Batched {
  Array value;
  bool batched = false;  // value has a leading batch axis
};

// `n` is a value node; at least one operand is batched.
Batched batch_rule(const Node& n, std::span<const Batched> operands, std::int64_t batch_size,
                   const std::string& api, const std::source_location& loc);

// Evaluates `g` on `params` (one per parameter), staging each node's batching rule (control
// nodes: batch_control) into the current context; returns its outputs.
std::vector<Batched> vmap_graph(const Graph& g, std::span<const Batched> params,
                                std::int64_t batch_size, const std::source_location& loc);

// Broadcasts an unbatched value to a leading batch axis of `batch_size`.
Array with_batch_axis(const Array& value, std::int64_t batch_size, const std::source_location& loc);

}  // namespace weft::detail
