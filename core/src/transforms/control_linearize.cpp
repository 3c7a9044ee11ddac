// Reverse mode's first half through cond and scan (partial evaluation): a primal op, staged one
// trace out, computes the results and the residuals its linear part needs; a linear op, staged
// in the current (linear) trace, maps tangents and residuals to the results' tangents. A while
// loop's linear part is its whole jvp loop (linearize only; it has no transpose).
#include <algorithm>

#include "primitives/primitive.h"
#include "trace/array_impl.h"
#include "transforms/control_rules.h"
#include "transforms/dependence.h"
#include "transforms/linearize.h"
#include "transforms/staging.h"
#include "weft/error.h"

namespace weft::detail {

namespace {

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
    primal_out = bind_control(OpKind::Cond, ops, n.attrs, graphs_of(regions), results, api, loc);
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
  const std::vector<Array> lin_out = bind_control(OpKind::Cond, ops, n.attrs, graphs_of(regions),
                                                  pick<TensorType>(n.results, pr), api, loc);
  ControlTangents r;
  std::size_t next = 0;
  for (std::size_t j = 0; j < nr; ++j) {
    r.results.push_back(primal_out[j]);
    r.tangents.push_back(pr[j] ? Tangent(lin_out[next++]) : std::nullopt);
  }
  return r;
}

// The primal scan also returns, per iteration, the residuals of its body's linear part
// (stacked like ys); residuals that are loop constants are passed once instead. The linear scan
// runs the body's linear part over the tangents with those residuals as xs and constants.
ControlTangents linearize_scan(const Graph& g, const Node& n, std::span<const Array> operands,
                               std::span<const Tangent> tangents, const std::string& api,
                               const std::source_location& loc) {
  const auto nc = static_cast<std::size_t>(n.attrs.get_int("carries"));
  const auto nx = static_cast<std::size_t>(n.attrs.get_int("xs"));
  const std::size_t nk = operands.size() - nc - nx;
  const std::int64_t length = n.attrs.get_int("length");
  const Graph body = region_of(g, n, 0);
  // The carries that get tangents: a fixpoint over the body.
  std::vector<bool> marked{false};  // iteration, carries, xs, constants
  for (bool p : present(tangents)) marked.push_back(p);
  const std::vector<bool> all_out = widen_carries(body, marked, 1, nc, DependenceKind::tangent);
  const std::vector<bool> pc(marked.begin() + 1,
                             marked.begin() + static_cast<std::ptrdiff_t>(1 + nc));
  const std::vector<bool> px(marked.begin() + static_cast<std::ptrdiff_t>(1 + nc),
                             marked.begin() + static_cast<std::ptrdiff_t>(1 + nc + nx));
  const std::vector<bool> pk(marked.begin() + static_cast<std::ptrdiff_t>(1 + nc + nx),
                             marked.end());
  const std::vector<bool> py(all_out.begin() + static_cast<std::ptrdiff_t>(nc), all_out.end());
  const std::size_t ny = py.size();

  std::vector<TensorType> body_types{TensorType{DType::I32, {}}};
  for (std::size_t i = 0; i < operands.size(); ++i) {
    TensorType t{operands[i].dtype(), operands[i].shape()};
    if (i >= nc && i < nc + nx) t.shape.erase(t.shape.begin());
    body_types.push_back(std::move(t));
  }
  Graph linear;
  std::size_t tangent_params = 0;
  std::vector<std::optional<std::size_t>> hoisted;  // per residual: the constant it is
  std::vector<TensorType> stacked_types;            // of the residuals stacked per iteration
  std::vector<Array> primal_out;
  {
    SuspendInnermostTrace outer;
    TracedRegion region[1] = {trace_region(
        transformed_region(n, 0, api, loc), body_types, [&](const std::vector<Array>& params) {
          Linearized lin = linearize_graph(body, params, marked, api, loc);
          std::vector<Array> out = lin.primals_out;
          for (const Array& r : lin.residuals) {
            std::optional<std::size_t> constant;
            for (std::size_t j = 0; j < nk && !constant; ++j)
              if (same_value(r, params[1 + nc + nx + j])) constant = j;
            hoisted.push_back(constant);
            if (!constant) {
              out.push_back(r);
              stacked_types.push_back({r.dtype(), r.shape()});
            }
          }
          linear = std::move(lin.linear);
          tangent_params = lin.tangent_params;
          return out;
        })};
    const std::vector<Array> captured = unify_captures(region);
    std::vector<Array> ops(operands.begin(), operands.end());
    ops.insert(ops.end(), captured.begin(), captured.end());
    std::vector<TensorType> results = n.results;
    for (const TensorType& t : stacked_types) {
      Shape shape{length};
      shape.insert(shape.end(), t.shape.begin(), t.shape.end());
      results.push_back({t.dtype, std::move(shape)});
    }
    primal_out =
        bind_control(OpKind::Scan, ops, n.attrs, {std::move(region[0].graph)}, results, api, loc);
  }

  const std::size_t tc = count_set(pc), tx = count_set(px), tk = count_set(pk),
                    ns = stacked_types.size();
  if (tangent_params != tc + tx + tk)
    throw TransformError(api + ": scan at " + n.origin.describe() +
                         ": the body's linear part has an unexpected signature (a bug in weft)");
  std::vector<Array> ops;
  for (std::size_t j = 0; j < nc; ++j)
    if (pc[j]) ops.push_back(instantiate(tangents[j], body_types[1 + j], loc));
  const std::vector<Array> tangent_xs = present_values(tangents.subspan(nc, nx));
  ops.insert(ops.end(), tangent_xs.begin(), tangent_xs.end());
  ops.insert(ops.end(), primal_out.begin() + static_cast<std::ptrdiff_t>(nc + ny),
             primal_out.end());
  const std::vector<Array> tangent_ks = present_values(tangents.subspan(nc + nx));
  ops.insert(ops.end(), tangent_ks.begin(), tangent_ks.end());
  for (const std::optional<std::size_t>& h : hoisted)
    if (h) ops.push_back(operands[nc + nx + *h]);
  std::vector<TensorType> types{TensorType{DType::I32, {}}};
  for (std::size_t i = 0; i < ops.size(); ++i) {
    TensorType t{ops[i].dtype(), ops[i].shape()};
    if (i >= tc && i < tc + tx + ns) t.shape.erase(t.shape.begin());
    types.push_back(std::move(t));
  }
  TracedRegion region[1] = {trace_region(
      transformed_region(n, 0, api + " (linear part)", loc), types,
      [&](const std::vector<Array>& params) {
        // The linear graph's parameters: the tangents (carries, xs, constants), then residuals.
        std::vector<Array> args(params.begin() + 1,
                                params.begin() + static_cast<std::ptrdiff_t>(1 + tc + tx));
        const std::size_t at_k = 1 + tc + tx + ns;
        args.insert(args.end(), params.begin() + static_cast<std::ptrdiff_t>(at_k),
                    params.begin() + static_cast<std::ptrdiff_t>(at_k + tk));
        std::size_t next_stacked = 1 + tc + tx, next_hoisted = at_k + tk;
        for (const std::optional<std::size_t>& h : hoisted)
          args.push_back(params[h ? next_hoisted++ : next_stacked++]);
        const std::vector<Array> outs = eval_graph(linear, args, loc);
        const std::span<const Array> all(outs);
        std::vector<Array> out = pick<Array>(all.subspan(0, nc), pc);
        const std::vector<Array> ys = pick<Array>(all.subspan(nc), py);
        out.insert(out.end(), ys.begin(), ys.end());
        return out;
      })};
  const std::vector<Array> captured = unify_captures(region);
  ops.insert(ops.end(), captured.begin(), captured.end());
  Attrs attrs = n.attrs;
  attrs.set("carries", static_cast<std::int64_t>(tc));
  attrs.set("xs", static_cast<std::int64_t>(tx + ns));
  const std::span<const TensorType> result_types(n.results);
  std::vector<TensorType> results = pick<TensorType>(result_types.subspan(0, nc), pc);
  const std::vector<TensorType> ys_types = pick<TensorType>(result_types.subspan(nc), py);
  results.insert(results.end(), ys_types.begin(), ys_types.end());
  const std::vector<Array> lin_out =
      bind_control(OpKind::Scan, ops, attrs, {std::move(region[0].graph)}, results, api, loc);
  ControlTangents r;
  std::size_t next = 0;
  for (std::size_t j = 0; j < nc + ny; ++j) {
    r.results.push_back(primal_out[j]);
    const bool has = j < nc ? pc[j] : py[j - nc];
    r.tangents.push_back(has ? Tangent(lin_out[next++]) : std::nullopt);
  }
  return r;
}

}  // namespace

ControlTangents linearize_control(const Graph& g, const Node& n, std::span<const Array> operands,
                                  std::span<const Tangent> tangents, const std::string& api,
                                  const std::source_location& loc) {
  // Migration to core/src/primitives/: a definition's rule wins over the switch below.
  const auto& rule = prim::primitive(n.op).control_linearize;
  if (rule.fn) return rule.fn(g, n, operands, tangents, api, loc);
  if (!rule.refusal.empty()) refuse(rule.refusal, n, api);
  switch (n.op) {
    case OpKind::Cond:
      return linearize_cond(g, n, operands, tangents, api, loc);
    case OpKind::Scan:
      return linearize_scan(g, n, operands, tangents, api, loc);
    case OpKind::CustomCall:
      return linearize_custom(g, n, operands, tangents, api, loc);
    default:
      throw TransformError(api + ": " + std::string(op_name(n.op)) + " at " + n.origin.describe() +
                           " has no reverse-mode rule");
  }
}

}  // namespace weft::detail
