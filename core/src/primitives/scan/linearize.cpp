// Reverse mode's first half through scan (partial evaluation).
#include "transforms/linearize.h"
#include "primitives/scan/rules.h"
#include "trace/array_impl.h"
#include "transforms/control_rules.h"
#include "transforms/dependence.h"
#include "transforms/staging.h"
#include "weft/error.h"
#include "weft/ir/op_attrs.h"

namespace weft::prim::scan_rules {

using namespace detail;

// The primal scan also returns, per iteration, the residuals of its body's linear part
// (stacked like ys); residuals that are loop constants are passed once instead. The linear scan
// runs the body's linear part over the tangents with those residuals as xs and constants.
ControlTangents linearize(const Graph& g, const Node& n, std::span<const Array> operands,
                          std::span<const Tangent> tangents, const std::string& api,
                          const std::source_location& loc) {
  const ScanAttrs scan = ScanAttrs::read(n.attrs);
  const auto nc = static_cast<std::size_t>(scan.carries);
  const auto nx = static_cast<std::size_t>(scan.xs);
  const std::size_t nk = operands.size() - nc - nx;
  const std::int64_t length = scan.length;
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
    primal_out = bind_control(n.op, ops, n.attrs, {std::move(region[0].graph)}, results, api, loc);
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
  ScanAttrs new_scan = scan;
  new_scan.carries = static_cast<std::int64_t>(tc);
  new_scan.xs = static_cast<std::int64_t>(tx + ns);
  const Attrs attrs = updated_attrs(n.attrs, new_scan.write());
  const std::span<const TensorType> result_types(n.results);
  std::vector<TensorType> results = pick<TensorType>(result_types.subspan(0, nc), pc);
  const std::vector<TensorType> ys_types = pick<TensorType>(result_types.subspan(nc), py);
  results.insert(results.end(), ys_types.begin(), ys_types.end());
  const std::vector<Array> lin_out =
      bind_control(n.op, ops, attrs, {std::move(region[0].graph)}, results, api, loc);
  ControlTangents r;
  std::size_t next = 0;
  for (std::size_t j = 0; j < nc + ny; ++j) {
    r.results.push_back(primal_out[j]);
    const bool has = j < nc ? pc[j] : py[j - nc];
    r.tangents.push_back(has ? Tangent(lin_out[next++]) : std::nullopt);
  }
  return r;
}

}  // namespace weft::prim::scan_rules
