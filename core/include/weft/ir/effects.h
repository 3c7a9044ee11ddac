// Effects: what host ops do besides computing values. Each effectful op carries a named
// effect, ordered or unordered (debug_print's is "debug_print"; host_call's is its `effect`
// attribute, e.g. "io_callback"; a host_call without one is pure). A function's effects are
// the union of its ops', regions included. Effectful ops are never removed as dead code; a pure
// host_call whose results are unused is.
//
// Tokens order effects. In a traced graph host ops take no tokens; thread_effect_tokens
// (weft/compile/tokens.h) adds them: each ordered effect's ops take the token the previous one
// returned, and every effectful op returns a token the function's output token waits for.
#pragma once

#include <compare>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "weft/ir/graph.h"

namespace weft {

struct Effect {
  std::string name;
  bool ordered = false;
  auto operator<=>(const Effect&) const = default;
};

// The effect of one node (host ops only; control ops' effects are their regions').
std::optional<Effect> node_effect(const Node& node);
// Every effect of the graph and its regions, sorted by name then ordered-ness, unique.
std::vector<Effect> graph_effects(const Graph& graph);
// Whether the node, or any op in its regions, has an effect.
bool has_effect(const Node& node);
// "debug_print (ordered), io_callback"; "none" when empty.
std::string describe_effects(const std::vector<Effect>& effects);

// Checks a host op or after_all against the rules in op_kind.h (token operand and result,
// attributes, debug_print's format against its arguments); throws InvalidGraphError saying
// what is wrong (verify adds where).
void check_host_op(OpKind op, std::span<const TensorType> operands, const Attrs& attrs,
                   std::span<const TensorType> results);

// The "{}" placeholders of a debug_print format ("{{" and "}}" stand for braces). Throws
// InvalidArgumentError naming the format when a brace is unmatched or a placeholder has
// contents ("{0}", "{:.3f}" are not supported).
std::size_t count_format_placeholders(const std::string& format);
// The format with each placeholder replaced by the next argument's text.
std::string apply_format(const std::string& format, const std::vector<std::string>& arguments);

}  // namespace weft
