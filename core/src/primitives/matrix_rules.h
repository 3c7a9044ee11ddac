// What the linear algebra rules (linalg.cpp, lu.cpp) build their jvps from: matrix products,
// transposes and triangles over the last two axes, the leading axes a batch (JAX's
// lax.batch_matmul, _T, _tril and _triu).
#pragma once

#include <cstdint>
#include <source_location>

#include "weft/array.h"

namespace weft::prim {

// x @ y over the last two axes, the leading ones a batch.
Array batch_matmul(const Array& x, const Array& y, const std::source_location& loc);
// x with its last two axes swapped.
Array swap_last_two(const Array& x, const std::source_location& loc);
// x where column - row <= k (lower) or >= k (upper), zero elsewhere.
Array triangle(const Array& x, bool lower, std::int64_t k, const std::source_location& loc);
// The identity matrices of dtype `t` and shape [..., n, n].
Array identity(DType t, const Shape& shape, const std::source_location& loc);

}  // namespace weft::prim
