// Forward mode over a traced graph: every node's primal op and its tangent rule, staged into
// the current context. jvp uses it directly; linearize uses it with the primal ops staged one
// trace further out, so that the innermost trace holds only the tangent (linear) part.
#pragma once

#include <source_location>
#include <span>
#include <string>
#include <vector>

#include "transforms/jvp_rules.h"
#include "weft/ir/graph.h"

namespace weft::detail {

struct JvpValues {
  std::vector<Array> primals;
  std::vector<Tangent> tangents;
};

enum class PrimalPlacement {
  here,             // primal ops go where the tangent ops go (jvp)
  enclosing_trace,  // primal ops go to the trace enclosing the current one (linearize)
};

// `primals` and `tangents` bind g's parameters in order (a nullopt tangent is zero). `api`
// names the transformation in errors ("jvp", "grad").
JvpValues jvp_graph(const Graph& g, std::span<const Array> primals,
                    std::span<const Tangent> tangents, PrimalPlacement placement,
                    const std::string& api, const std::source_location& loc);

// "hcb.call at demo.cpp:12 (main)": the callback a host node runs, for messages.
std::string describe_host_node(const Graph& g, const Node& n);

}  // namespace weft::detail
