// What the rules of custom_jvp, custom_vjp, checkpoint and custom_lin share: the rules a node
// carries (Node::custom), the checks of what a user's rule returns, and batching a custom
// function's body.
#pragma once

#include <memory>
#include <source_location>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "primitives/primitive.h"
#include "transforms/batching_rules.h"
#include "transforms/control_rules.h"
#include "transforms/custom_rules.h"
#include "transforms/jvp_rules.h"
#include "weft/ir/graph.h"

namespace weft::prim {

// custom_jvp, custom_vjp, checkpoint: a value being differentiated reaches one in the linear
// part of a computation (their linear parts are other ops).
inline constexpr std::string_view kCustomFunctionHasNoTranspose =
    "it is applied to a value being differentiated in the linear part of the computation and "
    "has no transpose";

// The first `count` of `values` (the function's arguments among a node's operands).
inline std::vector<Array> leading(std::span<const Array> values, std::size_t count) {
  return std::vector<Array>(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(count));
}

// custom_jvp, custom_vjp, checkpoint own one region, body(operands) -> results, and evaluated
// they are that body. `counted` also checks the "inputs" attribute (custom_jvp, custom_vjp).
template <OpKind kKind, bool kCounted>
std::vector<RegionSignature> body_signature(std::span<const TensorType> operands,
                                            const Attrs& attrs, std::span<const TensorType> results,
                                            std::size_t num_regions);
std::vector<interp::Value> evaluate_body(const Node& node, interp::Operands operands,
                                         const interp::RunGraph& run);
// The "inputs" count attribute of custom_jvp and custom_vjp.
extern const CountAttr kInputsCount[1];

// The rules `n` carries; a node without (parsed from text) cannot be transformed.
const CustomRules& rules_of(const Node& n, const std::string& api);

// custom_jvp, custom_vjp: how many leading operands are the function's arguments.
std::size_t inputs_of(const Node& n);

// A value the function closes over must not be differentiated: its rules do not see it.
void check_closure(const Node& n, std::span<const detail::Tangent> tangents,
                   const std::string& api);

// Refuses arrays from a user's rule (`what`) that differ from `want` in number or type.
void check_types(const std::vector<Array>& got, std::span<const TensorType> want,
                 const std::string& what, const std::string& api);

// The rule's tangents: one per argument, zeros where none.
std::vector<Array> argument_tangents(std::span<const Array> primals,
                                     std::span<const detail::Tangent> tangents,
                                     const std::source_location& loc);

// The node's results and their tangents (none for results of a dtype without one).
detail::ControlTangents from_rule_outputs(const Node& n, std::vector<Array> outputs,
                                          std::vector<Array> tangents);

// The batch axes (0 or none) of the function's `inputs` arguments; refuses a batched value it
// closes over.
std::vector<std::optional<int>> argument_axes(const Node& n,
                                              std::span<const detail::Batched> operands,
                                              std::size_t inputs, const std::string& api);

// Stages `n` again with its body batched (every output with the batch axis in front), `rules`
// and `attrs`: what vmap makes of custom_jvp, custom_vjp and checkpoint.
std::vector<detail::Batched> batch_custom_function(const Graph& g, const Node& n,
                                                   std::span<const detail::Batched> operands,
                                                   std::int64_t batch_size,
                                                   std::shared_ptr<const CustomRules> rules,
                                                   const Attrs& attrs, const std::string& api,
                                                   const std::source_location& loc);

}  // namespace weft::prim
