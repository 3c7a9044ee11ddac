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

Array forced(const Batched& b, std::int64_t batch_size, const std::source_location& loc) {
  return b.batched ? b.value : with_batch_axis(b.value, batch_size, loc);
}

std::vector<bool> batched_flags(std::span<const Batched> values) {
  std::vector<bool> out;
  for (const Batched& b : values) out.push_back(b.batched);
  return out;
}

TensorType with_batch(TensorType t, std::int64_t batch_size, std::size_t at = 0) {
  t.shape.insert(t.shape.begin() + static_cast<std::ptrdiff_t>(at), batch_size);
  return t;
}

// A region's outputs with the batch axis where `want` says (an output batched elsewhere would be
// a dependence the analysis missed).
std::vector<Array> with_batching(const std::vector<Batched>& out, const std::vector<bool>& want,
                                 std::int64_t batch_size, const Node& n, const std::string& api,
                                 const std::source_location& loc) {
  std::vector<Array> values;
  for (std::size_t j = 0; j < out.size(); ++j) {
    if (out[j].batched && !want[j])
      throw TransformError(api + ": " + std::string(op_name(n.op)) + " at " + n.origin.describe() +
                           ": output " + std::to_string(j) +
                           " of a region is batched unexpectedly (a bug in weft)");
    values.push_back(want[j] ? forced(out[j], batch_size, loc) : out[j].value);
  }
  return values;
}

std::vector<Batched> as_batched(std::span<const Array> values, const std::vector<bool>& flags) {
  std::vector<Batched> out;
  for (std::size_t i = 0; i < values.size(); ++i) out.push_back({values[i], flags[i]});
  return out;
}

bool has_ordered_effect(const Graph& g) {
  const std::vector<Effect> effects = graph_effects(g);
  return std::any_of(effects.begin(), effects.end(), [](const Effect& e) { return e.ordered; });
}

// `mask` ([B] bool) broadcast to `like`'s shape along its leading axis.
Array per_example(const Array& mask, const Array& like, const std::source_location& loc) {
  return lax::broadcast_in_dim(mask, like.shape(), {0}, loc);
}

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

std::vector<Batched> batch_while(const Graph& g, const Node& n, std::span<const Batched> operands,
                                 std::int64_t batch_size, const std::string& api,
                                 const std::source_location& loc) {
  const auto nc = static_cast<std::size_t>(n.attrs.get_int("carries"));
  const Graph cond = region_of(g, n, 0);
  const Graph body = region_of(g, n, 1);
  std::vector<bool> flags = batched_flags(operands);  // carries, then constants
  widen_carries(body, flags, 0, nc, DependenceKind::batch);
  const bool predicate_batched = dependent_outputs(cond, flags, DependenceKind::batch)[0];
  if (predicate_batched) {
    // Runs while any example goes on; an example that is done keeps its carry. Every carry is
    // batched, since examples stop at different iterations.
    if (has_ordered_effect(body) || has_ordered_effect(cond))
      throw TransformError(api + ": while_loop at " + n.origin.describe() +
                           " has an ordered effect and a condition that differs per example; "
                           "vmap would run the effect for examples already done. Make the "
                           "condition unbatched, or the effect unordered");
    std::fill(flags.begin(), flags.begin() + static_cast<std::ptrdiff_t>(nc), true);
  }
  std::vector<Array> ops;
  for (std::size_t i = 0; i < operands.size(); ++i)
    ops.push_back(flags[i] ? forced(operands[i], batch_size, loc) : operands[i].value);
  const std::vector<TensorType> types = value_types(ops);
  const std::vector<bool> carry_flags(flags.begin(),
                                      flags.begin() + static_cast<std::ptrdiff_t>(nc));

  const auto predicate = [&](const std::vector<Batched>& in) {
    const Batched p = vmap_graph(cond, in, batch_size, loc).at(0);
    return p;
  };
  TracedRegion regions[2] = {
      trace_region(
          transformed_region(n, 0, api, loc), types,
          [&](const std::vector<Array>& params) {
            const Batched p = predicate(as_batched(params, flags));
            if (!predicate_batched) return std::vector<Array>{p.value};
            const Array any = lax::reduce_max(
                lax::convert_element_type(forced(p, batch_size, loc), DType::I32, loc), {0}, loc);
            return std::vector<Array>{lax::gt(any, lax::constant(0, DType::I32, loc), loc)};
          }),
      trace_region(
          transformed_region(n, 1, api, loc), types, [&](const std::vector<Array>& params) {
            const std::vector<Batched> in = as_batched(params, flags);
            std::vector<Array> next = with_batching(vmap_graph(body, in, batch_size, loc),
                                                    carry_flags, batch_size, n, api, loc);
            if (!predicate_batched) return next;
            const Array going = forced(predicate(in), batch_size, loc);
            for (std::size_t j = 0; j < nc; ++j)
              next[j] = lax::select(per_example(going, next[j], loc), next[j], params[j], loc);
            return next;
          })};
  const std::vector<Array> captured = unify_captures(regions);
  ops.insert(ops.end(), captured.begin(), captured.end());
  const std::vector<TensorType> results(types.begin(),
                                        types.begin() + static_cast<std::ptrdiff_t>(nc));
  const std::vector<Array> out = bind_control(
      OpKind::While, ops, n.attrs, {regions[0].graph, regions[1].graph}, results, api, loc);
  return as_batched(out, carry_flags);
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
  if (!rule.refusal.empty())
    throw TransformError(api + ": " + std::string(rule.refusal) + " (" +
                         std::string(op_name(n.op)) + " at " + n.origin.describe() + ")");
  switch (n.op) {
    case OpKind::Cond:
      return batch_cond(g, n, operands, batch_size, api, loc);
    case OpKind::While:
      return batch_while(g, n, operands, batch_size, api, loc);
    case OpKind::Scan:
      return batch_scan(g, n, operands, batch_size, api, loc);
    default:
      throw TransformError(api + ": " + std::string(op_name(n.op)) + " at " + n.origin.describe() +
                           " has no batching rule");
  }
}

}  // namespace weft::detail
