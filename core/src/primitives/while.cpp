// while: every rule of the loop that runs its body while its condition holds.
//
//   while[carries=n](c..., k...)   cond(c..., k...) -> (bool[]), body(c..., k...) -> (c...)
//
// Its trip count is known only at run time, so it has no transpose (as in JAX): no values can be
// stored per iteration for a backward pass.
#include <algorithm>

#include "ir/region_checks.h"
#include "primitives/families.h"
#include "transforms/control_rules.h"
#include "transforms/dependence.h"
#include "transforms/jvp_graph.h"
#include "transforms/staging.h"
#include "weft/error.h"
#include "weft/ir/op_attrs.h"
#include "weft/ops.h"

namespace weft::prim {

namespace {

using namespace detail;

std::string while_region_name(std::size_t index) {
  return index == 0 ? "cond" : "body";
}

std::vector<RegionSignature> while_signatures(std::span<const TensorType> operands,
                                              const Attrs& attrs,
                                              std::span<const TensorType> results,
                                              std::size_t num_regions) {
  using namespace region_checks;
  expect_regions(OpKind::While, num_regions, 2);
  const std::size_t n = count_attr(OpKind::While, attrs, WhileAttrs::kCarries, operands.size());
  std::vector<TensorType> params(operands.begin(), operands.end());
  std::vector<TensorType> carries(operands.begin(), operands.begin() + n);
  expect_results(OpKind::While, results, carries, "the carries");
  return {{"cond", params, {TensorType{DType::Bool, {}}}}, {"body", params, carries}};
}

constexpr CountAttr kCountAttrs[] = {{WhileAttrs::kCarries, "a count of operands"}};

std::vector<interp::Value> evaluate_while(const Node& node, interp::Operands operands,
                                          const interp::RunGraph& run) {
  const auto n = static_cast<std::size_t>(WhileAttrs::read(node.attrs).carries);
  std::vector<interp::Value> state;
  for (const interp::Value* v : operands) state.push_back(*v);
  while (true) {
    if (run(node.regions[0], state).at(0).i.at(0) == 0) break;
    std::vector<interp::Value> next = run(node.regions[1], state);
    for (std::size_t k = 0; k < n; ++k) state[k] = std::move(next[k]);
  }
  state.resize(n);
  return state;
}

// Effect tokens are extra carries, after the user's: both regions take them there, the body
// returns them there.
TokenPlacement while_tokens(const Node& node) {
  const auto carries = static_cast<std::size_t>(WhileAttrs::read(node.attrs).carries);
  return {.operands_at = carries,
          .results_at = carries,
          .as_carries = true,
          .regions = {{carries, std::nullopt}, {carries, carries}}};
}

ControlTangents jvp_while(const Graph& g, const Node& n, std::span<const Array> operands,
                          std::span<const Tangent> tangents, const std::string& api,
                          const std::source_location& loc) {
  const auto nc = static_cast<std::size_t>(WhileAttrs::read(n.attrs).carries);
  const Graph cond = region_of(g, n, 0);
  const Graph body = region_of(g, n, 1);
  std::vector<bool> marked = present(tangents);  // carries, then constants
  widen_carries(body, marked, 0, nc, DependenceKind::tangent);
  const std::vector<bool> pc(marked.begin(), marked.begin() + static_cast<std::ptrdiff_t>(nc));
  const std::vector<bool> pk(marked.begin() + static_cast<std::ptrdiff_t>(nc), marked.end());
  const std::vector<std::vector<bool>> groups{pc, pk};

  std::vector<Array> ops(operands.begin(), operands.begin() + static_cast<std::ptrdiff_t>(nc));
  append_tangents(ops, tangents.subspan(0, nc), operands.subspan(0, nc), pc, loc);
  const std::size_t new_carries = ops.size();
  ops.insert(ops.end(), operands.begin() + static_cast<std::ptrdiff_t>(nc), operands.end());
  append_tangents(ops, tangents.subspan(nc), operands.subspan(nc), pk, loc);
  const std::vector<TensorType> types = value_types(ops);

  TracedRegion regions[2] = {
      trace_region(transformed_region(n, 0, api, loc), types,
                   [&](const std::vector<Array>& params) {
                     return eval_graph(cond, split_groups(params, groups).primals, loc);
                   }),
      trace_region(
          transformed_region(n, 1, api, loc), types, [&](const std::vector<Array>& params) {
            const Split s = split_groups(params, groups);
            JvpValues v = jvp_graph(body, s.primals, s.tangents, PrimalPlacement::here, api, loc);
            std::vector<Array> out = v.primals;
            append_tangents(out, v.tangents, v.primals, pc, loc);
            return out;
          })};
  const std::vector<Array> captured = unify_captures(regions);
  ops.insert(ops.end(), captured.begin(), captured.end());
  Attrs attrs = n.attrs;
  attrs.set(WhileAttrs::kCarries, static_cast<std::int64_t>(new_carries));
  std::vector<TensorType> results(types.begin(),
                                  types.begin() + static_cast<std::ptrdiff_t>(new_carries));
  const std::vector<Array> out =
      bind_control(n.op, ops, attrs, {regions[0].graph, regions[1].graph}, results, api, loc);
  ControlTangents r;
  std::size_t next = nc;
  for (std::size_t j = 0; j < nc; ++j) {
    r.results.push_back(out[j]);
    r.tangents.push_back(pc[j] ? Tangent(out[next++]) : std::nullopt);
  }
  return r;
}

// No residuals can be stored per iteration. As JAX's partial evaluation of while does, the
// primal loop is staged one trace out for the results, and the linear part runs the jvp loop
// from the primal operands (its residuals) and the tangents, recomputing the primal carries:
// enough for linearize's forward evaluation. That loop has no transpose, so grad and vjp stay
// refused.
ControlTangents linearize_while(const Graph& g, const Node& n, std::span<const Array> operands,
                                std::span<const Tangent> tangents, const std::string& api,
                                const std::source_location& loc) {
  std::vector<Array> primal_out;
  {
    SuspendInnermostTrace outer;
    primal_out = apply_node(g, n, operands, loc);
  }
  ControlTangents r = jvp_while(g, n, operands, tangents, api, loc);
  r.results = std::move(primal_out);
  return r;
}

// A batched predicate runs the loop while any example goes on; an example that is done keeps
// its carry.
std::vector<Batched> batch_while(const Graph& g, const Node& n, std::span<const Batched> operands,
                                 std::int64_t batch_size, const std::string& api,
                                 const std::source_location& loc) {
  const auto nc = static_cast<std::size_t>(WhileAttrs::read(n.attrs).carries);
  const Graph cond = region_of(g, n, 0);
  const Graph body = region_of(g, n, 1);
  std::vector<bool> flags = batched_flags(operands);  // carries, then constants
  widen_carries(body, flags, 0, nc, DependenceKind::batch);
  const bool predicate_batched = dependent_outputs(cond, flags, DependenceKind::batch)[0];
  if (predicate_batched) {
    // Every carry is batched, since examples stop at different iterations.
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
  const std::vector<Array> out =
      bind_control(n.op, ops, n.attrs, {regions[0].graph, regions[1].graph}, results, api, loc);
  return as_batched(out, carry_flags);
}

}  // namespace

void define_while_primitive(Definitions& defs) {
  Primitive p = jax_names(row(OpKind::While, "while", OpClass::Control, -1), "while while_loop");
  p.regions = {.min = 2, .max = 2, .name = while_region_name, .signatures = while_signatures};
  p.count_attrs = kCountAttrs;
  p.evaluate_control = evaluate_while;
  p.control_flow = ControlFlow::conditional_loop;
  p.token_placement = while_tokens;
  p.control_jvp.fn = jvp_while;
  p.control_linearize.fn = linearize_while;
  // The jvp loop that linearize puts in the linear part.
  p.control_transpose = none<ControlTransposeRule>(
      "while_loop at {at} carries a value being differentiated; reverse-mode differentiation of "
      "a while loop is not supported (as in JAX): its trip count is known only at run time, so "
      "the values its backward pass needs cannot be stored. Use fori_loop with C++ integer "
      "bounds or scan (both reverse-differentiable), or forward mode (jvp, linearize)");
  p.control_batch.fn = batch_while;
  defs.add(std::move(p));
}

}  // namespace weft::prim
