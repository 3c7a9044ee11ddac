// Forward mode through scan: the same loop over (primal, tangent) pairs, its body the jvp of the
// original one.
#include "primitives/scan/rules.h"
#include "transforms/control_rules.h"
#include "transforms/dependence.h"
#include "transforms/jvp_graph.h"
#include "transforms/staging.h"
#include "weft/ir/op_attrs.h"

namespace weft::prim::scan_rules {

using namespace detail;

ControlTangents jvp(const Graph& g, const Node& n, std::span<const Array> operands,
                    std::span<const Tangent> tangents, const std::string& api,
                    const std::source_location& loc) {
  const ScanAttrs scan = ScanAttrs::read(n.attrs);
  const auto nc = static_cast<std::size_t>(scan.carries);
  const auto nx = static_cast<std::size_t>(scan.xs);
  const Graph body = region_of(g, n, 0);
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

  std::vector<Array> ops;
  const auto group = [&](std::size_t first, std::size_t count, const std::vector<bool>& flags) {
    ops.insert(ops.end(), operands.begin() + static_cast<std::ptrdiff_t>(first),
               operands.begin() + static_cast<std::ptrdiff_t>(first + count));
    append_tangents(ops, tangents.subspan(first, count), operands.subspan(first, count), flags,
                    loc);
  };
  group(0, nc, pc);
  const std::size_t new_carries = ops.size();
  group(nc, nx, px);
  const std::size_t new_xs = ops.size() - new_carries;
  group(nc + nx, operands.size() - nc - nx, pk);

  std::vector<TensorType> types{TensorType{DType::I32, {}}};
  for (std::size_t i = 0; i < ops.size(); ++i) {
    TensorType t{ops[i].dtype(), ops[i].shape()};
    if (i >= new_carries && i < new_carries + new_xs) t.shape.erase(t.shape.begin());
    types.push_back(std::move(t));
  }
  const std::vector<std::vector<bool>> groups{pc, px, pk};
  TracedRegion region[1] = {trace_region(
      transformed_region(n, 0, api, loc), types, [&](const std::vector<Array>& params) {
        const std::vector<Array> rest(params.begin() + 1, params.end());
        Split s = split_groups(rest, groups);
        s.primals.insert(s.primals.begin(), params[0]);
        s.tangents.insert(s.tangents.begin(), std::nullopt);
        JvpValues v = jvp_graph(body, s.primals, s.tangents, PrimalPlacement::here, api, loc);
        const std::span<const Array> primals(v.primals);
        const std::span<const Tangent> out_tangents(v.tangents);
        std::vector<Array> out(v.primals.begin(),
                               v.primals.begin() + static_cast<std::ptrdiff_t>(nc));
        append_tangents(out, out_tangents.subspan(0, nc), primals.subspan(0, nc), pc, loc);
        out.insert(out.end(), v.primals.begin() + static_cast<std::ptrdiff_t>(nc), v.primals.end());
        append_tangents(out, out_tangents.subspan(nc), primals.subspan(nc), py, loc);
        return out;
      })};
  const std::vector<Array> captured = unify_captures(region);
  ops.insert(ops.end(), captured.begin(), captured.end());
  ScanAttrs new_scan = scan;
  new_scan.carries = static_cast<std::int64_t>(new_carries);
  new_scan.xs = static_cast<std::int64_t>(new_xs);
  const Attrs attrs = updated_attrs(n.attrs, new_scan.write());
  const std::vector<TensorType> carry_types(n.results.begin(),
                                            n.results.begin() + static_cast<std::ptrdiff_t>(nc));
  const std::vector<TensorType> ys_types(n.results.begin() + static_cast<std::ptrdiff_t>(nc),
                                         n.results.end());
  std::vector<TensorType> results = carry_types;
  for (std::size_t j = 0; j < nc; ++j)
    if (pc[j]) results.push_back(carry_types[j]);
  results.insert(results.end(), ys_types.begin(), ys_types.end());
  for (std::size_t j = 0; j < ys_types.size(); ++j)
    if (py[j]) results.push_back(ys_types[j]);
  const std::vector<Array> out =
      bind_control(n.op, ops, attrs, {std::move(region[0].graph)}, results, api, loc);
  ControlTangents r;
  std::size_t next = nc;
  for (std::size_t j = 0; j < nc; ++j) {
    r.results.push_back(out[j]);
    r.tangents.push_back(pc[j] ? Tangent(out[next++]) : std::nullopt);
  }
  const std::size_t ys_at = next;
  next = ys_at + ys_types.size();
  for (std::size_t j = 0; j < ys_types.size(); ++j) {
    r.results.push_back(out[ys_at + j]);
    r.tangents.push_back(py[j] ? Tangent(out[next++]) : std::nullopt);
  }
  return r;
}

}  // namespace weft::prim::scan_rules
