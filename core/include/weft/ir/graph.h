// The typed IR: a function as a list of nodes in topological order.
#pragma once

#include <cstdint>
#include <source_location>
#include <string>
#include <vector>

#include "weft/dtype.h"
#include "weft/ir/attrs.h"
#include "weft/ir/op_kind.h"
#include "weft/shape.h"

namespace weft {

using ValueId = std::int32_t;  // index of a node in Graph::nodes

// Where an op came from: the user's C++ line when traced, the text line when parsed.
// Never part of the canonical text or of graph equality.
struct OpOrigin {
  std::source_location cpp{};    // valid when traced (line() != 0)
  int text_line = 0;             // valid when parsed from IR text
  std::string describe() const;  // "file.cpp:12 (fn)", "line 7", or "unknown location"
};

struct Node {
  OpKind op = OpKind::Constant;
  DType dtype = DType::F32;
  Shape shape;
  std::vector<ValueId> inputs;
  Attrs attrs;
  OpOrigin origin;

  bool same_as(const Node& other) const;  // equality without origin
};

struct Graph {
  std::string name = "main";
  std::vector<Node> nodes;       // topological: inputs precede their users
  std::vector<ValueId> params;   // params[i] is the Parameter node with index i
  std::vector<ValueId> outputs;  // may repeat and may name parameters

  ValueId add(Node node);  // appends and returns the new node's id
  const Node& node(ValueId id) const { return nodes.at(static_cast<std::size_t>(id)); }

  // Parameters first (by index), then the other nodes in their current order; the form the
  // text printer emits and the parser produces.
  Graph canonicalized() const;
  bool operator==(const Graph& other) const;  // structural, on canonical forms
};

// Checks operand counts, attribute presence and the result type of every node against the
// shape rules; throws InvalidGraphError naming the node, its op and its origin.
void verify(const Graph& graph);

// The number of users of each node (outputs count as users).
std::vector<int> count_uses(const Graph& graph);

}  // namespace weft
