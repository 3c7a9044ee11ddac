// Vectorizing map: vmap(f) applies f to every slice of its arguments along a batch axis, as one
// program whose ops carry the batch axis (not a loop).
//
//   auto batched = weft::vmap(per_example);          // in_axes 0, out_axes 0
//   Array ys = batched({xs}).at(0);                  // xs: [B, ...] -> ys: [B, ...]
//
// in_axes gives each argument's batch axis (nullopt: the argument is shared by all examples);
// out_axes each output's. f is traced once on one example's shapes; the result composes with
// jit, jvp, grad and vmap itself.
#pragma once

#include <functional>
#include <optional>
#include <source_location>
#include <vector>

#include "weft/array.h"
#include "weft/transforms/jvp.h"

namespace weft {

struct VmapOptions {
  // One entry per argument (empty: axis 0 for every argument); nullopt: not batched.
  std::vector<std::optional<int>> in_axes;
  // One entry per output (empty: axis 0 for every output).
  std::vector<int> out_axes;
};

ArrayFunction vmap(ArrayFunction f, VmapOptions options = {},
                   std::source_location loc = std::source_location::current());

// One argument and one result, both batched along axis 0.
std::function<Array(const Array&)> vmap(std::function<Array(const Array&)> f,
                                        std::source_location loc = std::source_location::current());

}  // namespace weft
