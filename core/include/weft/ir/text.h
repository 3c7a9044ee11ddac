// The canonical text form of a graph: human-readable, free of addresses and run-dependent
// ids, and parsed back to an equal graph. It is the basis of cache keys and golden tests.
//
//   func @select_tril(%0: i32[3,4]) -> (i32[3,4]) {
//     %1 = iota[dimension=0] : i32[3,4]
//     %2 = iota[dimension=1] : i32[3,4]
//     %3 = gt %1, %2 : bool[3,4]
//     %4 = constant[value=0] : i32[]
//     %5 = broadcast_in_dim[dims=[]] %4 : i32[3,4]
//     %6 = select %3, %0, %5 : i32[3,4]
//     return %6
//   }
#pragma once

#include <string>
#include <string_view>

#include "weft/ir/graph.h"

namespace weft {

struct PrintOptions {
  bool with_origins = false;  // append "  # file.cpp:12" comments (not canonical)
};

std::string print_graph(const Graph& graph, const PrintOptions& options = {});

// Throws ParseError with line and column on malformed text, InvalidGraphError when the text
// is well-formed but the graph breaks a shape or type rule.
Graph parse_graph(std::string_view text);

}  // namespace weft
