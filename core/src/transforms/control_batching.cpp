// vmap through while, cond and scan.
#include <algorithm>

#include "primitives/primitive.h"
#include "transforms/control_rules.h"
#include "transforms/dependence.h"
#include "transforms/staging.h"
#include "weft/error.h"
#include "weft/ir/effects.h"
#include "weft/ops.h"
#include "weft/transforms/custom.h"

namespace weft::detail {

namespace {

Array filled(double value, DType dtype, const Shape& shape, const std::source_location& loc) {
  const Array scalar = lax::constant(value, dtype, loc);
  return shape.empty() ? scalar : lax::broadcast_in_dim(scalar, shape, {}, loc);
}

// x with a zero derivative (jax.lax.stop_gradient): a custom_jvp identity whose rule gives
// zero tangents. Only staged while a transformation traces; otherwise custom_jvp is x itself.
Array stop_gradient(const Array& x) {
  static const ArrayFunction identity = custom_jvp(
      [](const std::vector<Array>& a) { return a; },
      [](const std::vector<Array>& primals, const std::vector<Array>&) {
        std::vector<Array> zeros;
        for (const Array& p : primals)
          zeros.push_back(zeros_of({p.dtype(), p.shape()}, std::source_location::current()));
        return JvpResult{primals, zeros};
      });
  return identity({x}).at(0);
}

// The operands branch `k` of a per-example cond sees: as in JAX's batching rule for cond,
// examples that take another branch see their values through stop_gradient, so that branch's
// derivative there (a NaN, as sqrt's at 0 in the safe-sqrt pattern) never reaches them, while
// effects in the branch still see the real values. Only where a transformation traces (a
// derivative may be taken); otherwise the operands as they are.
std::vector<Batched> branch_operands(std::span<const Batched> xs, const Array& take,
                                     std::int64_t batch_size, const std::source_location& loc) {
  std::vector<Batched> out(xs.begin(), xs.end());
  if (!transform_tracing_active()) return out;
  for (Batched& x : out) {
    if (!has_tangent(x.value.dtype())) continue;
    const Array value = forced(x, batch_size, loc);
    x = {lax::select(per_example(take, value, loc), value, stop_gradient(value), loc), true};
  }
  return out;
}

std::vector<Batched> batch_cond(const Graph& g, const Node& n, std::span<const Batched> operands,
                                std::int64_t batch_size, const std::string& api,
                                const std::source_location& loc) {
  const Batched& index = operands[0];
  const std::span<const Batched> xs = operands.subspan(1);
  const std::vector<bool> bx = batched_flags(xs);
  std::vector<Graph> branches;
  for (std::size_t k = 0; k < n.regions.size(); ++k) branches.push_back(region_of(g, n, k));

  if (index.batched) {
    // Each example picks its own branch: every branch runs on the whole batch and a select per
    // example keeps one result. An ordered effect would run for examples that did not take its
    // branch, so it is refused (as JAX does).
    for (const Graph& b : branches)
      if (has_ordered_effect(b))
        throw TransformError(api + ": cond at " + n.origin.describe() +
                             " has an ordered effect in a branch and an index that differs per "
                             "example; vmap would run every branch for every example. Make the "
                             "index unbatched, or the effect unordered");
    // takes[k]: [B] bool, the examples that take branch k.
    const Array which = index.value;
    const Shape batch_shape{batch_size};
    std::vector<Array> takes;
    if (which.dtype() == DType::Bool) {
      takes = {lax::logical_not(which, loc), which};
    } else {
      const auto last = static_cast<double>(branches.size() - 1);
      const Array clamped =
          lax::min(lax::max(which, filled(0, which.dtype(), batch_shape, loc), loc),
                   filled(last, which.dtype(), batch_shape, loc), loc);
      for (std::size_t k = 0; k < branches.size(); ++k)
        takes.push_back(
            lax::eq(clamped, filled(static_cast<double>(k), which.dtype(), batch_shape, loc), loc));
    }
    std::vector<std::vector<Array>> outs;
    for (std::size_t k = 0; k < branches.size(); ++k) {
      std::vector<Array> o;
      const std::vector<Batched> in = branch_operands(xs, takes[k], batch_size, loc);
      for (const Batched& r : vmap_graph(branches[k], in, batch_size, loc))
        o.push_back(forced(r, batch_size, loc));
      outs.push_back(std::move(o));
    }
    std::vector<Array> result = outs[0];
    for (std::size_t k = 1; k < outs.size(); ++k)
      for (std::size_t j = 0; j < result.size(); ++j)
        result[j] = lax::select(per_example(takes[k], outs[k][j], loc), outs[k][j], result[j], loc);
    std::vector<Batched> out;
    for (Array& r : result) out.push_back({std::move(r), true});
    return out;
  }

  std::vector<bool> by(n.results.size(), false);
  for (const Graph& b : branches) {
    const std::vector<bool> d = dependent_outputs(b, bx, DependenceKind::batch);
    for (std::size_t j = 0; j < by.size(); ++j) by[j] = by[j] || d[j];
  }
  std::vector<Array> ops;
  for (const Batched& x : xs) ops.push_back(x.value);
  const std::vector<TensorType> types = value_types(ops);
  std::vector<TracedRegion> regions;
  for (std::size_t k = 0; k < branches.size(); ++k)
    regions.push_back(trace_region(
        transformed_region(n, k, api, loc), types, [&](const std::vector<Array>& params) {
          const std::vector<Batched> in = as_batched(params, bx);
          return with_batching(vmap_graph(branches[k], in, batch_size, loc), by, batch_size, n, api,
                               loc);
        }));
  const std::vector<Array> captured = unify_captures(regions);
  ops.insert(ops.begin(), index.value);
  ops.insert(ops.end(), captured.begin(), captured.end());
  std::vector<TensorType> results = n.results;
  for (std::size_t j = 0; j < results.size(); ++j)
    if (by[j]) results[j] = with_batch(results[j], batch_size);
  const std::vector<Array> out =
      bind_control(OpKind::Cond, ops, n.attrs, graphs_of(regions), results, api, loc);
  return as_batched(out, by);
}

// Swaps the two leading axes ([B, L, ...] <-> [L, B, ...]).
Array swap_leading(const Array& x, const std::source_location& loc) {
  lax::Axes perm{1, 0};
  for (std::size_t d = 2; d < x.shape().size(); ++d) perm.push_back(static_cast<std::int64_t>(d));
  return lax::transpose(x, perm, loc);
}

std::vector<Batched> batch_scan(const Graph& g, const Node& n, std::span<const Batched> operands,
                                std::int64_t batch_size, const std::string& api,
                                const std::source_location& loc) {
  const auto nc = static_cast<std::size_t>(n.attrs.get_int("carries"));
  const auto nx = static_cast<std::size_t>(n.attrs.get_int("xs"));
  const Graph body = region_of(g, n, 0);
  std::vector<bool> flags{false};  // the body's parameters: iteration, carries, xs, constants
  for (const Batched& b : operands) flags.push_back(b.batched);
  const std::vector<bool> out_flags = widen_carries(body, flags, 1, nc, DependenceKind::batch);
  // xs are scanned along their leading axis, so a batched x has its batch axis second.
  std::vector<Array> ops;
  std::vector<TensorType> types{TensorType{DType::I32, {}}};
  for (std::size_t i = 0; i < operands.size(); ++i) {
    const bool is_x = i >= nc && i < nc + nx;
    Array v = flags[1 + i] ? forced(operands[i], batch_size, loc) : operands[i].value;
    if (is_x && flags[1 + i]) v = swap_leading(v, loc);
    TensorType t{v.dtype(), v.shape()};
    if (is_x) t.shape.erase(t.shape.begin());
    ops.push_back(std::move(v));
    types.push_back(std::move(t));
  }
  TracedRegion region[1] = {trace_region(
      transformed_region(n, 0, api, loc), types, [&](const std::vector<Array>& params) {
        return with_batching(vmap_graph(body, as_batched(params, flags), batch_size, loc),
                             out_flags, batch_size, n, api, loc);
      })};
  const std::vector<Array> captured = unify_captures(region);
  ops.insert(ops.end(), captured.begin(), captured.end());
  std::vector<TensorType> results = n.results;
  for (std::size_t j = 0; j < results.size(); ++j)
    if (out_flags[j]) results[j] = with_batch(results[j], batch_size, j < nc ? 0 : 1);
  const std::vector<Array> out =
      bind_control(OpKind::Scan, ops, n.attrs, {std::move(region[0].graph)}, results, api, loc);
  std::vector<Batched> batched;
  for (std::size_t j = 0; j < out.size(); ++j)
    batched.push_back({j >= nc && out_flags[j] ? swap_leading(out[j], loc) : out[j], out_flags[j]});
  return batched;
}

}  // namespace

std::vector<Batched> batch_control(const Graph& g, const Node& n, std::span<const Batched> operands,
                                   std::int64_t batch_size, const std::string& api,
                                   const std::source_location& loc) {
  // Migration to core/src/primitives/: a definition's rule wins over the switch below.
  const auto& rule = prim::primitive(n.op).control_batch;
  if (rule.fn) return rule.fn(g, n, operands, batch_size, api, loc);
  if (!rule.refusal.empty()) refuse(rule.refusal, n, api);
  switch (n.op) {
    case OpKind::Cond:
      return batch_cond(g, n, operands, batch_size, api, loc);
    case OpKind::Scan:
      return batch_scan(g, n, operands, batch_size, api, loc);
    case OpKind::CustomCall:
      return batch_custom(g, n, operands, batch_size, api, loc);
    default:
      throw TransformError(api + ": " + std::string(op_name(n.op)) + " at " + n.origin.describe() +
                           " has no batching rule");
  }
}

}  // namespace weft::detail
