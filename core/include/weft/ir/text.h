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
//
// Control ops (while, cond, scan) name their results on the left and write their regions in a
// block, each like a function header without `func @` (docs/ir-text.md has the grammar):
//
//     %3, %4 = while[carries=2] %1, %2, %0 : f32[], i32[] {
//       cond(%5: f32[], %6: i32[], %7: f32[4]) -> (bool[]) { ... return %9 }
//       body(%10: f32[], %11: i32[], %12: f32[4]) -> (f32[], i32[]) { ... return %14, %16 }
//     }
//
// A control op without results has no left side (`cond %0, %1 : { ... }`). The printer
// numbers values with one counter over the whole text (results, then the regions, then what
// follows), so no name repeats. The Result nodes after a control node are never written, and a
// region's Graph::name is not printed: the parser names each region by region_name().
#pragma once

#include <string>
#include <string_view>

#include "weft/ir/graph.h"

namespace weft {

struct PrintOptions {
  bool with_origins = false;  // append "  # file.cpp:12" comments (not canonical)
};

std::string print_graph(const Graph& graph, const PrintOptions& options = {});

// Throws ParseError with line and column on malformed text (including a value used in a
// region it is not defined in, region names or counts that do not fit the op, and regions
// nested deeper than 64 levels), InvalidGraphError prefixed with "line L: " when the text is
// well-formed but the graph breaks a shape, type or region-signature rule; L is the line of
// the offending statement, nested ones included.
Graph parse_graph(std::string_view text);

}  // namespace weft
