#include "weft/ir/graph.h"

#include <string>

#include "weft/error.h"
#include "weft/ir/shape_rules.h"

namespace weft {

std::string OpOrigin::describe() const {
  if (cpp.line() != 0) {
    std::string file = cpp.file_name();
    std::string s = file + ":" + std::to_string(cpp.line());
    if (cpp.function_name() && *cpp.function_name())
      s += " (" + std::string(cpp.function_name()) + ")";
    return s;
  }
  if (text_line > 0) return "line " + std::to_string(text_line);
  return "unknown location";
}

bool Node::same_as(const Node& other) const {
  return op == other.op && dtype == other.dtype && shape == other.shape && inputs == other.inputs &&
         attrs == other.attrs;
}

ValueId Graph::add(Node node) {
  nodes.push_back(std::move(node));
  return static_cast<ValueId>(nodes.size() - 1);
}

Graph Graph::canonicalized() const {
  Graph out;
  out.name = name;
  std::vector<ValueId> remap(nodes.size(), -1);
  for (ValueId p : params) {
    remap[p] = static_cast<ValueId>(out.nodes.size());
    out.nodes.push_back(node(p));
  }
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    if (nodes[i].op == OpKind::Parameter) continue;
    remap[i] = static_cast<ValueId>(out.nodes.size());
    Node n = nodes[i];
    for (auto& in : n.inputs) in = remap.at(in);
    out.nodes.push_back(std::move(n));
  }
  for (std::size_t i = 0; i < params.size(); ++i) out.params.push_back(static_cast<ValueId>(i));
  for (ValueId o : outputs) out.outputs.push_back(remap.at(o));
  return out;
}

bool Graph::operator==(const Graph& other) const {
  Graph a = canonicalized();
  Graph b = other.canonicalized();
  if (a.name != b.name || a.nodes.size() != b.nodes.size() || a.params != b.params ||
      a.outputs != b.outputs)
    return false;
  for (std::size_t i = 0; i < a.nodes.size(); ++i)
    if (!a.nodes[i].same_as(b.nodes[i])) return false;
  return true;
}

std::vector<int> count_uses(const Graph& graph) {
  std::vector<int> uses(graph.nodes.size(), 0);
  for (const auto& n : graph.nodes)
    for (ValueId in : n.inputs) ++uses.at(in);
  for (ValueId o : graph.outputs) ++uses.at(o);
  return uses;
}

void verify(const Graph& graph) {
  auto where = [&](std::size_t i) {
    const Node& n = graph.nodes[i];
    return "node %" + std::to_string(i) + " (" + std::string(op_name(n.op)) + ", at " +
           n.origin.describe() + ")";
  };
  std::vector<bool> is_param(graph.nodes.size(), false);
  for (std::size_t i = 0; i < graph.params.size(); ++i) {
    ValueId p = graph.params[i];
    if (p < 0 || static_cast<std::size_t>(p) >= graph.nodes.size() ||
        graph.nodes[p].op != OpKind::Parameter)
      throw InvalidGraphError("parameter " + std::to_string(i) + " does not name a param node");
    if (graph.nodes[p].attrs.get_int("index") != static_cast<std::int64_t>(i))
      throw InvalidGraphError(where(p) + ": index attribute does not match its position " +
                              std::to_string(i));
    is_param[p] = true;
  }
  for (std::size_t i = 0; i < graph.nodes.size(); ++i) {
    const Node& n = graph.nodes[i];
    if (n.op == OpKind::Parameter && !is_param[i])
      throw InvalidGraphError(where(i) + ": a param node that is not listed among the parameters");
    std::vector<TensorType> operands;
    for (ValueId in : n.inputs) {
      if (in < 0 || static_cast<std::size_t>(in) >= i)
        throw InvalidGraphError(where(i) + ": operand %" + std::to_string(in) +
                                " is not defined before its use");
      operands.push_back({graph.nodes[in].dtype, graph.nodes[in].shape});
    }
    TensorType result;
    try {
      result = infer_type(n.op, operands, n.attrs, {n.dtype, n.shape});
    } catch (const Error& e) {
      throw InvalidGraphError(where(i) + ": " + e.what());
    }
    if (result.dtype != n.dtype || result.shape != n.shape)
      throw InvalidGraphError(where(i) + ": declared type " + type_to_string({n.dtype, n.shape}) +
                              " but the operands give " + type_to_string(result));
  }
  for (ValueId o : graph.outputs)
    if (o < 0 || static_cast<std::size_t>(o) >= graph.nodes.size())
      throw InvalidGraphError("output %" + std::to_string(o) + " is not a node of the graph");
}

}  // namespace weft
