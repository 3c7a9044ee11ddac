// dot_general: both operands are transposed to [batch, free, contracting] matrices, so every
// result element is one dot product of two contiguous rows.
#include <algorithm>

#include "index.h"

namespace weft::interp {

namespace {

struct Layout {
  std::vector<std::int64_t> perm;  // batch axes, free axes, contracting axes
  std::int64_t free = 1;           // product of the free extents
};

Layout batch_free_contracting(const Shape& shape, const std::vector<std::int64_t>& batch,
                              const std::vector<std::int64_t>& contracting) {
  Layout l;
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

}  // namespace

Value eval_dot(const Node& node, Operands operands) {
  const Value& lhs = *operands[0];
  const Value& rhs = *operands[1];
  const auto& lb = node.attrs.get_ints("lhs_batch");
  const auto& lc = node.attrs.get_ints("lhs_contracting");
  const Layout ll = batch_free_contracting(lhs.shape, lb, lc);
  const Layout rl = batch_free_contracting(rhs.shape, node.attrs.get_ints("rhs_batch"),
                                           node.attrs.get_ints("rhs_contracting"));
  std::int64_t batch = 1, depth = 1;
  for (auto d : lb) batch *= lhs.shape[d];
  for (auto d : lc) depth *= lhs.shape[d];
  const Value l = transposed(lhs, ll.perm);
  const Value r = transposed(rhs, rl.perm);
  Value out = make_value(node.dtype, node.shape);
  const std::int64_t m = ll.free, n = rl.free;
  for (std::int64_t b = 0; b < batch; ++b)
    for (std::int64_t i = 0; i < m; ++i)
      for (std::int64_t j = 0; j < n; ++j) {
        const std::int64_t lrow = (b * m + i) * depth, rrow = (b * n + j) * depth;
        const std::int64_t at = (b * m + i) * n + j;
        if (is_float(node.dtype)) {
          // Accumulate in double, round once to the result dtype.
          const double* x = l.f.data() + lrow;
          const double* y = r.f.data() + rrow;
          double acc = 0.0;
          for (std::int64_t k = 0; k < depth; ++k) acc += x[k] * y[k];
          out.f[at] = round_to(node.dtype, acc);
        } else {
          const std::int64_t* x = l.i.data() + lrow;
          const std::int64_t* y = r.i.data() + rrow;
          std::uint64_t acc = 0;
          for (std::int64_t k = 0; k < depth; ++k)
            acc += static_cast<std::uint64_t>(x[k]) * static_cast<std::uint64_t>(y[k]);
          out.i[at] = wrap_to(node.dtype, acc);
        }
      }
  return out;
}

}  // namespace weft::interp
