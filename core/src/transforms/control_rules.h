// The rules of the control-flow primitives (while, cond, scan) under each transformation. Each
// builds a new control op whose regions are the transformed regions of the original one, traced
// with trace_region, so nested control flow, effects inside regions and composition with jit
// work as for any other op.
//
//   jvp        while, cond, scan: carries and operands gain tangents (loop carries that get one
//              are found by a fixpoint over the body).
//   linearize  cond, scan: a primal op (staged one trace out) that also returns the residuals
//              its regions' linear parts need (per-iteration residuals stacked by scan), and a
//              linear op over the tangents and those residuals (staged here). while: the primal
//              loop, and the whole jvp loop as the linear part (as JAX's partial evaluation).
//   transpose  the linear cond and scan that linearize makes: a cond of transposed branches, and
//              a scan run the other way with the constants' cotangents accumulated as carries.
//              while: refused, as in JAX (its trip count is known only at run time).
//   custom_jvp, custom_vjp, checkpoint, custom_lin and the pmap collectives: their own rules,
//              in their definitions under core/src/primitives/.
//   batching   cond (an unbatched index batches the branches; a batched one runs every branch
//              and selects), while (a batched predicate runs until every example is done and
//              freezes the finished ones), scan (xs and ys keep their batch axis in front).
#pragma once

#include <source_location>
#include <span>
#include <string>
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
