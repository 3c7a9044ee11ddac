// The numpy layer's linear algebra (weft::np::linalg), as jax.numpy.linalg and
// jax.scipy.linalg, over weft::lax's primitives (weft/ops.h: cholesky, triangular_solve). The
// last two axes are the matrices, the leading ones a batch that broadcasts; integer and bool
// operands compute in f32, as JAX's promote_dtypes_inexact; f32 and f64 only.
#pragma once

#include <source_location>
#include <utility>

#include "weft/np.h"

namespace weft::np::linalg {

// jnp.linalg.cholesky: the lower-triangular L with L L^T = x, x symmetrized first as
// (x + x^T) / 2; with `upper`, the upper-triangular L^T. A matrix that is not positive
// definite gives NaN.
Array cholesky(const Array& x, bool upper = false, WEFT_LOC_PARAM);

// jax.scipy.linalg.solve_triangular: x with op(a) x = b, a triangular (its `lower` or upper
// triangle is read, its diagonal taken as ones with `unit_diagonal`), op(a) = a (trans 0), a^T
// (1) or a^H (2, a^T for real dtypes). b is a vector [n], a matrix [..., n, k], or a batch of
// vectors [..., n] with a [..., n, n].
Array solve_triangular(const Array& a, const Array& b, int trans = 0, bool lower = false,
                       bool unit_diagonal = false, WEFT_LOC_PARAM);

// jax.scipy.linalg.cho_solve: x with A x = b, given A's Cholesky factor c and whether it is the
// lower (L, A = L L^T) or the upper one (U, A = U^T U): cho_solve({c, lower}, b).
Array cho_solve(const std::pair<Array, bool>& c_and_lower, const Array& b, WEFT_LOC_PARAM);

// Built on lax::eigh (np_eigh.cpp). jnp.linalg.eigh: the eigenvalues [..., n] (ascending) and
// the eigenvectors in columns [..., n, n] of the symmetric a, in JAX's order {w, v};
// `lower` says which triangle is read when `symmetrize_input` is false (JAX's UPLO "L" or
// "U"), otherwise a becomes (a + a^T) / 2 first.
std::pair<Array, Array> eigh(const Array& a, bool lower = true, bool symmetrize_input = true,
                             WEFT_LOC_PARAM);
// jnp.linalg.eigvalsh: eigh's eigenvalues alone.
Array eigvalsh(const Array& a, bool lower = true, WEFT_LOC_PARAM);

// Built on lax::lu, as jax.numpy.linalg's are (a square, [..., n, n]).
// jnp.linalg.solve: x with a x = b, b a vector [n] (or [..., n] with a's batch) or a batch of
// matrices [..., n, k]; batch axes broadcast.
Array solve(const Array& a, const Array& b, WEFT_LOC_PARAM);
// jnp.linalg.inv: a's inverse.
Array inv(const Array& a, WEFT_LOC_PARAM);
// jnp.linalg.slogdet: the sign (-1, 0 or 1) and the log of the absolute value of a's
// determinant (-inf for a singular matrix).
std::pair<Array, Array> slogdet(const Array& a, WEFT_LOC_PARAM);
// jnp.linalg.det: sign * exp(logabsdet).
Array det(const Array& a, WEFT_LOC_PARAM);

}  // namespace weft::np::linalg
