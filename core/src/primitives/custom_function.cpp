#include "primitives/custom_function.h"

#include "ir/region_checks.h"
#include "primitives/custom_attrs.h"
#include "transforms/staging.h"
#include "weft/error.h"
#include "weft/trace/trace.h"

namespace weft::prim {

const CountAttr kInputsCount[1] = {{CustomFunctionAttrs::kInputs, "a count of operands"}};

template <OpKind kKind, bool kCounted>
std::vector<RegionSignature> body_signature(std::span<const TensorType> operands,
                                            const Attrs& attrs, std::span<const TensorType> results,
                                            std::size_t num_regions) {
  if constexpr (kCounted)
    region_checks::count_attr(kKind, attrs, CustomFunctionAttrs::kInputs, operands.size());
  region_checks::expect_regions(kKind, num_regions, 1);
  return {{"body", std::vector<TensorType>(operands.begin(), operands.end()),
           std::vector<TensorType>(results.begin(), results.end())}};
}
template std::vector<RegionSignature> body_signature<OpKind::CustomJvp, true>(
    std::span<const TensorType>, const Attrs&, std::span<const TensorType>, std::size_t);
template std::vector<RegionSignature> body_signature<OpKind::CustomVjp, true>(
    std::span<const TensorType>, const Attrs&, std::span<const TensorType>, std::size_t);
template std::vector<RegionSignature> body_signature<OpKind::Checkpoint, false>(
    std::span<const TensorType>, const Attrs&, std::span<const TensorType>, std::size_t);

std::vector<interp::Value> evaluate_body(const Node& node, interp::Operands operands,
                                         const interp::RunGraph& run) {
  // Its rules matter to transformations only; evaluated, it is its body.
  std::vector<interp::Value> args;
  args.reserve(operands.size());
  for (const interp::Value* v : operands) args.push_back(*v);
  return run(node.regions.at(0), std::move(args));
}

using detail::Batched;
using detail::Tangent;

const CustomRules& rules_of(const Node& n, const std::string& api) {
  if (!n.custom) {
    const std::string op(op_name(n.op));
    throw TransformError(api + ": " + op + " at " + n.origin.describe() +
                         " has no rules (a graph parsed from text cannot be transformed through "
                         "a " +
                         op + ")");
  }
  return *n.custom;
}

std::size_t inputs_of(const Node& n) {
  return static_cast<std::size_t>(CustomFunctionAttrs::read(n.attrs).inputs);
}

void check_closure(const Node& n, std::span<const Tangent> tangents, const std::string& api) {
  for (std::size_t i = inputs_of(n); i < tangents.size(); ++i)
    if (tangents[i])
      throw TransformError(api + ": the " + rules_of(n, api).describe +
                           " function closes over a value being differentiated; its rules "
                           "cannot see it. Pass it as an argument instead");
}

void check_types(const std::vector<Array>& got, std::span<const TensorType> want,
                 const std::string& what, const std::string& api) {
  if (got.size() != want.size())
    throw TransformError(api + ": " + what + " returned " + std::to_string(got.size()) +
                         " arrays; expected " + std::to_string(want.size()));
  for (std::size_t k = 0; k < got.size(); ++k)
    if (!got[k].valid() || got[k].dtype() != want[k].dtype || got[k].shape() != want[k].shape)
      throw TransformError(api + ": " + what + " returned " +
                           (got[k].valid() ? type_to_string({got[k].dtype(), got[k].shape()})
                                           : std::string("an empty Array")) +
                           " as array " + std::to_string(k) + "; expected " +
                           type_to_string(want[k]));
}

std::vector<Array> argument_tangents(std::span<const Array> primals,
                                     std::span<const Tangent> tangents,
                                     const std::source_location& loc) {
  std::vector<Array> out;
  for (std::size_t i = 0; i < primals.size(); ++i)
    out.push_back(detail::instantiate(tangents[i], {primals[i].dtype(), primals[i].shape()}, loc));
  return out;
}

detail::ControlTangents from_rule_outputs(const Node& n, std::vector<Array> outputs,
                                          std::vector<Array> tangents) {
  detail::ControlTangents r;
  r.results = std::move(outputs);
  for (std::size_t k = 0; k < n.results.size(); ++k)
    r.tangents.push_back(detail::has_tangent(n.results[k].dtype) ? Tangent(std::move(tangents[k]))
                                                                 : std::nullopt);
  return r;
}

std::vector<std::optional<int>> argument_axes(const Node& n, std::span<const Batched> operands,
                                              std::size_t inputs, const std::string& api) {
  std::vector<std::optional<int>> in_axes;
  for (std::size_t i = 0; i < operands.size(); ++i) {
    if (i >= inputs && operands[i].batched)
      throw TransformError(api + ": the " + rules_of(n, api).describe +
                           " function closes over a batched value; its rules cannot see it. "
                           "Pass it as an argument instead");
    if (i < inputs) in_axes.push_back(operands[i].batched ? std::optional<int>(0) : std::nullopt);
  }
  return in_axes;
}

std::vector<Batched> batch_custom_function(const Graph& g, const Node& n,
                                           std::span<const Batched> operands,
                                           std::int64_t batch_size,
                                           std::shared_ptr<const CustomRules> rules,
                                           const Attrs& attrs, const std::string& api,
                                           const std::source_location& loc) {
  std::vector<Array> ops;
  for (const Batched& b : operands) ops.push_back(b.value);
  // The body batched, every output with the batch axis in front.
  const Graph body = detail::region_of(g, n, 0);
  detail::TracedRegion batched_body = detail::trace_region(
      detail::transformed_region(n, 0, api, loc), detail::value_types(ops),
      [&](const std::vector<Array>& params) {
        std::vector<Batched> in;
        for (std::size_t i = 0; i < params.size(); ++i)
          in.push_back({params[i], operands[i].batched});
        std::vector<Array> out;
        for (const Batched& b : detail::vmap_graph(body, in, batch_size, loc))
          out.push_back(b.batched ? b.value : detail::with_batch_axis(b.value, batch_size, loc));
        return out;
      });
  std::vector<TensorType> results;
  for (TensorType t : n.results) {
    t.shape.insert(t.shape.begin(), batch_size);
    results.push_back(std::move(t));
  }
  std::vector<Graph> regions;
  regions.push_back(std::move(batched_body.graph));
  std::vector<Array> all_ops = ops;
  all_ops.insert(all_ops.end(), batched_body.captured.begin(), batched_body.captured.end());
  const std::vector<Array> out = detail::stage_custom_op(n.op, all_ops, attrs, std::move(regions),
                                                         results, std::move(rules), api, loc);
  std::vector<Batched> batched;
  for (const Array& a : out) batched.push_back({a, true});
  return batched;
}

}  // namespace weft::prim
