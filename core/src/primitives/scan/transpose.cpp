// Reverse mode's second half through the linear scan that linearize makes.
#include "primitives/scan/rules.h"
#include "transforms/control_rules.h"
#include "transforms/linearize.h"
#include "transforms/staging.h"
#include "weft/ir/op_attrs.h"
#include "weft/ops.h"

namespace weft::prim::scan_rules {

using namespace detail;

// A scan the other way: the carries' cotangents flow backwards, the linear constants'
// cotangents accumulate in extra carries, and the linear xs' cotangents come out as ys.
std::vector<Tangent> transpose(const Graph& g, const Node& n,
                               std::span<const Tangent> result_cotangents,
                               std::span<const std::optional<Array>> operands,
                               const std::vector<bool>& linear, const std::string& api,
                               const std::source_location& loc) {
  const ScanAttrs scan = ScanAttrs::read(n.attrs);
  const auto nc = static_cast<std::size_t>(scan.carries);
  const auto nx = static_cast<std::size_t>(scan.xs);
  const std::size_t nops = operands.size();
  const auto row = [](TensorType t) {
    t.shape.erase(t.shape.begin());
    return t;
  };
  std::vector<Array> ops;
  std::vector<TensorType> types{TensorType{DType::I32, {}}};
  const auto add = [&](const Array& a, bool stacked) {
    ops.push_back(a);
    TensorType t{a.dtype(), a.shape()};
    types.push_back(stacked ? row(t) : t);
  };
  // Carries: the carries' cotangents, then one accumulator per linear constant.
  for (std::size_t j = 0; j < nc; ++j)
    add(instantiate(result_cotangents[j], n.results[j], loc), false);
  std::vector<std::size_t> linear_consts, linear_xs;
  for (std::size_t i = nc + nx; i < nops; ++i)
    if (linear[i]) {
      linear_consts.push_back(i);
      add(zeros_of(operand_type(g, n, i), loc), false);
    }
  // xs: the ys' cotangents that are given, then the non-linear xs.
  std::vector<bool> y_has_cotangent;
  for (std::size_t j = nc; j < n.results.size(); ++j) {
    y_has_cotangent.push_back(result_cotangents[j].has_value());
    if (result_cotangents[j]) add(*result_cotangents[j], true);
  }
  std::size_t new_xs =
      static_cast<std::size_t>(std::count(y_has_cotangent.begin(), y_has_cotangent.end(), true));
  for (std::size_t i = nc; i < nc + nx; ++i) {
    if (linear[i]) {
      linear_xs.push_back(i);
    } else {
      add(*operands[i], true);
      ++new_xs;
    }
  }
  // Constants: the non-linear ones.
  for (std::size_t i = nc + nx; i < nops; ++i)
    if (!linear[i]) add(*operands[i], false);

  const Graph body = region_of(g, n, 0);
  // The carries are linear even where their initial value is a zero constant (a carry that only
  // the body perturbs): the body is linear in all of them.
  std::vector<bool> body_linear{false};
  body_linear.insert(body_linear.end(), linear.begin(), linear.end());
  std::fill(body_linear.begin() + 1, body_linear.begin() + static_cast<std::ptrdiff_t>(1 + nc),
            true);
  const std::size_t nlk = linear_consts.size();
  TracedRegion region[1] = {trace_region(
      transformed_region(n, 0, api + " (transpose)", loc), types,
      [&](const std::vector<Array>& params) {
        // params: i, carry cotangents, accumulators, ys' cotangents, non-linear xs, constants.
        std::vector<Tangent> out_cts;
        for (std::size_t j = 0; j < nc; ++j) out_cts.push_back(params[1 + j]);
        std::size_t next = 1 + nc + nlk;
        for (bool has : y_has_cotangent)
          out_cts.push_back(has ? Tangent(params[next++]) : std::nullopt);
        std::vector<Array> nonlinear{params[0]};
        nonlinear.insert(nonlinear.end(), params.begin() + static_cast<std::ptrdiff_t>(next),
                         params.end());
        const std::vector<Tangent> in_cts =
            transpose_graph(body, body_linear, nonlinear, out_cts, api, loc);
        // in_cts: carries, linear xs, linear constants (operand order).
        std::vector<Array> out;
        for (std::size_t j = 0; j < nc; ++j)
          out.push_back(instantiate(in_cts[j], n.results[j], loc));
        for (std::size_t j = 0; j < nlk; ++j) {
          const Tangent& ct = in_cts[nc + linear_xs.size() + j];
          const Array& acc = params[1 + nc + j];
          out.push_back(ct ? lax::add(acc, *ct, loc) : acc);
        }
        for (std::size_t j = 0; j < linear_xs.size(); ++j)
          out.push_back(instantiate(in_cts[nc + j], row(operand_type(g, n, linear_xs[j])), loc));
        return out;
      })};
  const std::vector<Array> captured = unify_captures(region);
  ops.insert(ops.end(), captured.begin(), captured.end());
  ScanAttrs new_scan = scan;
  new_scan.carries = static_cast<std::int64_t>(nc + nlk);
  new_scan.xs = static_cast<std::int64_t>(new_xs);
  new_scan.reverse = !scan.reverse;
  const Attrs attrs = updated_attrs(n.attrs, new_scan.write());
  std::vector<TensorType> results(types.begin() + 1,
                                  types.begin() + static_cast<std::ptrdiff_t>(1 + nc + nlk));
  for (std::size_t i : linear_xs) results.push_back(operand_type(g, n, i));
  const std::vector<Array> out =
      bind_control(n.op, ops, attrs, {std::move(region[0].graph)}, results, api, loc);
  std::vector<Tangent> result(nops);
  for (std::size_t j = 0; j < nc; ++j)
    if (linear[j]) result[j] = out[j];
  for (std::size_t j = 0; j < nlk; ++j) result[linear_consts[j]] = out[nc + j];
  for (std::size_t j = 0; j < linear_xs.size(); ++j) result[linear_xs[j]] = out[nc + nlk + j];
  return result;
}

}  // namespace weft::prim::scan_rules
