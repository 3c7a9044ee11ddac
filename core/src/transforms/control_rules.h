// The rules of the control primitives under each transformation: the dispatchers below find
// each op's rule in its definition (core/src/primitives/while.cpp, cond.cpp, scan/), and the
// helpers they share. Each rule builds a new control op whose regions are the transformed
// regions of the original one, traced with trace_region, so nested control flow, effects inside
// regions and composition with jit work as for any other op.
//
//   jvp        the same op over (primal, tangent) pairs; carries and operands gain tangents
//              (loop carries that get one are found by a fixpoint over the body).
//   linearize  a primal op (staged one trace out) that also returns the residuals its regions'
//              linear parts need, and a linear op over the tangents and those residuals (staged
//              here).
//   transpose  the linear op that linearize makes, transposed.
//   batching   the op applied to operands of which some carry a leading batch axis.
//   custom_jvp, custom_vjp, checkpoint, custom_lin and the pmap collectives have their own
//   rules, in their definitions too.
#pragma once

#include <source_location>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "transforms/batching_rules.h"
#include "transforms/jvp_rules.h"
#include "weft/ir/graph.h"
#include "weft/trace/trace.h"

namespace weft::detail {

// Shared by the rules (control_support.cpp).
std::vector<TensorType> value_types(std::span<const Array> values);
// A tangent made concrete: itself, or zeros of `type`.
Array instantiate(const Tangent& t, const TensorType& type, const std::source_location& loc);
// How region k of `n` is named in a transformed op: "body (jvp of while at demo.cpp:12)".
RegionInfo transformed_region(const Node& n, std::size_t k, const std::string& api,
                              const std::source_location& loc);
// Which tangents are there (not symbolic zeros).
std::vector<bool> present(std::span<const Tangent> tangents);
// The regions' graphs, moved out.
std::vector<Graph> graphs_of(std::vector<TracedRegion>& regions);
// Picks the entries of `values` whose flag is set.
template <typename T>
std::vector<T> pick(std::span<const T> values, const std::vector<bool>& flags) {
  std::vector<T> out;
  for (std::size_t i = 0; i < values.size(); ++i)
    if (flags[i]) out.push_back(values[i]);
  return out;
}

// A definition's refusal (its "none" rule) as users get it: "{at}" in it stands for where the op
// was traced; a refusal without one gets the op and where in parentheses after it.
[[noreturn]] void refuse(std::string_view refusal, const Node& n, const std::string& api);

// Forward mode: appends, for each flagged entry, its tangent made concrete.
void append_tangents(std::vector<Array>& out, std::span<const Tangent> tangents,
                     std::span<const Array> primals, const std::vector<bool>& flags,
                     const std::source_location& loc);
// Splits a region's parameters laid out as groups [primals of group 0, their tangents, primals
// of group 1, their tangents, ...] into primals and (optional) tangents in primal order.
struct Split {
  std::vector<Array> primals;
  std::vector<Tangent> tangents;
};
Split split_groups(const std::vector<Array>& params, std::span<const std::vector<bool>> groups);

// Linearize: the tangents that are there, and how many flags are set.
std::vector<Array> present_values(std::span<const Tangent> tangents);
std::size_t count_set(const std::vector<bool>& flags);

// Transpose: the type of operand `operand` of `n`.
TensorType operand_type(const Graph& g, const Node& n, std::size_t operand);

// Batching.
// The value with its batch axis in front (added where it had none).
Array forced(const Batched& b, std::int64_t batch_size, const std::source_location& loc);
std::vector<bool> batched_flags(std::span<const Batched> values);
TensorType with_batch(TensorType t, std::int64_t batch_size, std::size_t at = 0);
// A region's outputs with the batch axis where `want` says (an output batched elsewhere would be
// a dependence the analysis missed).
std::vector<Array> with_batching(const std::vector<Batched>& out, const std::vector<bool>& want,
                                 std::int64_t batch_size, const Node& n, const std::string& api,
                                 const std::source_location& loc);
std::vector<Batched> as_batched(std::span<const Array> values, const std::vector<bool>& flags);
bool has_ordered_effect(const Graph& g);
// `mask` ([B] bool) broadcast to `like`'s shape along its leading axis.
Array per_example(const Array& mask, const Array& like, const std::source_location& loc);

struct ControlTangents {
  std::vector<Array> results;
  std::vector<Tangent> tangents;  // one per result
};

// Forward mode, everything staged in the current context.
ControlTangents jvp_control(const Graph& g, const Node& n, std::span<const Array> operands,
                            std::span<const Tangent> tangents, const std::string& api,
                            const std::source_location& loc);

// Forward mode for linearize: primal op in the enclosing trace, linear op in the current one.
ControlTangents linearize_control(const Graph& g, const Node& n, std::span<const Array> operands,
                                  std::span<const Tangent> tangents, const std::string& api,
                                  const std::source_location& loc);

// Cotangents of the operands marked `linear` (nullopt for the others, and for zero ones) from
// those of the results. `operands` holds the values of the non-linear operands.
std::vector<Tangent> transpose_control(const Graph& g, const Node& n,
                                       std::span<const Tangent> result_cotangents,
                                       std::span<const std::optional<Array>> operands,
                                       const std::vector<bool>& linear, const std::string& api,
                                       const std::source_location& loc);

// The op applied to operands of which some carry a leading batch axis.
std::vector<Batched> batch_control(const Graph& g, const Node& n, std::span<const Batched> operands,
                                   std::int64_t batch_size, const std::string& api,
                                   const std::source_location& loc);

}  // namespace weft::detail
