// dot_general: contracts lhs_contracting against rhs_contracting, pairing lhs_batch with
// rhs_batch; the result's axes are the batch axes, then lhs's free axes, then rhs's.
#include <algorithm>
#include <cstring>
#include <numeric>

#include "interp/index.h"
#include "interp/parallel.h"
#include "primitives/families.h"
#include "primitives/structural_rules.h"
#include "primitives/type_rule_checks.h"
#include "weft/ir/op_attrs.h"
#include "weft/ops.h"
#include "weft/trace/trace.h"

namespace weft::prim {

namespace {

using interp::Operands;
using interp::Value;
using namespace lax;

TensorType dot_general_type(OpKind op, std::span<const TensorType> operands, const Attrs& attrs,
                            const TensorType&) {
  const auto& lhs = operands[0];
  const auto& rhs = operands[1];
  if (lhs.dtype != rhs.dtype)
    dtype_fail(op, operands, "operands must have the same dtype; convert one of them");
  if (lhs.dtype == DType::Bool) dtype_fail(op, operands, "is not defined for bool operands");
  const DotGeneralAttrs dot_general_attrs = DotGeneralAttrs::read(attrs);
  const auto& lc = dot_general_attrs.lhs_contracting;
  const auto& rc = dot_general_attrs.rhs_contracting;
  const auto& lb = dot_general_attrs.lhs_batch;
  const auto& rb = dot_general_attrs.rhs_batch;
  if (lc.size() != rc.size() || lb.size() != rb.size())
    shape_fail(op, operands,
               "contracting and batch dimension lists must pair up: lhs_contracting=" +
                   list_to_string(lc) + " rhs_contracting=" + list_to_string(rc) +
                   " lhs_batch=" + list_to_string(lb) + " rhs_batch=" + list_to_string(rb));
  auto check_dims = [&](const TensorType& t, const std::vector<std::int64_t>& c,
                        const std::vector<std::int64_t>& b, const char* side) {
    std::vector<bool> used(t.shape.size(), false);
    for (auto list : {&c, &b})
      for (auto d : *list) {
        if (d < 0 || d >= static_cast<std::int64_t>(t.shape.size()) || used[d])
          shape_fail(op, operands,
                     std::string(side) + " dimension " + std::to_string(d) +
                         " is out of range or listed twice");
        used[d] = true;
      }
  };
  check_dims(lhs, lc, lb, "lhs");
  check_dims(rhs, rc, rb, "rhs");
  for (std::size_t i = 0; i < lc.size(); ++i)
    if (lhs.shape[lc[i]] != rhs.shape[rc[i]])
      shape_fail(op, operands,
                 "contracting dimensions differ in size: lhs dim " + std::to_string(lc[i]) +
                     " is " + std::to_string(lhs.shape[lc[i]]) + ", rhs dim " +
                     std::to_string(rc[i]) + " is " + std::to_string(rhs.shape[rc[i]]));
  for (std::size_t i = 0; i < lb.size(); ++i)
    if (lhs.shape[lb[i]] != rhs.shape[rb[i]])
      shape_fail(op, operands,
                 "batch dimensions differ in size: lhs dim " + std::to_string(lb[i]) +
                     " vs rhs dim " + std::to_string(rb[i]));
  Shape out;
  for (auto d : lb) out.push_back(lhs.shape[d]);
  auto free_dims = [](const TensorType& t, const std::vector<std::int64_t>& c,
                      const std::vector<std::int64_t>& b, Shape& out) {
    for (std::int64_t d = 0; d < static_cast<std::int64_t>(t.shape.size()); ++d)
      if (std::find(c.begin(), c.end(), d) == c.end() &&
          std::find(b.begin(), b.end(), d) == b.end())
        out.push_back(t.shape[d]);
  };
  free_dims(lhs, lc, lb, out);
  free_dims(rhs, rc, rb, out);
  return {lhs.dtype, out};
}

// The evaluator arranges the lhs as [batch, free, contracting] rows (and an integer rhs the
// same way, a float rhs as [batch, contracting, free]).
struct MatrixLayout {
  std::vector<std::int64_t> perm;  // batch axes, free axes, contracting axes
  std::int64_t free = 1;           // product of the free extents
};

MatrixLayout batch_free_contracting(const Shape& shape, const std::vector<std::int64_t>& batch,
                                    const std::vector<std::int64_t>& contracting) {
  MatrixLayout l;
  l.perm = batch;
  for (std::int64_t d = 0; d < static_cast<std::int64_t>(shape.size()); ++d) {
    const bool listed = std::find(batch.begin(), batch.end(), d) != batch.end() ||
                        std::find(contracting.begin(), contracting.end(), d) != contracting.end();
    if (!listed) {
      l.perm.push_back(d);
      l.free *= shape[d];
    }
  }
  l.perm.insert(l.perm.end(), contracting.begin(), contracting.end());
  return l;
}

// `x` with its axes in `perm` order: `x` itself when perm is the identity (no copy).
const Value& arranged(const Value& x, const std::vector<std::int64_t>& perm, Value& storage) {
  bool identity = true;
  for (std::size_t k = 0; k < perm.size(); ++k) identity &= perm[k] == static_cast<std::int64_t>(k);
  if (identity) return x;
  storage = interp::transposed(x, perm);
  return storage;
}

// out[m, n] = x[m, depth] . y[depth, n], each output's sum over k in order in double, rounded
// once to `dtype`. Blocks of 4 rows x 2 vectors of outputs keep their sums in registers while k
// runs (the order of every sum is unchanged); the edges take one output row at a time, its sums
// along a contiguous row of y. Multiply, then add, as the row loop does: a fused multiply-add's
// single rounding would change the sums' bits, and neither instantiation's target has one.
template <typename Vector>
[[gnu::always_inline]] inline void float_dot_blocks(DType dtype, const double* x, const double* y,
                                                    double* out, std::int64_t m, std::int64_t depth,
                                                    std::int64_t n) {
  constexpr std::int64_t kWidth = sizeof(Vector) / sizeof(double);
  constexpr std::int64_t kRows = 4, kCols = 2 * kWidth;
  const std::int64_t block_m = m - m % kRows, block_n = n - n % kCols;
  // Tiles that stay in cache: kDepth x kColumns of y (256 KB) while row panels of kPanel x kDepth
  // of x (64 KB) pass over it. A block's partial sums wait in `out` (double) between depth
  // tiles and continue from there: every output's sum still runs over k in order.
  constexpr std::int64_t kDepth = 128, kColumns = 256, kPanel = 64;
  for (std::int64_t j0 = 0; j0 < block_n; j0 += kColumns)
    for (std::int64_t k0 = 0; k0 < depth; k0 += kDepth)
      for (std::int64_t i0 = 0; i0 < block_m; i0 += kPanel)
        for (std::int64_t j = j0; j < std::min(block_n, j0 + kColumns); j += kCols)
          for (std::int64_t i = i0; i < std::min(block_m, i0 + kPanel); i += kRows) {
            Vector acc[kRows][2] = {};
            if (k0 > 0)
              for (std::int64_t r = 0; r < kRows; ++r) {
                std::memcpy(&acc[r][0], out + (i + r) * n + j, sizeof acc[r][0]);
                std::memcpy(&acc[r][1], out + (i + r) * n + j + kWidth, sizeof acc[r][1]);
              }
            const double* xr[kRows] = {x + i * depth, x + (i + 1) * depth, x + (i + 2) * depth,
                                       x + (i + 3) * depth};
            for (std::int64_t k = k0; k < std::min(depth, k0 + kDepth); ++k) {
              const double* yk = y + k * n + j;
              Vector y0, y1;  // memcpy: rows of y need not be aligned to a vector
              std::memcpy(&y0, yk, sizeof y0);
              std::memcpy(&y1, yk + kWidth, sizeof y1);
              for (std::int64_t r = 0; r < kRows; ++r) {
                const Vector xk = Vector{} + xr[r][k];
                acc[r][0] += xk * y0;
                acc[r][1] += xk * y1;
              }
            }
            for (std::int64_t r = 0; r < kRows; ++r) {
              std::memcpy(out + (i + r) * n + j, &acc[r][0], sizeof acc[r][0]);
              std::memcpy(out + (i + r) * n + j + kWidth, &acc[r][1], sizeof acc[r][1]);
            }
          }
  // The blocks' sums are complete: rounded once to the result dtype.
  for (std::int64_t i = 0; i < block_m; ++i)
    for (std::int64_t j = 0; j < block_n; ++j)
      out[i * n + j] = interp::round_to(dtype, out[i * n + j]);
  // What the blocks left: the last n % kCols columns of the blocked rows, then the last
  // m % kRows rows whole.
  std::vector<double> sums(static_cast<std::size_t>(n));
  const auto row = [&](std::int64_t i, std::int64_t from) {
    std::fill(sums.begin() + from, sums.end(), 0.0);
    const double* xi = x + i * depth;
    for (std::int64_t k = 0; k < depth; ++k) {
      const double xk = xi[k];
      const double* yk = y + k * n;
      for (std::int64_t j = from; j < n; ++j) sums[static_cast<std::size_t>(j)] += xk * yk[j];
    }
    for (std::int64_t j = from; j < n; ++j)
      out[i * n + j] = interp::round_to(dtype, sums[static_cast<std::size_t>(j)]);
  };
  if (block_n < n)
    for (std::int64_t i = 0; i < block_m; ++i) row(i, block_n);
  for (std::int64_t i = block_m; i < m; ++i) row(i, 0);
}

// Two doubles a vector: SSE2, in every x86-64 build.
using Pair = double __attribute__((vector_size(16)));
void float_dot_sse2(DType dtype, const double* x, const double* y, double* out, std::int64_t m,
                    std::int64_t depth, std::int64_t n) {
  float_dot_blocks<Pair>(dtype, x, y, out, m, depth, n);
}

#if defined(__x86_64__) && defined(__GNUC__)
// Four doubles a vector where the processor has AVX2 (AVX2 alone: no fused multiply-add).
using Quad = double __attribute__((vector_size(32)));
[[gnu::target("avx2")]] void float_dot_avx2(DType dtype, const double* x, const double* y,
                                            double* out, std::int64_t m, std::int64_t depth,
                                            std::int64_t n) {
  float_dot_blocks<Quad>(dtype, x, y, out, m, depth, n);
}
#endif

void float_dot(DType dtype, const double* x, const double* y, double* out, std::int64_t m,
               std::int64_t depth, std::int64_t n) {
#if defined(__x86_64__) && defined(__GNUC__)
  static const bool avx2 = __builtin_cpu_supports("avx2");
  if (avx2) return float_dot_avx2(dtype, x, y, out, m, depth, n);
#endif
  float_dot_sse2(dtype, x, y, out, m, depth, n);
}

Value evaluate_dot_general(const Node& node, Operands operands) {
  const Value& lhs = *operands[0];
  const Value& rhs = *operands[1];
  const DotGeneralAttrs dot_general_attrs = DotGeneralAttrs::read(node.attrs);
  const auto& lb = dot_general_attrs.lhs_batch;
  const auto& lc = dot_general_attrs.lhs_contracting;
  const MatrixLayout ll = batch_free_contracting(lhs.shape, lb, lc);
  const MatrixLayout rl = batch_free_contracting(rhs.shape, dot_general_attrs.rhs_batch,
                                                 dot_general_attrs.rhs_contracting);
  std::int64_t batch = 1, depth = 1;
  for (auto d : lb) batch *= lhs.shape[d];
  for (auto d : lc) depth *= lhs.shape[d];
  Value out = interp::make_value(node.dtype, node.shape);
  const std::int64_t m = ll.free, n = rl.free;
  Value l_storage, r_storage;
  const Value& l = arranged(lhs, ll.perm, l_storage);
  if (is_float(node.dtype)) {
    // The rhs as [batch, contracting, free] rows (its usual [K, N] layout needs no copy): each
    // lhs row scales rhs row k into its outputs' sums, so every output's sum still runs over k
    // in order, in double, rounded once to the result dtype, and the inner loop runs along
    // contiguous rows.
    const std::size_t nb = dot_general_attrs.rhs_batch.size();
    const std::size_t nc = dot_general_attrs.rhs_contracting.size();
    std::vector<std::int64_t> rows_perm(rl.perm.begin(), rl.perm.begin() + nb);
    rows_perm.insert(rows_perm.end(), rl.perm.end() - nc, rl.perm.end());
    rows_perm.insert(rows_perm.end(), rl.perm.begin() + nb, rl.perm.end() - nc);
    const Value& r = arranged(rhs, rows_perm, r_storage);
    // Rows in groups of four (the blocks' height) over the cores: every output is the same sum
    // whichever thread computes it.
    const std::int64_t groups = (m + 3) / 4;
    interp::parallel_ranges(
        batch * groups, 1, static_cast<double>(batch) * static_cast<double>(m * depth * n),
        [&](std::int64_t begin, std::int64_t end) {
          for (std::int64_t task = begin; task < end;) {
            const std::int64_t b = task / groups, first = task % groups;
            const std::int64_t last = std::min(groups, first + (end - task));
            const std::int64_t i = 4 * first, rows = std::min(m, 4 * last) - i;
            float_dot(node.dtype, l.f.data() + (b * m + i) * depth, r.f.data() + b * depth * n,
                      out.f.data() + (b * m + i) * n, rows, depth, n);
            task += last - first;
          }
        });
    return out;
  }
  const Value& r = arranged(rhs, rl.perm, r_storage);
  for (std::int64_t b = 0; b < batch; ++b)
    for (std::int64_t i = 0; i < m; ++i)
      for (std::int64_t j = 0; j < n; ++j) {
        const std::int64_t* x = l.i.data() + (b * m + i) * depth;
        const std::int64_t* y = r.i.data() + (b * n + j) * depth;
        std::uint64_t acc = 0;
        for (std::int64_t k = 0; k < depth; ++k)
          acc += static_cast<std::uint64_t>(x[k]) * static_cast<std::uint64_t>(y[k]);
        out.i[(b * m + i) * n + j] = interp::wrap_to(node.dtype, acc);
      }
  return out;
}

// Bilinear: the product with each tangent in turn, the other operand fixed.
Tangent jvp_dot_general(const Node& n, std::span<const Array> primals,
                        std::span<const Tangent> tangents, const Array&,
                        const std::source_location& loc) {
  Tangent from_lhs, from_rhs;
  if (tangents[0]) {
    const Array operands[] = {*tangents[0], primals[1]};
    from_lhs = detail::bind(n.op, operands, n.attrs, n.type(), loc);
  }
  if (tangents[1]) {
    const Array operands[] = {primals[0], *tangents[1]};
    from_rhs = detail::bind(n.op, operands, n.attrs, n.type(), loc);
  }
  return add_tangents(from_lhs, from_rhs, loc);
}

// dot_general's cotangent for its left operand `x` (JAX's _dot_general_transpose_lhs):
// contract the cotangent with `y` over y's free axes, then put x's axes back in order.
Array dot_transpose_lhs(const Array& ct, const Array& y, const TensorType& x_type,
                        const Axes& x_contract, const Axes& y_contract, const Axes& x_batch,
                        const Axes& y_batch, bool swap_result, const std::source_location& loc) {
  const std::size_t x_rank = x_type.shape.size(), y_rank = y.shape().size();
  Axes x_kept, y_kept;
  for (std::size_t d = 0; d < x_rank; ++d)
    if (!contains(x_contract, static_cast<std::int64_t>(d)) &&
        !contains(x_batch, static_cast<std::int64_t>(d)))
      x_kept.push_back(static_cast<std::int64_t>(d));
  for (std::size_t d = 0; d < y_rank; ++d)
    if (!contains(y_contract, static_cast<std::int64_t>(d)) &&
        !contains(y_batch, static_cast<std::int64_t>(d)))
      y_kept.push_back(static_cast<std::int64_t>(d));
  // The result's axes: batch, then (lhs free, rhs free); for the rhs transpose x is the rhs.
  const Axes result_batch = iota_axes(0, x_batch.size());
  const Axes result_y = swap_result ? iota_axes(x_batch.size(), y_kept.size())
                                    : iota_axes(x_batch.size() + x_kept.size(), y_kept.size());
  const Array contracted = dot_general(ct, y,
                                       DotDims{.lhs_contracting = result_y,
                                               .rhs_contracting = y_kept,
                                               .lhs_batch = result_batch,
                                               .rhs_batch = y_batch},
                                       loc);
  // contracted's axes: x_batch, x_kept, then x_contract ordered as y_contract is sorted.
  std::vector<std::size_t> order(y_contract.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(),
            [&](std::size_t a, std::size_t b) { return y_contract[a] < y_contract[b]; });
  Axes layout = x_batch;
  layout.insert(layout.end(), x_kept.begin(), x_kept.end());
  for (std::size_t k : order) layout.push_back(x_contract[k]);
  // layout[j] is the x axis at contracted's axis j; transpose by its inverse.
  const Axes perm = inverse_permutation(layout);
  bool identity = true;
  for (std::size_t i = 0; i < perm.size(); ++i)
    identity = identity && perm[i] == static_cast<std::int64_t>(i);
  return identity ? contracted : transpose(contracted, perm, loc);
}

std::vector<Tangent> transpose_dot_general(const Node& n, const Array& ct,
                                           std::span<const std::optional<Array>> values,
                                           std::span<const TensorType> types,
                                           const std::vector<bool>& linear, const std::string& api,
                                           const std::source_location& loc) {
  if (linear[0] && linear[1]) not_linear(n, api);
  const DotGeneralAttrs dot_general_attrs = DotGeneralAttrs::read(n.attrs);
  const auto& lc = dot_general_attrs.lhs_contracting;
  const auto& rc = dot_general_attrs.rhs_contracting;
  const auto& lb = dot_general_attrs.lhs_batch;
  const auto& rb = dot_general_attrs.rhs_batch;
  std::vector<Tangent> out(2);
  if (linear[0]) out[0] = dot_transpose_lhs(ct, *values[1], types[0], lc, rc, lb, rb, false, loc);
  if (linear[1]) out[1] = dot_transpose_lhs(ct, *values[0], types[1], rc, lc, rb, lb, true, loc);
  return out;
}

Batched batch_dot_general(const Node& n, std::span<const Batched> operands, std::int64_t batch_size,
                          const std::string&, const std::source_location& loc) {
  const DotGeneralAttrs dot_general_attrs = DotGeneralAttrs::read(n.attrs);
  const auto& lc = dot_general_attrs.lhs_contracting;
  const auto& rc = dot_general_attrs.rhs_contracting;
  const auto& lb = dot_general_attrs.lhs_batch;
  const auto& rb = dot_general_attrs.rhs_batch;
  const Batched& lhs = operands[0];
  const Batched& rhs = operands[1];
  Attrs attrs = n.attrs;
  const Array both[] = {lhs.value, rhs.value};
  if (lhs.batched && rhs.batched) {
    attrs.set(DotGeneralAttrs::kLhsContracting, shifted(lc));
    attrs.set(DotGeneralAttrs::kRhsContracting, shifted(rc));
    attrs.set(DotGeneralAttrs::kLhsBatch, with_leading_axis(0, shifted(lb)));
    attrs.set(DotGeneralAttrs::kRhsBatch, with_leading_axis(0, shifted(rb)));
    return {detail::bind(n.op, both, attrs, {n.dtype, with_leading(batch_size, n.shape)}, loc),
            true};
  }
  // One side batched: its batch axis is a free axis of the product; find it and move it first.
  const auto nb = static_cast<std::int64_t>(lb.size());
  std::int64_t position = nb;
  if (lhs.batched) {
    attrs.set(DotGeneralAttrs::kLhsContracting, shifted(lc));
    attrs.set(DotGeneralAttrs::kLhsBatch, shifted(lb));
  } else {
    attrs.set(DotGeneralAttrs::kRhsContracting, shifted(rc));
    attrs.set(DotGeneralAttrs::kRhsBatch, shifted(rb));
    position += static_cast<std::int64_t>(lhs.value.shape().size() - lc.size() - lb.size());
  }
  Shape shape = n.shape;
  shape.insert(shape.begin() + position, batch_size);
  return {axis_to_front(detail::bind(n.op, both, attrs, {n.dtype, shape}, loc), position, loc),
          true};
}

}  // namespace

void define_dot_primitives(Definitions& defs) {
  Primitive dot = row(OpKind::DotGeneral, "dot_general", OpClass::Dot, 2);
  dot.type = dot_general_type;
  dot.evaluate = evaluate_dot_general;
  dot.jvp = rule_from(jvp_dot_general);
  dot.transpose = rule_from(transpose_dot_general);
  dot.batch = rule_from(batch_dot_general);
  defs.add(std::move(dot));
}

}  // namespace weft::prim
