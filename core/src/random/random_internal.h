// Helpers shared by weft::random's sources.
#pragma once

#include <functional>
#include <source_location>
#include <vector>

#include "weft/array.h"
#include "weft/random.h"

namespace weft::random::detail {

// A scalar constant broadcast to `shape`.
Array full(double value, DType dtype, const Shape& shape, std::source_location loc);

// f applied to one key (u32[2]); a key array with leading dimensions maps f over them with
// vmap, as JAX's vmap over keys. `shared` operands go to every application unbatched. Checks
// the key's dtype and shape, naming `api` in the error.
using KeyFn = std::function<Array(const Array& key, const std::vector<Array>& shared)>;
Array map_keys(const Array& key, const std::vector<Array>& shared, const KeyFn& f, const char* api,
               std::source_location loc);

// The f32-only samplers refuse other dtypes the same way.
void require_f32(DType dtype, const char* api, std::source_location loc);

// a * b + c on f32 arrays of one shape rounded once, as the FMA that XLA's CPU compiler makes
// of a multiply feeding an add: computed in f64 (the product is exact there) where the default
// device has f64, else as two f32 roundings. On f64 arrays, by error-free transformations (one
// rounding but in rare double-rounding cases).
Array fused_multiply_add(const Array& a, const Array& b, const Array& c, std::source_location loc);

// XLA's f32 erf_inv (its polynomial, as jax.lax.erf_inv lowers on CPU).
Array erf_inv_f32(const Array& x, std::source_location loc);

// XLA's f64 erf_inv polynomials. XLA's f64 log1p, which feeds them, is not correctly rounded
// and the device's is, so results differ from JAX's by up to ~20 ulps near |x| = 0.64.
Array erf_inv_f64(const Array& x, std::source_location loc);

// uniform with f32 scalar bounds given as Arrays (truncated_normal's come from erf).
Array uniform_between(const Array& key, const Shape& shape, const Array& minval,
                      const Array& maxval, std::source_location loc);

}  // namespace weft::random::detail
