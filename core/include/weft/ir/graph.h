// The typed IR: a function as a list of nodes in topological order.
//
// Control flow nests: a control node (while, cond, scan) owns regions, each a Graph of its
// own with parameters and outputs. Regions are isolated from above: they see only their
// parameters, so a value an inner function closes over is an explicit operand of the node
// and a parameter of the region (the tracer does this closure conversion).
//
// A control node has several results. It is not itself a value: it is followed at once by
// one Result node per result (index 0, 1, ...), and every use goes through those. Values are
// therefore always single-result nodes, and passes that do not care about control flow see
// Result nodes as opaque leaves.
#pragma once

#include <cstdint>
#include <memory>
#include <source_location>
#include <string>
#include <vector>

#include "weft/dtype.h"
#include "weft/ir/attrs.h"
#include "weft/ir/op_kind.h"
#include "weft/ir/shape_rules.h"
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

struct Graph;
struct HostCallback;  // weft/ir/host_callback.h
struct CustomRules;   // a custom op's rules (core/src/transforms/custom_rules.h)

struct Node {
  OpKind op = OpKind::Constant;
  DType dtype = DType::F32;  // the result type; unused by control nodes (see results)
  Shape shape;
  std::vector<ValueId> inputs;
  Attrs attrs;
  OpOrigin origin;
  std::vector<Graph> regions;       // control nodes only: sub-functions (see regions.h)
  std::vector<TensorType> results;  // control nodes only: the types of the Result nodes
  // custom_jvp, custom_vjp, checkpoint, custom_lin only: its transformation rules. Never
  // printed or compared.
  std::shared_ptr<const CustomRules> custom;

  TensorType type() const { return {dtype, shape}; }
  bool same_as(const Node& other) const;  // equality without origin (regions included)
};

struct Graph {
  std::string name = "main";
  std::vector<Node> nodes;       // topological: inputs precede their users
  std::vector<ValueId> params;   // params[i] is the Parameter node with index i
  std::vector<ValueId> outputs;  // may repeat and may name parameters
  // The host functions host_call nodes name by slot (attrs.callback), in the function's graph
  // only (regions use its slots). Never printed or compared: the text form and cache keys see
  // slot numbers, never addresses. Passes keep the table.
  std::vector<std::shared_ptr<const HostCallback>> callbacks;

  ValueId add(Node node);  // appends and returns the new node's id
  // Appends a multi-result node (control or host op) and its Result nodes; returns the id of
  // the first result (result k is that id + k).
  ValueId add_control(Node node);
  const Node& node(ValueId id) const { return nodes.at(static_cast<std::size_t>(id)); }

  // Parameters first (by index), then the other nodes in their current order; the form the
  // text printer emits and the parser produces.
  Graph canonicalized() const;
  bool operator==(const Graph& other) const;  // structural, on canonical forms
};

// Checks operand counts, attribute presence and the result type of every node against the
// shape rules, every region against its signature (recursively) and every host op against
// effects.h's rules; throws InvalidGraphError naming the node, its op, its origin and the
// regions it sits in. Callback slots are checked where callbacks run, not here (a parsed
// graph has no callbacks).
void verify(const Graph& graph);

// Throws InvalidGraphError naming `pass` when `graph` or a region of it holds an op that exists
// only while a transformation traces a function (is_transformation_only): it cannot be compiled.
void reject_transformation_only_ops(const Graph& graph, const std::string& pass);

// The number of users of each node of this graph, not of its regions (outputs count as
// users).
std::vector<int> count_uses(const Graph& graph);

}  // namespace weft
