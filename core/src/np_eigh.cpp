// weft::np::linalg's eigh and eigvalsh over lax::eigh, as jax.numpy.linalg writes them.
#include "np_internal.h"
#include "weft/np_linalg.h"

namespace weft::np::linalg {

using namespace internal;

namespace {

// Integer and bool operands compute in f32 (promote_dtypes_inexact); then a square matrix or
// a batch of them.
Array square_inexact(const Array& a, const char* op, const std::source_location& loc) {
  const Array x = cast(a, inexact_type(a.dtype()), loc);
  const Shape& s = x.shape();
  if (s.size() < 2 || s[s.size() - 1] != s[s.size() - 2])
    throw ShapeError(std::string(op) + ": a must be a square matrix or a batch of them " +
                     "[..., n, n]; got " + shape_to_string(s) + " at " + loc_str(loc));
  return x;
}

}  // namespace

std::pair<Array, Array> eigh(const Array& a, bool lower, bool symmetrize_input,
                             std::source_location loc) {
  const Array x = square_inexact(a, "eigh", loc);
  const auto [v, w] = lax::eigh(x, lower, symmetrize_input, true, loc);
  return {w, v};
}

Array eigvalsh(const Array& a, bool lower, std::source_location loc) {
  return eigh(a, lower, true, loc).first;
}

}  // namespace weft::np::linalg
