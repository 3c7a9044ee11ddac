// The eigendecomposition of symmetric matrices over the last two axes (jax.lax.linalg.eigh_p),
// the leading axes a batch. weft's value ops have one result, so eigh_p's two are two
// primitives of one operand sharing one kernel (own_kernel_family "eigh", as lu's three):
// `eigh_vectors` (the eigenvectors in columns, [..., n, n]) and `eigh_values` ([..., n]). Only
// one triangle of the operand is read (`lower`); symmetrizing is lax::eigh's business, as in
// JAX. With `sort_eigenvalues` the eigenvalues ascend (NaN last) and the vectors follow them;
// each vector's sign is fixed (fix_signs) so that the device and the interpreter agree.
// The evaluators run cyclic Jacobi rotations in double until no rotation is worth making (the
// device kernel, opencl/src/codegen/eigh_kernel.cpp, is the parallel form of the same method).
// The jvp is JAX's _eigh_jvp_rule (non-degenerate perturbation theory).
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "primitives/families.h"
#include "primitives/matrix_rules.h"
#include "primitives/structural_rules.h"
#include "primitives/type_rule_checks.h"
#include "weft/ir/op_attrs.h"
#include "weft/ops.h"
#include "weft/trace/trace.h"

namespace weft::prim {

namespace {

using interp::Operands;
using interp::Value;

// ---- type rules ----------------------------------------------------------------------------

// The operand's size n, after checking it is a square float matrix or a batch of them and that
// the attributes are there.
std::int64_t check_operand(OpKind op, std::span<const TensorType> operands, const Attrs& attrs) {
  const TensorType& x = operands[0];
  const Shape& s = x.shape;
  if (s.size() < 2)
    shape_fail(op, operands,
               "the operand must be a matrix or a batch of matrices [..., n, n]; got rank " +
                   std::to_string(s.size()));
  if (s[s.size() - 1] != s[s.size() - 2])
    shape_fail(op, operands,
               "the operand must be square in its last two axes; got " + shape_to_string(s));
  if (x.dtype != DType::F32 && x.dtype != DType::F64)
    dtype_fail(op, operands,
               "supports f32 and f64 only; convert the operand first "
               "(lax::convert_element_type, or astype; np::linalg::eigh converts integers)");
  EighAttrs::read(attrs);  // both attributes present (a text graph may lack them)
  return s.back();
}

TensorType vectors_type(OpKind op, std::span<const TensorType> operands, const Attrs& attrs,
                        const TensorType&) {
  check_operand(op, operands, attrs);
  return operands[0];
}

TensorType values_type(OpKind op, std::span<const TensorType> operands, const Attrs& attrs,
                       const TensorType&) {
  check_operand(op, operands, attrs);
  const Shape& s = operands[0].shape;
  return {operands[0].dtype, Shape(s.begin(), s.end() - 1)};
}

// ---- evaluators ----------------------------------------------------------------------------

// Cyclic Jacobi on one symmetric n x n matrix `a` (row-major, both triangles filled): on return
// its diagonal holds the eigenvalues and `v` (the identity on entry) the eigenvectors in
// columns. A rotation of the pair (p, q) is made unless |a_pq| is negligible beside the two
// diagonal entries (relative accuracy) or beside the whole matrix; sweeps stop when none is
// made, or after `max_sweeps`.
void jacobi(std::vector<double>& a, std::vector<double>& v, std::int64_t n, int max_sweeps) {
  constexpr double eps = std::numeric_limits<double>::epsilon();
  double norm = 0;
  for (double x : a) norm += x * x;
  const double floor = eps * eps * std::sqrt(norm);
  auto at = [&](std::vector<double>& m, std::int64_t i, std::int64_t j) -> double& {
    return m[static_cast<std::size_t>(i * n + j)];
  };
  for (int sweep = 0; sweep < max_sweeps; ++sweep) {
    bool rotated = false;
    for (std::int64_t p = 0; p < n; ++p)
      for (std::int64_t q = p + 1; q < n; ++q) {
        const double apq = at(a, p, q), app = at(a, p, p), aqq = at(a, q, q);
        if (std::abs(apq) <= std::max(eps * std::sqrt(std::abs(app * aqq)), floor)) continue;
        rotated = true;
        // Golub and Van Loan's sym.schur2: J = [[c, s], [-s, c]] zeroes a_pq in J^T A J.
        const double tau = (aqq - app) / (2 * apq);
        const double t = (tau >= 0 ? 1.0 : -1.0) / (std::abs(tau) + std::sqrt(1 + tau * tau));
        const double c = 1 / std::sqrt(1 + t * t), s = t * c;
        for (std::int64_t j = 0; j < n; ++j) {  // rows p and q: J^T A
          const double x = at(a, p, j), y = at(a, q, j);
          at(a, p, j) = c * x - s * y;
          at(a, q, j) = s * x + c * y;
        }
        for (std::int64_t i = 0; i < n; ++i) {  // columns p and q: (J^T A) J, and V J
          const double x = at(a, i, p), y = at(a, i, q);
          at(a, i, p) = c * x - s * y;
          at(a, i, q) = s * x + c * y;
          const double vx = at(v, i, p), vy = at(v, i, q);
          at(v, i, p) = c * vx - s * vy;
          at(v, i, q) = s * vx + c * vy;
        }
        at(a, p, q) = at(a, q, p) = 0;
      }
    if (!rotated) break;
  }
}

// Each column's first entry within 0.1% of its largest magnitude made positive: the signs are
// otherwise arbitrary, and the device kernel makes the same choice (an exact tie, as in
// (1, 1) / sqrt(2), picks the first).
void fix_signs(std::vector<double>& v, std::int64_t n) {
  auto at = [&](std::int64_t i, std::int64_t k) -> double& {
    return v[static_cast<std::size_t>(i * n + k)];
  };
  for (std::int64_t k = 0; k < n; ++k) {
    double largest = 0;
    for (std::int64_t i = 0; i < n; ++i) largest = std::max(largest, std::abs(at(i, k)));
    std::int64_t lead = 0;
    while (lead < n - 1 && std::abs(at(lead, k)) < largest * 0.999) ++lead;
    if (at(lead, k) < 0)
      for (std::int64_t i = 0; i < n; ++i) at(i, k) = -at(i, k);
  }
}

enum class EighPart { vectors, values };

template <EighPart part>
Value evaluate_eigh(const Node& node, Operands operands) {
  const EighAttrs at = EighAttrs::read(node.attrs);
  const Value& x = *operands[0];
  Value out = interp::make_value(node.dtype, node.shape);
  const std::int64_t n = x.shape.back();
  if (n == 0) return out;
  const std::int64_t batch = x.size() / (n * n);
  std::vector<double> a(static_cast<std::size_t>(n * n)), v(a.size());
  std::vector<std::int64_t> order(static_cast<std::size_t>(n));
  for (std::int64_t b = 0; b < batch; ++b) {
    const double* m = x.f.data() + b * n * n;
    for (std::int64_t i = 0; i < n; ++i)
      for (std::int64_t j = 0; j < n; ++j) {
        const bool stored = at.lower ? i >= j : i <= j;
        a[static_cast<std::size_t>(i * n + j)] = stored ? m[i * n + j] : m[j * n + i];
        v[static_cast<std::size_t>(i * n + j)] = i == j ? 1.0 : 0.0;
      }
    jacobi(a, v, n, 60);
    fix_signs(v, n);
    auto w = [&](std::int64_t k) { return a[static_cast<std::size_t>(k * n + k)]; };
    std::iota(order.begin(), order.end(), std::int64_t{0});
    if (at.sort_eigenvalues)
      std::stable_sort(order.begin(), order.end(), [&](std::int64_t i, std::int64_t j) {
        return w(i) < w(j) || (std::isnan(w(j)) && !std::isnan(w(i)));
      });
    if constexpr (part == EighPart::values) {
      for (std::int64_t k = 0; k < n; ++k)
        out.f[static_cast<std::size_t>(b * n + k)] =
            interp::round_to(node.dtype, w(order[static_cast<std::size_t>(k)]));
    } else {
      for (std::int64_t i = 0; i < n; ++i)
        for (std::int64_t k = 0; k < n; ++k)
          out.f[static_cast<std::size_t>(b * n * n + i * n + k)] = interp::round_to(
              node.dtype, v[static_cast<std::size_t>(i * n + order[static_cast<std::size_t>(k)])]);
    }
  }
  return out;
}

// ---- rules ---------------------------------------------------------------------------------

// The other result of the decomposition of the same operand (one kernel computes both).
Array sibling(const Node& n, OpKind kind, const Array& operand, const std::source_location& loc) {
  const Array operands[] = {operand};
  return detail::bind(kind, operands, n.attrs, {}, loc);
}

// JAX's _eigh_jvp_rule: with X = V^T A_dot V, w_dot = diag(X) and V_dot = V (F o X), F_ij =
// 1 / (w_j - w_i) off the diagonal and 0 on it (built as (I + w_j - w_i)^-1 - I, which has no
// division by zero on the diagonal).
struct EighTangents {
  Array vectors, values;
};
EighTangents eigh_tangents(const Array& a_dot, const Array& v, const Array& w,
                           const std::source_location& loc) {
  const Shape& shape = v.shape();
  const std::size_t r = shape.size();
  const Array x = batch_matmul(batch_matmul(swap_last_two(v, loc), a_dot, loc), v, loc);
  // w_j along the last axis (columns), w_i along the one before (rows).
  Axes along_columns = iota_axes(0, r - 2), along_rows = iota_axes(0, r - 2);
  along_columns.push_back(static_cast<std::int64_t>(r - 1));
  along_rows.push_back(static_cast<std::int64_t>(r - 2));
  const Array w_j = lax::broadcast_in_dim(w, shape, along_columns, loc);
  const Array w_i = lax::broadcast_in_dim(w, shape, along_rows, loc);
  const Array eye = identity(v.dtype(), shape, loc);
  const Array f = lax::sub(
      lax::div(full(eye, 1.0, loc), lax::add(eye, lax::sub(w_j, w_i, loc), loc), loc), eye, loc);
  const Array dv = batch_matmul(v, lax::mul(f, x, loc), loc);
  const Array on_diagonal =
      lax::select(lax::gt(eye, full(eye, 0.0, loc), loc), x, full(x, 0.0, loc), loc);
  const Array dw = lax::reduce_sum(on_diagonal, {static_cast<std::int64_t>(r - 1)}, loc);
  return {dv, dw};
}

Tangent jvp_vectors(const Node& n, std::span<const Array> primals,
                    std::span<const Tangent> tangents, const Array& v,
                    const std::source_location& loc) {
  if (!tangents[0]) return std::nullopt;
  const Array w = sibling(n, OpKind::EighValues, primals[0], loc);
  return eigh_tangents(*tangents[0], v, w, loc).vectors;
}

Tangent jvp_values(const Node& n, std::span<const Array> primals, std::span<const Tangent> tangents,
                   const Array& w, const std::source_location& loc) {
  if (!tangents[0]) return std::nullopt;
  const Array v = sibling(n, OpKind::EighVectors, primals[0], loc);
  return eigh_tangents(*tangents[0], v, w, loc).values;
}

Primitive eigh_part(OpKind kind, std::string_view name) {
  Primitive p = row(kind, name, OpClass::Linalg, 1);
  p.info.own_kernel = true;
  p.info.fusion_cost = 4;
  p.info.jax_names = "eigh";
  p.info.own_kernel_family = "eigh";
  p.transpose = none<TransposeRule>("has no transpose rule: eigh is not linear in its operand");
  p.batch = rule_from(batch_as_leading_axis);
  return p;
}

}  // namespace

void define_eigh_primitives(Definitions& defs) {
  Primitive vectors = eigh_part(OpKind::EighVectors, "eigh_vectors");
  vectors.type = vectors_type;
  vectors.evaluate = evaluate_eigh<EighPart::vectors>;
  vectors.jvp = rule_from(jvp_vectors);
  defs.add(std::move(vectors));

  Primitive values = eigh_part(OpKind::EighValues, "eigh_values");
  values.type = values_type;
  values.evaluate = evaluate_eigh<EighPart::values>;
  values.jvp = rule_from(jvp_values);
  defs.add(std::move(values));
}

}  // namespace weft::prim
