#include "weft/ir/graph.h"

#include <string>

#include "weft/error.h"
#include "weft/ir/effects.h"
#include "weft/ir/op_attrs.h"
#include "weft/ir/regions.h"
#include "weft/ir/shape_rules.h"
#include "weft/ir/walk.h"

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
         attrs == other.attrs && results == other.results && regions == other.regions;
}

ValueId Graph::add(Node node) {
  nodes.push_back(std::move(node));
  return static_cast<ValueId>(nodes.size() - 1);
}

ValueId Graph::add_control(Node node) {
  const std::vector<TensorType> results = node.results;
  const OpOrigin origin = node.origin;
  const ValueId control = add(std::move(node));
  for (std::size_t k = 0; k < results.size(); ++k) {
    Node r;
    r.op = OpKind::Result;
    r.dtype = results[k].dtype;
    r.shape = results[k].shape;
    r.inputs = {control};
    r.attrs = IndexAttrs{static_cast<std::int64_t>(k)}.write();
    r.origin = origin;
    add(std::move(r));
  }
  return control + 1;
}

namespace {

// Parameters first (by index), then the other nodes in order; regions untouched.
Graph canonicalize_flat(Graph graph) {
  Graph out;
  out.name = std::move(graph.name);
  out.nodes.reserve(graph.nodes.size());
  std::vector<ValueId> remap(graph.nodes.size(), -1);
  for (ValueId p : graph.params) {
    remap[p] = static_cast<ValueId>(out.nodes.size());
    out.nodes.push_back(std::move(graph.nodes[p]));
  }
  for (std::size_t i = 0; i < graph.nodes.size(); ++i) {
    if (remap[i] >= 0) continue;
    remap[i] = static_cast<ValueId>(out.nodes.size());
    Node& n = graph.nodes[i];
    for (auto& in : n.inputs) in = remap.at(in);
    out.nodes.push_back(std::move(n));
  }
  for (std::size_t i = 0; i < graph.params.size(); ++i)
    out.params.push_back(static_cast<ValueId>(i));
  for (ValueId o : graph.outputs) out.outputs.push_back(remap.at(o));
  return out;
}

bool is_canonical(const Graph& g) {
  for (std::size_t i = 0; i < g.params.size(); ++i)
    if (g.params[i] != static_cast<ValueId>(i)) return false;
  for (std::size_t i = g.params.size(); i < g.nodes.size(); ++i)
    if (g.nodes[i].op == OpKind::Parameter) return false;
  for (const Node& n : g.nodes)
    for (const Graph& r : n.regions)
      if (!is_canonical(r)) return false;
  return true;
}

bool same_canonical(const Graph& a, const Graph& b) {
  if (a.name != b.name || a.nodes.size() != b.nodes.size() || a.params != b.params ||
      a.outputs != b.outputs)
    return false;
  for (std::size_t i = 0; i < a.nodes.size(); ++i)
    if (!a.nodes[i].same_as(b.nodes[i])) return false;
  return true;
}

}  // namespace

Graph Graph::canonicalized() const {
  return rewrite_graphs(*this, canonicalize_flat);
}

bool Graph::operator==(const Graph& other) const {
  // Traced and parsed graphs are already canonical; copy only when one is not.
  if (is_canonical(*this) && is_canonical(other)) return same_canonical(*this, other);
  return same_canonical(canonicalized(), other.canonicalized());
}

void reject_transformation_only_ops(const Graph& graph, const std::string& pass) {
  for (const Node& n : graph.nodes) {
    if (is_transformation_only(n.op))
      throw InvalidGraphError(pass + ": " + std::string(op_name(n.op)) + " at " +
                              n.origin.describe() +
                              " cannot be compiled: it exists only while a transformation traces "
                              "a function; call the function, or transform it");
    for (const Graph& region : n.regions) reject_transformation_only_ops(region, pass);
  }
}

std::vector<int> count_uses(const Graph& graph) {
  std::vector<int> uses(graph.nodes.size(), 0);
  for (const auto& n : graph.nodes)
    for (ValueId in : n.inputs) ++uses.at(in);
  for (ValueId o : graph.outputs) ++uses.at(o);
  return uses;
}

namespace {

std::string types_to_string(const std::vector<TensorType>& types) {
  std::string s = "(";
  for (std::size_t i = 0; i < types.size(); ++i) s += (i ? ", " : "") + type_to_string(types[i]);
  return s + ")";
}

// `context` names the regions the graph sits in, outermost first ("in region body of node
// %4 (while, at line 3): "), so a failure deep inside says how to get there.
void verify_graph(const Graph& graph, const std::string& context) {
  auto where = [&](std::size_t i) {
    const Node& n = graph.nodes[i];
    return context + "node %" + std::to_string(i) + " (" + std::string(op_name(n.op)) + ", at " +
           n.origin.describe() + ")";
  };
  const std::size_t count = graph.nodes.size();
  std::vector<bool> is_param(count, false);
  for (std::size_t i = 0; i < graph.params.size(); ++i) {
    ValueId p = graph.params[i];
    if (p < 0 || static_cast<std::size_t>(p) >= count || graph.nodes[p].op != OpKind::Parameter)
      throw InvalidGraphError(context + "parameter " + std::to_string(i) +
                              " does not name a param node");
    if (IndexAttrs::read(graph.nodes[p].attrs).index != static_cast<std::int64_t>(i))
      throw InvalidGraphError(where(p) + ": index attribute does not match its position " +
                              std::to_string(i));
    is_param[p] = true;
  }
  for (std::size_t i = 0; i < count; ++i) {
    const Node& n = graph.nodes[i];
    if (n.op == OpKind::Parameter && !is_param[i])
      throw InvalidGraphError(where(i) + ": a param node that is not listed among the parameters");
    std::vector<TensorType> operands;
    for (ValueId in : n.inputs) {
      if (in < 0 || static_cast<std::size_t>(in) >= i)
        throw InvalidGraphError(where(i) + ": operand %" + std::to_string(in) +
                                " is not defined before its use");
      const Node& producer = graph.nodes[in];
      if (is_multi_result(producer.op) && n.op != OpKind::Result)
        throw InvalidGraphError(where(i) + ": operand %" + std::to_string(in) + " is a " +
                                std::string(op_name(producer.op)) +
                                " node, which has several results; use one of its results");
      operands.push_back(producer.type());
    }
    // Tokens only order effects: they hold no data, so no computation reads or makes one.
    const bool passes_tokens = n.op == OpKind::Parameter || n.op == OpKind::Result ||
                               is_multi_result(n.op) || n.op == OpKind::AfterAll;
    if (!passes_tokens) {
      bool token = n.dtype == DType::Token;
      for (const TensorType& t : operands) token |= t.dtype == DType::Token;
      if (token)
        throw InvalidGraphError(where(i) + ": " + std::string(op_name(n.op)) +
                                " cannot take or make a token; tokens pass only between host "
                                "ops, after_all, control ops and the function's boundary");
    }
    if (n.dtype == DType::Token && !n.shape.empty())
      throw InvalidGraphError(where(i) + ": a token has the shape [], not " +
                              shape_to_string(n.shape));
    if (n.op == OpKind::Result) {
      // Result k of control node c sits at c + 1 + k: results follow their node at once.
      const ValueId c = n.inputs.size() == 1 ? n.inputs[0] : -1;
      if (c < 0 || !is_multi_result(graph.nodes[c].op))
        throw InvalidGraphError(where(i) +
                                ": takes exactly one operand, a control or host op node");
      const Node& control = graph.nodes[c];
      const std::int64_t k = IndexAttrs::read(n.attrs).index;
      if (k < 0 || static_cast<std::size_t>(k) >= control.results.size() ||
          static_cast<std::size_t>(c + 1 + k) != i)
        throw InvalidGraphError(where(i) + ": result index " + std::to_string(k) +
                                " is not the next result of %" + std::to_string(c) + " (it has " +
                                std::to_string(control.results.size()) + ")");
      if (n.type() != control.results[k])
        throw InvalidGraphError(where(i) + ": declared type " + type_to_string(n.type()) +
                                " but result " + std::to_string(k) + " of %" + std::to_string(c) +
                                " is " + type_to_string(control.results[k]));
      continue;
    }
    if (is_multi_result(n.op)) {
      for (std::size_t k = 0; k < n.results.size(); ++k) {
        const std::size_t r = i + 1 + k;
        if (r >= count || graph.nodes[r].op != OpKind::Result ||
            graph.nodes[r].inputs.size() != 1 ||
            graph.nodes[r].inputs[0] != static_cast<ValueId>(i))
          throw InvalidGraphError(where(i) + ": result " + std::to_string(k) +
                                  " is not read by a result node right after it");
        if (n.results[k].dtype == DType::Token && !n.results[k].shape.empty())
          throw InvalidGraphError(where(i) + ": result " + std::to_string(k) +
                                  " is a token, whose shape is [], not " +
                                  shape_to_string(n.results[k].shape));
      }
    }
    if (is_host_op(n.op)) {
      if (!n.regions.empty()) throw InvalidGraphError(where(i) + ": a host op owns no regions");
      try {
        check_host_op(n.op, operands, n.attrs, n.results);
      } catch (const Error& e) {
        throw InvalidGraphError(where(i) + ": " + e.what());
      }
      continue;
    }
    if (is_control(n.op)) {
      std::vector<RegionSignature> signatures;
      try {
        signatures = region_signatures(n.op, operands, n.attrs, n.results, n.regions.size());
      } catch (const Error& e) {
        throw InvalidGraphError(where(i) + ": " + e.what());
      }
      for (std::size_t k = 0; k < signatures.size(); ++k) {
        const Graph& region = n.regions[k];
        const RegionSignature& sig = signatures[k];
        const std::string inner = where(i) + ", region " + sig.name + ": ";
        std::vector<TensorType> params, results;
        for (ValueId p : region.params)
          params.push_back(p >= 0 && static_cast<std::size_t>(p) < region.nodes.size()
                               ? region.nodes[p].type()
                               : TensorType{});
        for (ValueId o : region.outputs)
          results.push_back(o >= 0 && static_cast<std::size_t>(o) < region.nodes.size()
                                ? region.nodes[o].type()
                                : TensorType{});
        if (params != sig.params)
          throw InvalidGraphError(inner + "takes " + types_to_string(params) + " but must take " +
                                  types_to_string(sig.params));
        if (results != sig.results)
          throw InvalidGraphError(inner + "returns " + types_to_string(results) +
                                  " but must return " + types_to_string(sig.results));
        verify_graph(region, context + "in region " + sig.name + " of node %" + std::to_string(i) +
                                 " (" + std::string(op_name(n.op)) + ", at " + n.origin.describe() +
                                 "): ");
      }
      continue;
    }
    if (!n.regions.empty() || !n.results.empty())
      throw InvalidGraphError(where(i) +
                              ": only control and host ops own regions or several results");
    TensorType result;
    try {
      result = infer_type(n.op, operands, n.attrs, n.type());
    } catch (const Error& e) {
      throw InvalidGraphError(where(i) + ": " + e.what());
    }
    if (result != n.type())
      throw InvalidGraphError(where(i) + ": declared type " + type_to_string(n.type()) +
                              " but the operands give " + type_to_string(result));
  }
  for (ValueId o : graph.outputs) {
    if (o < 0 || static_cast<std::size_t>(o) >= count)
      throw InvalidGraphError(context + "output %" + std::to_string(o) +
                              " is not a node of the graph");
    if (is_multi_result(graph.nodes[o].op))
      throw InvalidGraphError(context + "output %" + std::to_string(o) + " is a " +
                              std::string(op_name(graph.nodes[o].op)) +
                              " node; return one of its results");
  }
}

}  // namespace

void verify(const Graph& graph) {
  verify_graph(graph, "");
}

}  // namespace weft
