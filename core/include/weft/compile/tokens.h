// Compiler tokens: threading effect order through a traced graph. In a traced graph host ops
// take no tokens; this pass makes the order explicit, so that the schedule, which orders steps
// by data only, keeps it:
//
//  * each ordered effect E is a token stream: E's ops take the stream's token and return the
//    next one, in program order;
//  * unordered effectful ops take no token but return one, joined (after_all) into a "done"
//    stream, so the function's output token waits for them too;
//  * control ops whose regions have effects carry the streams they need: extra carries of a
//    while or scan (after the user's carries), extra operands and results of a cond (after the
//    user's). A while whose condition has effects is rewritten as JAX does: the predicate
//    becomes a carry computed once before the loop and again at the end of each iteration, so
//    the condition runs once more than the body;
//  * the function takes one runtime token per ordered effect (after its own parameters), and
//    returns each stream's last token (after its own outputs), then the output token.
//
// A graph without effects is returned unchanged. The result is what compilers see; its text is
// the lowered form that shows the threading.
#pragma once

#include <string>
#include <vector>

#include "weft/ir/graph.h"

namespace weft {

struct TokenSignature {
  // One runtime token parameter and one output per ordered effect, in this order.
  std::vector<std::string> ordered_effects;
  bool output_token = false;  // the last output: ready once every effect of the run has run
  std::size_t params = 0;     // the traced graph's parameters, which come first
  std::size_t outputs = 0;    // the traced graph's outputs, which come first
};

struct ThreadedGraph {
  Graph graph;
  TokenSignature tokens;
};

// Threads tokens through `traced` (which must verify and have no tokens yet); throws
// InvalidGraphError otherwise.
ThreadedGraph thread_effect_tokens(const Graph& traced);

// Whether any value of the graph or its regions is a token.
bool has_tokens(const Graph& graph);

// Whether every effectful host op takes (ordered) or returns (unordered) its token, as
// thread_effect_tokens leaves them: what compilers require of a graph with effects.
bool effects_are_threaded(const Graph& graph);

}  // namespace weft
