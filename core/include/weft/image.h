// Image resizing as jax.image.resize: "nearest" picks the input element whose cell holds each
// output position's centre; "linear" weights the input with a triangle kernel (bilinear in 2-D,
// trilinear in 3-D), widened by the scale when shrinking an axis with antialias (JAX's
// default), each axis whose size changes in turn. Any axis may change, so resize works on
// NHWC, NCHW or any layout; integer images resize linearly in f32.
#pragma once

#include <cstdint>

#include "weft/array.h"
#include "weft/ops.h"
#include "weft/shape.h"

namespace weft::image {

enum class ResizeMethod { Nearest, Linear };

// Throws ShapeError naming both shapes when the ranks differ or a size is negative, and when an
// axis shrinks to 0 from a non-empty one or grows from 0 (nothing to interpolate from).
Array resize(const Array& image, const Shape& shape, ResizeMethod method, bool antialias = true,
             WEFT_LOC_PARAM);

}  // namespace weft::image
