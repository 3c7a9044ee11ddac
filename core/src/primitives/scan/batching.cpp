// vmap through scan: xs and ys keep their batch axis in front.
#include "primitives/scan/rules.h"
#include "transforms/control_rules.h"
#include "transforms/dependence.h"
#include "transforms/staging.h"
#include "weft/ir/op_attrs.h"
#include "weft/ops.h"

namespace weft::prim::scan_rules {

using namespace detail;

namespace {

// Swaps the two leading axes ([B, L, ...] <-> [L, B, ...]).
Array swap_leading(const Array& x, const std::source_location& loc) {
  lax::Axes perm{1, 0};
  for (std::size_t d = 2; d < x.shape().size(); ++d) perm.push_back(static_cast<std::int64_t>(d));
  return lax::transpose(x, perm, loc);
}

}  // namespace

std::vector<Batched> batch(const Graph& g, const Node& n, std::span<const Batched> operands,
                           std::int64_t batch_size, const std::string& api,
                           const std::source_location& loc) {
  const ScanAttrs scan = ScanAttrs::read(n.attrs);
  const auto nc = static_cast<std::size_t>(scan.carries);
  const auto nx = static_cast<std::size_t>(scan.xs);
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
      bind_control(n.op, ops, n.attrs, {std::move(region[0].graph)}, results, api, loc);
  std::vector<Batched> batched;
  for (std::size_t j = 0; j < out.size(); ++j)
    batched.push_back({j >= nc && out_flags[j] ? swap_leading(out[j], loc) : out[j], out_flags[j]});
  return batched;
}

}  // namespace weft::prim::scan_rules
