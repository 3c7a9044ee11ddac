// cond: every rule of the branch.
//
//   cond(index, x...)   branch0 .. branchN-1 (x...) -> (r...)
//
// A bool index picks branch1 when true (so exactly two branches); an integer index is clamped to
// [0, N-1], as lax.switch does.
#include <algorithm>

#include "ir/region_checks.h"
#include "primitives/families.h"
#include "transforms/control_rules.h"
#include "transforms/dependence.h"
#include "transforms/jvp_graph.h"
#include "transforms/linearize.h"
#include "transforms/staging.h"
#include "weft/error.h"
#include "weft/ops.h"
#include "weft/transforms/custom.h"

namespace weft::prim {

namespace {

using namespace detail;

std::string cond_region_name(std::size_t index) {
  return "branch" + std::to_string(index);
}

std::vector<RegionSignature> cond_signatures(std::span<const TensorType> operands, const Attrs&,
                                             std::span<const TensorType> results,
                                             std::size_t num_regions) {
  if (operands.empty()) region_checks::fail(OpKind::Cond, "needs an index operand");
  const TensorType& index = operands[0];
  if (!index.shape.empty())
    throw ShapeError("cond: the index must be a scalar, got " + type_to_string(index));
  if (index.dtype == DType::Bool) {
    if (num_regions != 2)
      region_checks::fail(OpKind::Cond, "a bool index selects between exactly 2 branches, got " +
                                            std::to_string(num_regions));
  } else if (!is_integer(index.dtype)) {
    throw DTypeError("cond: the index must be bool or an integer, got " + type_to_string(index));
  }
  if (num_regions == 0) region_checks::fail(OpKind::Cond, "needs at least one branch");
  std::vector<TensorType> params(operands.begin() + 1, operands.end());
  std::vector<TensorType> outs(results.begin(), results.end());
  std::vector<RegionSignature> out;
  for (std::size_t b = 0; b < num_regions; ++b) out.push_back({cond_region_name(b), params, outs});
  return out;
}

std::vector<interp::Value> evaluate_cond(const Node& node, interp::Operands operands,
                                         const interp::RunGraph& run) {
  const interp::Value& index = *operands[0];
  const auto branches = static_cast<std::int64_t>(node.regions.size());
  // An out-of-range integer index picks the nearest branch, as lax.switch does.
  // A u64 index of 2^63 or more is negative as an int64: past the last branch.
  const std::int64_t raw = index.i.at(0);
  const std::int64_t chosen = index.dtype == DType::U64 && raw < 0
                                  ? branches - 1
                                  : std::clamp<std::int64_t>(raw, 0, branches - 1);
  std::vector<interp::Value> args;
  for (const interp::Value* v : operands.subspan(1)) args.push_back(*v);
  return run(node.regions[static_cast<std::size_t>(chosen)], std::move(args));
}

// Effect tokens follow the branch operands and the branch results.
TokenPlacement cond_tokens(const Node& node) {
  TokenPlacement at{.operands_at = node.inputs.size(),
                    .results_at = node.results.size(),
                    .as_carries = false,
                    .regions = {}};
  for (const Graph& branch : node.regions)
    at.regions.push_back({branch.params.size(), branch.outputs.size()});
  return at;
}

// Forward mode: a cond of the branches' jvps; a result gets a tangent where any branch gives it
// one.
ControlTangents jvp_cond(const Graph& g, const Node& n, std::span<const Array> operands,
                         std::span<const Tangent> tangents, const std::string& api,
                         const std::source_location& loc) {
  const std::span<const Array> xs = operands.subspan(1);
  const std::vector<bool> px = present(tangents.subspan(1));
  std::vector<bool> pr(n.results.size(), false);
  std::vector<Graph> branches;
  for (std::size_t k = 0; k < n.regions.size(); ++k) {
    branches.push_back(region_of(g, n, k));
    const std::vector<bool> d = dependent_outputs(branches.back(), px, DependenceKind::tangent);
    for (std::size_t j = 0; j < pr.size(); ++j) pr[j] = pr[j] || d[j];
  }
  const std::vector<std::vector<bool>> groups{px};
  std::vector<Array> ops(xs.begin(), xs.end());
  append_tangents(ops, tangents.subspan(1), xs, px, loc);
  const std::vector<TensorType> types = value_types(ops);
  std::vector<TracedRegion> regions;
  for (std::size_t k = 0; k < branches.size(); ++k)
    regions.push_back(trace_region(
        transformed_region(n, k, api, loc), types, [&](const std::vector<Array>& params) {
          const Split s = split_groups(params, groups);
          JvpValues v =
              jvp_graph(branches[k], s.primals, s.tangents, PrimalPlacement::here, api, loc);
          std::vector<Array> out = v.primals;
          append_tangents(out, v.tangents, v.primals, pr, loc);
          return out;
        }));
  const std::vector<Array> captured = unify_captures(regions);
  ops.insert(ops.begin(), operands[0]);
  ops.insert(ops.end(), captured.begin(), captured.end());
  std::vector<TensorType> results = n.results;
  for (std::size_t j = 0; j < pr.size(); ++j)
    if (pr[j]) results.push_back(n.results[j]);
  std::vector<Graph> graphs;
  for (TracedRegion& r : regions) graphs.push_back(std::move(r.graph));
  const std::vector<Array> out =
      bind_control(n.op, ops, n.attrs, std::move(graphs), results, api, loc);
  ControlTangents r;
  std::size_t next = n.results.size();
  for (std::size_t j = 0; j < n.results.size(); ++j) {
    r.results.push_back(out[j]);
    r.tangents.push_back(pr[j] ? Tangent(out[next++]) : std::nullopt);
  }
  return r;
}

// Every branch computes its results and its own residuals; since the branches of one cond must
// return the same types, each returns every branch's residual slots, zeros in the others'.
ControlTangents linearize_cond(const Graph& g, const Node& n, std::span<const Array> operands,
                               std::span<const Tangent> tangents, const std::string& api,
                               const std::source_location& loc) {
  const std::size_t branch_count = n.regions.size();
  const std::span<const Array> xs = operands.subspan(1);
  const std::vector<bool> px = present(tangents.subspan(1));
  const std::size_t nr = n.results.size();
  std::vector<Graph> branches;
  std::vector<bool> pr(nr, false);
  for (std::size_t k = 0; k < branch_count; ++k) {
    branches.push_back(region_of(g, n, k));
    const std::vector<bool> d = dependent_outputs(branches.back(), px, DependenceKind::tangent);
    for (std::size_t j = 0; j < nr; ++j) pr[j] = pr[j] || d[j];
  }

  std::vector<std::vector<TensorType>> residual_types(branch_count);
  std::vector<Graph> linear(branch_count);
  std::vector<Array> primal_out;
  {
    SuspendInnermostTrace outer;
    const std::vector<TensorType> x_types = value_types(xs);
    const auto trace_branch = [&](std::size_t k, bool final) {
      return trace_region(
          transformed_region(n, k, api, loc), x_types, [&](const std::vector<Array>& params) {
            Linearized lin = linearize_graph(branches[k], params, px, api, loc);
            std::vector<Array> out = lin.primals_out;
            if (!final) {
              residual_types[k] = value_types(lin.residuals);
              return out;
            }
            if (value_types(lin.residuals) != residual_types[k])
              throw TransformError(api + ": cond at " + n.origin.describe() + ": branch " +
                                   std::to_string(k) +
                                   " linearized differently twice (a bug in weft)");
            for (std::size_t j = 0; j < branch_count; ++j)
              for (std::size_t r = 0; r < residual_types[j].size(); ++r)
                out.push_back(j == k ? lin.residuals[r] : zeros_of(residual_types[j][r], loc));
            linear[k] = std::move(lin.linear);
            return out;
          });
    };
    for (std::size_t k = 0; k < branch_count; ++k) trace_branch(k, false);
    std::vector<TracedRegion> regions;
    for (std::size_t k = 0; k < branch_count; ++k) regions.push_back(trace_branch(k, true));
    const std::vector<Array> captured = unify_captures(regions);
    std::vector<Array> ops(operands.begin(), operands.end());
    ops.insert(ops.end(), captured.begin(), captured.end());
    std::vector<TensorType> results = n.results;
    for (const std::vector<TensorType>& types : residual_types)
      results.insert(results.end(), types.begin(), types.end());
    primal_out = bind_control(n.op, ops, n.attrs, graphs_of(regions), results, api, loc);
  }

  const std::vector<Array> residuals(primal_out.begin() + static_cast<std::ptrdiff_t>(nr),
                                     primal_out.end());
  const std::vector<Array> tangent_values = present_values(tangents.subspan(1));
  const std::size_t nt = tangent_values.size();
  std::vector<Array> ops{operands[0]};
  ops.insert(ops.end(), tangent_values.begin(), tangent_values.end());
  ops.insert(ops.end(), residuals.begin(), residuals.end());
  const std::vector<TensorType> types = value_types(std::span<const Array>(ops).subspan(1));
  std::vector<TracedRegion> regions;
  std::size_t first_residual = nt;
  for (std::size_t k = 0; k < branch_count; ++k) {
    regions.push_back(trace_region(
        transformed_region(n, k, api + " (linear part)", loc), types,
        [&](const std::vector<Array>& params) {
          std::vector<Array> args(params.begin(), params.begin() + static_cast<std::ptrdiff_t>(nt));
          const auto from = params.begin() + static_cast<std::ptrdiff_t>(first_residual);
          args.insert(args.end(), from,
                      from + static_cast<std::ptrdiff_t>(residual_types[k].size()));
          const std::vector<Array> outs = eval_graph(linear[k], args, loc);
          return pick<Array>(outs, pr);
        }));
    first_residual += residual_types[k].size();
  }
  const std::vector<Array> captured = unify_captures(regions);
  ops.insert(ops.end(), captured.begin(), captured.end());
  const std::vector<Array> lin_out = bind_control(n.op, ops, n.attrs, graphs_of(regions),
                                                  pick<TensorType>(n.results, pr), api, loc);
  ControlTangents r;
  std::size_t next = 0;
  for (std::size_t j = 0; j < nr; ++j) {
    r.results.push_back(primal_out[j]);
    r.tangents.push_back(pr[j] ? Tangent(lin_out[next++]) : std::nullopt);
  }
  return r;
}

// A cond of the branches' transposes, on the same index: branch k maps the results' cotangents
// (and the non-linear operands) to the linear operands' cotangents.
std::vector<Tangent> transpose_cond(const Graph& g, const Node& n,
                                    std::span<const Tangent> result_cotangents,
                                    std::span<const std::optional<Array>> operands,
                                    const std::vector<bool>& linear, const std::string& api,
                                    const std::source_location& loc) {
  if (linear[0])
    throw TransformError(api + ": cond at " + n.origin.describe() +
                         ": its index depends on a value being differentiated (a bug in weft)");
  const std::vector<bool> branch_linear(linear.begin() + 1, linear.end());
  std::vector<Array> ops{*operands[0]};
  std::vector<bool> has_cotangent;
  for (const Tangent& ct : result_cotangents) {
    has_cotangent.push_back(ct.has_value());
    if (ct) ops.push_back(*ct);
  }
  std::vector<TensorType> linear_types;
  for (std::size_t i = 1; i < operands.size(); ++i) {
    if (linear[i])
      linear_types.push_back(operand_type(g, n, i));
    else
      ops.push_back(*operands[i]);
  }
  const std::vector<TensorType> types = [&] {
    std::vector<TensorType> t;
    for (std::size_t i = 1; i < ops.size(); ++i) t.push_back({ops[i].dtype(), ops[i].shape()});
    return t;
  }();
  const std::size_t given =
      static_cast<std::size_t>(std::count(has_cotangent.begin(), has_cotangent.end(), true));
  std::vector<TracedRegion> regions;
  for (std::size_t k = 0; k < n.regions.size(); ++k) {
    const Graph branch = region_of(g, n, k);
    regions.push_back(trace_region(
        transformed_region(n, k, api + " (transpose)", loc), types,
        [&](const std::vector<Array>& params) {
          std::vector<Tangent> out_cts;
          std::size_t next = 0;
          for (bool has : has_cotangent)
            out_cts.push_back(has ? Tangent(params[next++]) : std::nullopt);
          const std::span<const Array> nonlinear(params.data() + given, params.size() - given);
          const std::vector<Tangent> in_cts =
              transpose_graph(branch, branch_linear, nonlinear, out_cts, api, loc);
          std::vector<Array> out;
          for (std::size_t j = 0; j < in_cts.size(); ++j)
            out.push_back(instantiate(in_cts[j], linear_types[j], loc));
          return out;
        }));
  }
  const std::vector<Array> captured = unify_captures(regions);
  ops.insert(ops.end(), captured.begin(), captured.end());
  const std::vector<Array> out =
      bind_control(n.op, ops, n.attrs, graphs_of(regions), linear_types, api, loc);
  std::vector<Tangent> result(operands.size());
  std::size_t next = 0;
  for (std::size_t i = 1; i < operands.size(); ++i)
    if (linear[i]) result[i] = out[next++];
  return result;
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

// An unbatched index batches the branches; a batched one runs every branch and selects.
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
      bind_control(n.op, ops, n.attrs, graphs_of(regions), results, api, loc);
  return as_batched(out, by);
}

}  // namespace

void define_cond_primitive(Definitions& defs) {
  Primitive p = jax_names(row(OpKind::Cond, "cond", OpClass::Control, -1), "cond switch");
  p.regions = {
      .min = 1, .max = Regions::kAny, .name = cond_region_name, .signatures = cond_signatures};
  p.evaluate_control = evaluate_cond;
  p.control_flow = ControlFlow::branch;
  p.token_placement = cond_tokens;
  p.control_jvp.fn = jvp_cond;
  p.control_linearize.fn = linearize_cond;
  p.control_transpose.fn = transpose_cond;
  p.control_batch.fn = batch_cond;
  defs.add(std::move(p));
}

}  // namespace weft::prim
