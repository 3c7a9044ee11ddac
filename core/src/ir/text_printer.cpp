// Printing graphs in the canonical text form.
#include "ir/text_syntax.h"
#include "weft/ir/effects.h"
#include "weft/ir/op_attrs.h"
#include "weft/ir/regions.h"
#include "weft/ir/text.h"

namespace weft {
namespace {

using namespace text_syntax;

// ---------------------------------------------------------------------------------------------
// Printing.

bool is_bare_name(std::string_view s) {
  if (s.empty() || !is_ident_start(s[0])) return false;
  return std::all_of(s.begin() + 1, s.end(), is_ident_char);
}

std::string quoted(std::string_view text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

std::string format_name(std::string_view name) {
  return is_bare_name(name) ? std::string(name) : quoted(name);
}

std::string format_double(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v < 0 ? "-inf" : "inf";
  char buf[64];
  auto result = std::to_chars(buf, buf + sizeof buf, v);
  std::string s(buf, result.ptr);
  // A float must never read back as an integer attribute.
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  return s;
}

std::string format_attr_value(const AttrValue& value) {
  if (const auto* i = std::get_if<std::int64_t>(&value)) return std::to_string(*i);
  if (const auto* d = std::get_if<double>(&value)) return format_double(*d);
  if (const auto* text = std::get_if<std::string>(&value)) return quoted(*text);
  const auto& list = std::get<std::vector<std::int64_t>>(value);
  std::string s = "[";
  for (std::size_t i = 0; i < list.size(); ++i) {
    if (i) s += ",";
    s += std::to_string(list[i]);
  }
  return s + "]";
}

std::string format_type(const Node& n) {
  return type_to_string({n.dtype, n.shape});
}

bool has_known_origin(const OpOrigin& origin) {
  return origin.cpp.line() != 0 || origin.text_line > 0;
}

std::string format_types(const std::vector<TensorType>& types) {
  std::string s;
  for (std::size_t i = 0; i < types.size(); ++i) s += (i ? ", " : "") + type_to_string(types[i]);
  return s;
}

// Prints a function and the regions nested in it. Values are numbered in print order across
// the whole text: a graph's parameters, then its statements; a control statement numbers its
// results first, then its regions' parameters and statements, and the statements after it
// continue from there. So no name is printed twice, however deep the nesting.
class Printer {
 public:
  explicit Printer(const PrintOptions& options) : options_(options) {}

  std::string print(const Graph& g) {
    std::vector<std::int64_t> names(g.nodes.size(), -1);
    out_ = "func @" + format_name(g.name) + header(g, names) + " {\n";
    // The function's effects, derived from its ops: shown, never parsed.
    if (std::vector<Effect> effects = graph_effects(g); !effects.empty())
      out_ += "  # effects: " + describe_effects(effects) + "\n";
    body(g, names, 1);
    out_ += "}\n";
    return std::move(out_);
  }

 private:
  // "(%0: f32[3], ...) -> (types)", numbering the parameters.
  std::string header(const Graph& g, std::vector<std::int64_t>& names) {
    std::string s = "(";
    for (std::size_t i = 0; i < g.params.size(); ++i) {
      if (i) s += ", ";
      s += define(names, g.params[i]) + ": " + format_type(g.node(g.params[i]));
    }
    s += ") -> (";
    for (std::size_t i = 0; i < g.outputs.size(); ++i) {
      if (i) s += ", ";
      s += valid(g, g.outputs[i]) ? format_type(g.node(g.outputs[i])) : "?";
    }
    return s + ")";
  }

  static bool valid(const Graph& g, ValueId id) {
    return id >= 0 && static_cast<std::size_t>(id) < g.nodes.size();
  }

  std::string define(std::vector<std::int64_t>& names, ValueId id) {
    if (id >= 0 && static_cast<std::size_t>(id) < names.size()) names[id] = next_;
    return "%" + std::to_string(next_++);
  }

  // A graph that fails verify may use a value it never defines; it prints as "%?", which the
  // parser rejects.
  static std::string use(const std::vector<std::int64_t>& names, ValueId id) {
    if (id < 0 || static_cast<std::size_t>(id) >= names.size() || names[id] < 0) return "%?";
    return "%" + std::to_string(names[id]);
  }

  void indent(int level) { out_.append(static_cast<std::size_t>(level) * 2, ' '); }

  void op_and_operands(const Node& n, const std::vector<std::int64_t>& names) {
    out_ += op_name(n.op);
    if (!n.attrs.empty()) {
      out_ += "[";
      bool first = true;
      for (const auto& [name, value] : n.attrs.items()) {
        if (!first) out_ += ", ";
        first = false;
        out_ += name + "=" + format_attr_value(value);
      }
      out_ += "]";
    }
    for (std::size_t j = 0; j < n.inputs.size(); ++j)
      out_ += (j ? ", " : " ") + use(names, n.inputs[j]);
  }

  void origin_comment(const Node& n) {
    if (options_.with_origins && has_known_origin(n.origin)) out_ += "  # " + n.origin.describe();
  }

  // Whether node r is result k of multi-result node i, as verify requires.
  static bool is_result_of(const Graph& g, std::size_t r, std::size_t i, std::size_t k) {
    if (r >= g.nodes.size()) return false;
    const Node& n = g.nodes[r];
    const AttrValue* index = n.attrs.find(IndexAttrs::kIndex);
    const auto* value = index ? std::get_if<std::int64_t>(index) : nullptr;
    return n.op == OpKind::Result && n.inputs.size() == 1 &&
           n.inputs[0] == static_cast<ValueId>(i) && value &&
           *value == static_cast<std::int64_t>(k);
  }

  void body(const Graph& g, std::vector<std::int64_t>& names, int level) {
    for (std::size_t i = 0; i < g.nodes.size(); ++i) {
      const Node& n = g.nodes[i];
      if (n.op == OpKind::Parameter && names[i] >= 0) continue;
      if (n.op == OpKind::Result && names[i] >= 0) continue;  // named by its control op
      indent(level);
      if (is_multi_result(n.op)) {
        control(g, i, names, level);
        continue;
      }
      out_ += define(names, static_cast<ValueId>(i)) + " = ";
      op_and_operands(n, names);
      out_ += " : " + format_type(n);
      origin_comment(n);
      out_ += "\n";
    }
    indent(level);
    out_ += "return";
    for (std::size_t i = 0; i < g.outputs.size(); ++i)
      out_ += (i ? ", " : " ") + use(names, g.outputs[i]);
    out_ += "\n";
  }

  void control(const Graph& g, std::size_t i, std::vector<std::int64_t>& names, int level) {
    const Node& n = g.nodes[i];
    // The results are named on the left; a control op without results has no left side.
    std::string lhs;
    for (std::size_t k = 0; k < n.results.size(); ++k) {
      if (k) lhs += ", ";
      const std::size_t r = i + 1 + k;
      lhs += is_result_of(g, r, i, k) ? define(names, static_cast<ValueId>(r))
                                      : "%" + std::to_string(next_++);
    }
    if (!lhs.empty()) out_ += lhs + " = ";
    op_and_operands(n, names);
    out_ += " :";
    if (is_host_op(n.op)) {
      // A host op has no regions: its statement ends with its result types, "()" for none.
      out_ += " " + (n.results.empty() ? std::string("()") : format_types(n.results));
      origin_comment(n);
      out_ += "\n";
      return;
    }
    if (!n.results.empty()) out_ += " " + format_types(n.results);
    out_ += " {";
    origin_comment(n);
    out_ += "\n";
    for (std::size_t k = 0; k < n.regions.size(); ++k) {
      const Graph& region = n.regions[k];
      std::vector<std::int64_t> inner(region.nodes.size(), -1);
      indent(level + 1);
      out_ += region_name(n.op, k) + header(region, inner) + " {\n";
      body(region, inner, level + 2);
      indent(level + 1);
      out_ += "}\n";
    }
    indent(level);
    out_ += "}\n";
  }

  const PrintOptions& options_;
  std::string out_;
  std::int64_t next_ = 0;
};

}  // namespace

std::string print_graph(const Graph& graph, const PrintOptions& options) {
  return Printer(options).print(graph.canonicalized());
}

}  // namespace weft
