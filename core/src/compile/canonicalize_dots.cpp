#include <algorithm>
#include <map>
#include <numeric>
#include <tuple>

#include "compile/loop_invariants.h"
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

// Whether bringing a value of `shape` into `order` moves elements (a transpose that moves
// only dims of size 1 keeps them in order).
bool moves_elements(const Shape& shape, const Ints& order) {
  Ints moved;
  for (auto d : order)
    if (shape[d] != 1) moved.push_back(d);
  return !std::is_sorted(moved.begin(), moved.end());
}

// The transposes and reshapes `arrange` appended, by what they arrange: a value that feeds two
// dots the same way (a layer's input, read again by its weight gradient) is arranged once, so
// its producer is computed and stored once instead of once per dot.
using Arranged = std::map<std::tuple<ValueId, Ints, Shape>, ValueId>;

// Appends transpose (when not the identity) and reshape nodes bringing `operand` into
// `order`, collapsed to `target`.
ValueId arrange(Graph& g, Arranged& arranged, ValueId operand, const Ints& order,
                const Shape& target, const OpOrigin& origin) {
  const auto key = std::make_tuple(operand, order, target);
  if (const auto found = arranged.find(key); found != arranged.end()) return found->second;
  const Node src = g.node(operand);
  ValueId v = operand;
  // A transpose that moves only dims of size 1 keeps the elements in order: a reshape does.
  if (moves_elements(src.shape, order)) {
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
const DotGeneralAttrs kBatchedMatmulLhsTransposed{
    .lhs_contracting = {1}, .rhs_contracting = {1}, .lhs_batch = {0}, .rhs_batch = {0}};
// [B, M, K] x [B, N, K] -> [B, M, N]: the rhs read transposed.
const DotGeneralAttrs kBatchedMatmulRhsTransposed{
    .lhs_contracting = {2}, .rhs_contracting = {2}, .lhs_batch = {0}, .rhs_batch = {0}};

}  // namespace

bool is_canonical_dot(const Node& n) {
  if (n.op != OpKind::DotGeneral || n.shape.size() != 3) return false;
  const DotGeneralAttrs a = DotGeneralAttrs::read(n.attrs);
  return a == kBatchedMatmul ||
         ((a == kBatchedMatmulLhsTransposed || a == kBatchedMatmulRhsTransposed) &&
          !is_half_float(n.dtype));
}

bool canonical_dot_lhs_transposed(const Node& n) {
  return is_canonical_dot(n) && DotGeneralAttrs::read(n.attrs) == kBatchedMatmulLhsTransposed;
}

bool canonical_dot_rhs_transposed(const Node& n) {
  return is_canonical_dot(n) && DotGeneralAttrs::read(n.attrs) == kBatchedMatmulRhsTransposed;
}

namespace {

// A transpose that swaps a dot's lhs and rhs free dims (a weight's gradient, dW = (dY^T X)^T,
// as reverse mode writes it) computes the dot of the swapped operands instead, as XLA's
// simplifier does: the same products summed in the same order, and no transposed copy of the
// result. Marks each such transpose in `forwarded` (it then stands for its rewritten dot).
std::vector<bool> swap_transposed_dots(Graph& graph) {
  std::vector<int> uses(graph.nodes.size(), 0);
  for (const Node& n : graph.nodes)
    for (ValueId in : n.inputs) ++uses[in];
  for (ValueId o : graph.outputs) ++uses[o];
  std::vector<bool> forwarded(graph.nodes.size(), false);
  for (std::size_t i = 0; i < graph.nodes.size(); ++i) {
    const Node& t = graph.nodes[i];
    if (t.op != OpKind::Transpose || uses[t.inputs[0]] != 1) continue;
    Node& dot = graph.nodes[t.inputs[0]];
    if (dot.op != OpKind::DotGeneral) continue;
    const DotGeneralAttrs a = DotGeneralAttrs::read(dot.attrs);
    const std::size_t batch = a.lhs_batch.size();
    const std::size_t lhs_free =
        graph.node(dot.inputs[0]).shape.size() - batch - a.lhs_contracting.size();
    const std::size_t rhs_free = dot.shape.size() - batch - lhs_free;
    if (lhs_free == 0 || rhs_free == 0) continue;
    Ints swapped(batch);
    std::iota(swapped.begin(), swapped.end(), 0);
    for (std::size_t d = 0; d < rhs_free; ++d)
      swapped.push_back(static_cast<std::int64_t>(batch + lhs_free + d));
    for (std::size_t d = 0; d < lhs_free; ++d)
      swapped.push_back(static_cast<std::int64_t>(batch + d));
    if (TransposeAttrs::read(t.attrs).permutation != swapped) continue;
    dot.inputs = {dot.inputs[1], dot.inputs[0]};
    dot.attrs =
        DotGeneralAttrs{a.rhs_contracting, a.lhs_contracting, a.rhs_batch, a.lhs_batch}.write();
    dot.shape = t.shape;
    forwarded[i] = true;
  }
  return forwarded;
}

// `invariant`: per node, whether it is the same in every iteration of the loop whose body
// `graph` is (empty elsewhere); transposing such an operand costs nothing, as loop-invariant
// code motion moves the transpose out of the loop.
Graph canonicalize_dots_flat(Graph graph, const std::vector<bool>& invariant) {
  Graph out;
  out.name = graph.name;
  std::vector<ValueId> remap(graph.nodes.size(), -1);
  std::vector<bool> out_invariant;  // per node of `out`
  Arranged arranged;
  auto arrange_once = [&](ValueId operand, const Ints& order, const Shape& target,
                          const OpOrigin& origin) {
    return arrange(out, arranged, operand, order, target, origin);
  };
  const std::vector<bool> forwarded = swap_transposed_dots(graph);
  for (std::size_t i = 0; i < graph.nodes.size(); ++i) {
    if (forwarded[i]) {
      remap[i] = remap[graph.nodes[i].inputs[0]];
      continue;
    }
    Node n = std::move(graph.nodes[i]);
    for (auto& in : n.inputs) in = remap[in];
    if (n.op != OpKind::DotGeneral || is_canonical_dot(n)) {
      remap[i] = out.add(std::move(n));
      out_invariant.resize(out.nodes.size(), false);
      out_invariant[static_cast<std::size_t>(remap[i])] = i < invariant.size() && invariant[i];
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
    // Either C = A B or C^T = B^T A^T is computed, whichever copies fewer elements into
    // transposes: a vector times a matrix stored [N, K] (x @ W.T, a decoder's tied logits) reads
    // W as it is stored, and a weight gradient X^T G over many rows transposes the narrow X
    // rather than the wide G. C^T costs a transpose of C back, unless one of its dims is 1.
    Ints swapped_rorder = rb;
    swapped_rorder.insert(swapped_rorder.end(), rf.begin(), rf.end());
    swapped_rorder.insert(swapped_rorder.end(), rc.begin(), rc.end());
    Ints lorder_swapped = lb;
    lorder_swapped.insert(lorder_swapped.end(), lc.begin(), lc.end());
    lorder_swapped.insert(lorder_swapped.end(), lf.begin(), lf.end());
    auto copies = [&](ValueId operand, const Shape& shape, const Ints& order) -> std::int64_t {
      const auto at = static_cast<std::size_t>(operand);
      const bool hoisted = at < out_invariant.size() && out_invariant[at];
      return moves_elements(shape, order) && !hoisted ? num_elements(shape) : 0;
    };
    // The kernels read one operand (not of f16 or bf16) as it is stored where its transpose
    // would otherwise be copied: an lhs stored [B, K, M] (X^T dY), or else an rhs stored
    // [B, N, K] (dY W^T, the gradient through a dense layer).
    const bool reads_transposed = !is_half_float(n.dtype);
    const bool lhs_readable =
        reads_transposed && moves_elements(ls, lorder) && !moves_elements(ls, lorder_swapped);
    const bool rhs_readable =
        reads_transposed && moves_elements(rs, rorder) && !moves_elements(rs, swapped_rorder);
    const std::int64_t lhs_cost = copies(n.inputs[0], ls, lorder);
    const std::int64_t rhs_cost = copies(n.inputs[1], rs, rorder);
    const std::int64_t direct_cost = lhs_cost + rhs_cost -
                                     (lhs_readable   ? lhs_cost
                                      : rhs_readable ? rhs_cost
                                                     : 0);
    const std::int64_t swapped_cost = copies(n.inputs[1], rs, swapped_rorder) +
                                      copies(n.inputs[0], ls, lorder_swapped) +
                                      (M > 1 && N > 1 ? B * M * N : 0);
    // A vector times a matrix stored [N, K] (x @ W.T, a decoder's tied logits) always computes
    // W x, reading W as it is stored, even where W is loop-invariant: a hoisted transpose of W
    // would be free to make but slower to read for a matrix-vector product.
    const bool vector_times_stored =
        M == 1 && N > 1 && moves_elements(rs, rorder) && !moves_elements(rs, swapped_rorder);
    const bool swap = vector_times_stored || swapped_cost < direct_cost;
    const bool lhs_transposed = !swap && lhs_readable;
    const bool rhs_transposed = !swap && !lhs_transposed && rhs_readable;
    ValueId lhs = swap             ? arrange_once(n.inputs[1], swapped_rorder, {B, N, K}, n.origin)
                  : lhs_transposed ? arrange_once(n.inputs[0], lorder_swapped, {B, K, M}, n.origin)
                                   : arrange_once(n.inputs[0], lorder, {B, M, K}, n.origin);
    ValueId rhs = swap             ? arrange_once(n.inputs[0], lorder_swapped, {B, K, M}, n.origin)
                  : rhs_transposed ? arrange_once(n.inputs[1], swapped_rorder, {B, N, K}, n.origin)
                                   : arrange_once(n.inputs[1], rorder, {B, K, N}, n.origin);
    Node dot;
    dot.op = OpKind::DotGeneral;
    dot.dtype = n.dtype;
    dot.shape = swap ? Shape{B, N, M} : Shape{B, M, N};
    dot.inputs = {lhs, rhs};
    dot.attrs = (lhs_transposed   ? kBatchedMatmulLhsTransposed
                 : rhs_transposed ? kBatchedMatmulRhsTransposed
                                  : kBatchedMatmul)
                    .write();
    dot.origin = n.origin;
    ValueId d = out.add(std::move(dot));
    if (swap && M > 1 && N > 1) {
      Node t;
      t.op = OpKind::Transpose;
      t.dtype = n.dtype;
      t.shape = {B, M, N};
      t.inputs = {d};
      t.attrs = TransposeAttrs{{0, 2, 1}}.write();
      t.origin = n.origin;
      d = out.add(std::move(t));
    }
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
    out_invariant.resize(out.nodes.size(), false);
  }
  for (ValueId p : graph.params) out.params.push_back(remap[p]);
  for (ValueId o : graph.outputs) out.outputs.push_back(remap[o]);
  return out;
}

}  // namespace

namespace {

// Regions first, each loop body knowing which of its values are loop-invariant.
Graph canonicalize_nested(Graph graph, const std::vector<bool>& invariant) {
  for (Node& n : graph.nodes)
    for (std::size_t k = 0; k < n.regions.size(); ++k) {
      const std::vector<bool> inner = loop_body_invariants(n, k);
      n.regions[k] = canonicalize_nested(std::move(n.regions[k]), inner);
    }
  std::vector<std::shared_ptr<const HostCallback>> callbacks = graph.callbacks;
  Graph out = canonicalize_dots_flat(std::move(graph), invariant);
  out.callbacks = std::move(callbacks);
  return out;
}

}  // namespace

Graph canonicalize_dots(const Graph& graph) {
  // Transposes folded into dots are left without users.
  return eliminate_dead_code(canonicalize_nested(graph, {}));
}

}  // namespace weft
