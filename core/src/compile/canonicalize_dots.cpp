#include <algorithm>
#include <map>
#include <numeric>
#include <tuple>

#include "weft/compile/fusion.h"
#include "weft/ir/op_attrs.h"
#include "weft/ir/walk.h"

namespace weft {
namespace {

using Ints = std::vector<std::int64_t>;

Ints free_dims(std::size_t rank, const Ints& contracting, const Ints& batch) {
  Ints out;
  for (std::int64_t d = 0; d < static_cast<std::int64_t>(rank); ++d)
    if (std::find(contracting.begin(), contracting.end(), d) == contracting.end() &&
        std::find(batch.begin(), batch.end(), d) == batch.end())
      out.push_back(d);
  return out;
}

std::int64_t product(const Shape& s, const Ints& dims) {
  std::int64_t p = 1;
  for (auto d : dims) p *= s[d];
  return p;
}

bool is_identity(const Ints& order) {
  for (std::size_t i = 0; i < order.size(); ++i)
    if (order[i] != static_cast<std::int64_t>(i)) return false;
  return true;
}

// The transposes and reshapes `arrange` appended, by what they arrange: a value that feeds two
// dots the same way (a layer's input, read again by its weight gradient) is arranged once, so
// its producer is computed and stored once instead of once per dot.
using Arranged = std::map<std::tuple<ValueId, Ints, Shape>, ValueId>;

// Whether bringing a value of `shape` into `order` moves elements (a reshape cannot do it):
// a transpose that moves only dims of size 1 keeps the elements in order.
bool needs_transpose(const Shape& shape, const Ints& order) {
  Ints moved;
  for (auto d : order)
    if (shape[d] != 1) moved.push_back(d);
  return !std::is_sorted(moved.begin(), moved.end());
}

// Appends transpose (when not the identity) and reshape nodes bringing `operand` into
// `order`, collapsed to `target`.
ValueId arrange(Graph& g, Arranged& arranged, ValueId operand, const Ints& order,
                const Shape& target, const OpOrigin& origin) {
  const auto key = std::make_tuple(operand, order, target);
  if (const auto found = arranged.find(key); found != arranged.end()) return found->second;
  const Node src = g.node(operand);
  ValueId v = operand;
  if (needs_transpose(src.shape, order)) {
    Node t;
    t.op = OpKind::Transpose;
    t.dtype = src.dtype;
    for (auto d : order) t.shape.push_back(src.shape[d]);
    t.inputs = {v};
    t.attrs = TransposeAttrs{order}.write();
    t.origin = origin;
    v = g.add(std::move(t));
  }
  if (g.node(v).shape != target) {
    Node r;
    r.op = OpKind::Reshape;
    r.dtype = src.dtype;
    r.shape = target;
    r.inputs = {v};
    r.origin = origin;
    v = g.add(std::move(r));
  }
  arranged.emplace(key, v);
  return v;
}

// Reads a transposed dot operand (x @ W.T) through its transpose, as XLA does, when the free
// dims keep their order (the dot's result is laid out the same): the dims named in
// `contracting` and `batch` become the transpose input's. The transpose, left unused, goes.
void fold_transpose(const Graph& g, ValueId& operand, Ints& contracting, Ints& batch) {
  const Node& t = g.node(operand);
  if (t.op != OpKind::Transpose) return;
  const Ints perm = TransposeAttrs::read(t.attrs).permutation;
  Ints mapped_free;
  for (auto d : free_dims(t.shape.size(), contracting, batch)) mapped_free.push_back(perm[d]);
  if (!std::is_sorted(mapped_free.begin(), mapped_free.end())) return;
  for (auto& d : contracting) d = perm[d];
  for (auto& d : batch) d = perm[d];
  operand = t.inputs[0];
}

// [B, M, K] x [B, K, N] -> [B, M, N]: the one dot the kernels lower.
const DotGeneralAttrs kBatchedMatmul{
    .lhs_contracting = {2}, .rhs_contracting = {1}, .lhs_batch = {0}, .rhs_batch = {0}};

// [B, K, M] x [B, K, N] -> [B, M, N]: the lhs read transposed.
const DotGeneralAttrs kBatchedMatmulTransposedLhs{
    .lhs_contracting = {1}, .rhs_contracting = {1}, .lhs_batch = {0}, .rhs_batch = {0}};

}  // namespace

bool is_canonical_dot(const Node& n) {
  if (n.op != OpKind::DotGeneral || n.shape.size() != 3) return false;
  const DotGeneralAttrs attrs = DotGeneralAttrs::read(n.attrs);
  // Only the f32 and f64 kernels read a transposed lhs.
  return attrs == kBatchedMatmul ||
         (attrs == kBatchedMatmulTransposedLhs && (n.dtype == DType::F32 || n.dtype == DType::F64));
}

bool canonical_dot_lhs_transposed(const Node& n) {
  return is_canonical_dot(n) && DotGeneralAttrs::read(n.attrs) == kBatchedMatmulTransposedLhs;
}

namespace {

Graph canonicalize_dots_flat(Graph graph) {
  Graph out;
  out.name = graph.name;
  std::vector<ValueId> remap(graph.nodes.size(), -1);
  Arranged arranged;
  for (std::size_t i = 0; i < graph.nodes.size(); ++i) {
    Node n = std::move(graph.nodes[i]);
    for (auto& in : n.inputs) in = remap[in];
    if (n.op != OpKind::DotGeneral || is_canonical_dot(n)) {
      remap[i] = out.add(std::move(n));
      continue;
    }
    auto [lc, rc, lb, rb] = DotGeneralAttrs::read(n.attrs);
    fold_transpose(out, n.inputs[0], lc, lb);
    fold_transpose(out, n.inputs[1], rc, rb);
    const Shape ls = out.node(n.inputs[0]).shape;
    const Shape rs = out.node(n.inputs[1]).shape;
    const Ints lf = free_dims(ls.size(), lc, lb), rf = free_dims(rs.size(), rc, rb);
    const std::int64_t B = product(ls, lb), M = product(ls, lf), K = product(ls, lc),
                       N = product(rs, rf);
    Ints lorder = lb;
    lorder.insert(lorder.end(), lf.begin(), lf.end());
    lorder.insert(lorder.end(), lc.begin(), lc.end());
    Ints rorder = rb;
    rorder.insert(rorder.end(), rc.begin(), rc.end());
    rorder.insert(rorder.end(), rf.begin(), rf.end());
    // A vector times a matrix stored [N, K] (x @ W.T, a decoder's tied logits): computing the
    // transposed product W x instead reads W as it is stored, where [B, K, N] would copy all of
    // W into a transpose first (C's layout is the same, one of its dims being 1).
    Ints swapped_rorder = rb;
    swapped_rorder.insert(swapped_rorder.end(), rf.begin(), rf.end());
    swapped_rorder.insert(swapped_rorder.end(), rc.begin(), rc.end());
    const bool swap = M == 1 && N > 1 && !is_identity(rorder) && is_identity(swapped_rorder);
    Ints lorder_swapped = lb;
    lorder_swapped.insert(lorder_swapped.end(), lc.begin(), lc.end());
    lorder_swapped.insert(lorder_swapped.end(), lf.begin(), lf.end());
    // An lhs stored [batch, contracting, free] (x^T dy) is read transposed by the kernel.
    Ints lorder_transposed = lb;
    lorder_transposed.insert(lorder_transposed.end(), lc.begin(), lc.end());
    lorder_transposed.insert(lorder_transposed.end(), lf.begin(), lf.end());
    const bool lhs_transposed = !swap && (n.dtype == DType::F32 || n.dtype == DType::F64) &&
                                needs_transpose(ls, lorder) &&
                                !needs_transpose(ls, lorder_transposed);
    ValueId lhs = lhs_transposed
                      ? arrange(out, arranged, n.inputs[0], lorder_transposed, {B, K, M}, n.origin)
                  : swap ? arrange(out, arranged, n.inputs[1], swapped_rorder, {B, N, K}, n.origin)
                         : arrange(out, arranged, n.inputs[0], lorder, {B, M, K}, n.origin);
    ValueId rhs = swap ? arrange(out, arranged, n.inputs[0], lorder_swapped, {B, K, M}, n.origin)
                       : arrange(out, arranged, n.inputs[1], rorder, {B, K, N}, n.origin);
    Node dot;
    dot.op = OpKind::DotGeneral;
    dot.dtype = n.dtype;
    dot.shape = swap ? Shape{B, N, M} : Shape{B, M, N};
    dot.inputs = {lhs, rhs};
    dot.attrs = (lhs_transposed ? kBatchedMatmulTransposedLhs : kBatchedMatmul).write();
    dot.origin = n.origin;
    ValueId d = out.add(std::move(dot));
    if (n.shape != out.node(d).shape) {
      Node r;
      r.op = OpKind::Reshape;
      r.dtype = n.dtype;
      r.shape = n.shape;
      r.inputs = {d};
      r.origin = n.origin;
      d = out.add(std::move(r));
    }
    remap[i] = d;
  }
  for (ValueId p : graph.params) out.params.push_back(remap[p]);
  for (ValueId o : graph.outputs) out.outputs.push_back(remap[o]);
  return out;
}

}  // namespace

Graph canonicalize_dots(const Graph& graph) {
  // Transposes folded into dots are left without users.
  return eliminate_dead_code(rewrite_graphs(graph, canonicalize_dots_flat));
}

}  // namespace weft
