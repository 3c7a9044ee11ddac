// libFuzzer target for the IR text parser: any input must either parse or throw a weft::Error,
// and whatever parses must print, parse back to an equal graph and print identically.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "weft/error.h"
#include "weft/ir/graph.h"
#include "weft/ir/text.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  weft::Graph graph;
  try {
    graph = weft::parse_graph(text);
  } catch (const weft::Error&) {
    return 0;  // rejecting malformed text is the expected outcome for most inputs
  }
  const std::string printed = weft::print_graph(graph);
  weft::Graph reparsed;
  try {
    reparsed = weft::parse_graph(printed);
  } catch (const weft::Error&) {
    __builtin_trap();  // the printer wrote something the parser refuses
  }
  if (!(reparsed == graph) || weft::print_graph(reparsed) != printed) __builtin_trap();
  return 0;
}
