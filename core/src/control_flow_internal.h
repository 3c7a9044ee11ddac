// Shared by the control-flow functions (control_flow_*.cpp): naming the leaves of trees in
// messages, the checks that carries and branch outputs keep their types, and tracing a
// user's function as a region.
#pragma once

#include <source_location>
#include <span>
#include <string>
#include <vector>

#include "weft/control_flow.h"
#include "weft/ir/shape_rules.h"
#include "weft/trace/trace.h"

namespace weft::detail {

// The path of every Array leaf of the tree with signature `sig` (TreeTraits::flatten), from
// `root`: "carry[1].first", "xs[\"w\"]"; "root" itself for a lone Array. Falls back to
// "root leaf K" for a signature it cannot read (a user's own TreeTraits).
std::vector<std::string> leaf_paths(const std::string& sig, const std::string& root,
                                    std::size_t num_leaves);

// A tree's structure for messages: "tuple(Array, pair(Array, Array))".
std::string describe_tree(const std::string& sig);

// "while_loop at file.cpp:12 (fn): " — how every control-flow message starts.
std::string at(const std::string& api, const std::source_location& loc);

std::vector<TensorType> types_of(std::span<const Array> arrays);

// Checks `got` (returned by `who`) against the expected tree `want_sig`/`want` (from `from`,
// e.g. "init"): TreeStructureError for another structure, ShapeError/DTypeError naming the
// first leaf whose shape/dtype differs and both types.
void check_same_tree(const std::string& api, const std::source_location& loc,
                     const std::string& root, const std::string& want_sig,
                     const std::vector<TensorType>& want, const std::string& from,
                     const std::string& got_sig, const std::vector<TensorType>& got,
                     const std::string& who, const std::string& hint);

// Traces `fn` as region `index` of `op`; `out` receives what it returned (leaves staged).
TracedRegion trace_fn(OpKind op, std::size_t index, const NamedFn& fn, const std::string& api,
                      const std::source_location& loc, std::span<const TensorType> params,
                      FlatOut& out);

// Throws InvalidArgumentError for an empty Array among `leaves` (a tree rooted at `root`).
void check_leaves_valid(const std::string& api, const std::source_location& loc,
                        const std::string& root, const std::string& sig,
                        std::span<const Array> leaves, std::size_t hidden = 0);

}  // namespace weft::detail
