// Neural-network layers that are compositions of primitives, with the semantics of their Flax
// namesakes (flax.linen), so models port line by line.
#pragma once

#include <cstdint>
#include <optional>

#include "weft/array.h"
#include "weft/ops.h"

namespace weft::nn {

// flax.linen.GroupNorm on x of shape [batch, ..., features]: the features are split into
// `num_groups` groups; each batch entry's group is normalised by its mean and variance over
// every axis but the batch (var = E[x^2] - E[x]^2, clipped at 0, as Flax's fast variance), then
// scaled and shifted per feature by `scale` and `bias` (shape [features]; absent: 1 and 0).
// Throws ShapeError when the rank is below 2, num_groups does not divide the features, or
// scale/bias have another shape; DTypeError for a non-float x.
Array group_norm(const Array& x, std::int64_t num_groups, const std::optional<Array>& scale = {},
                 const std::optional<Array>& bias = {}, double epsilon = 1e-6, WEFT_LOC_PARAM);

}  // namespace weft::nn
