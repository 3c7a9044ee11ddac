// Printing graphs in the canonical text form.
#include "ir/text_syntax.h"
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

std::string format_name(std::string_view name) {
  if (is_bare_name(name)) return std::string(name);
  std::string out = "\"";
  for (char c : name) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
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

}  // namespace

std::string print_graph(const Graph& graph, const PrintOptions& options) {
  const Graph g = graph.canonicalized();
  std::string out = "func @" + format_name(g.name) + "(";
  for (std::size_t i = 0; i < g.params.size(); ++i) {
    if (i) out += ", ";
    out += "%" + std::to_string(i) + ": " + format_type(g.node(g.params[i]));
  }
  out += ") -> (";
  for (std::size_t i = 0; i < g.outputs.size(); ++i) {
    if (i) out += ", ";
    out += format_type(g.node(g.outputs[i]));
  }
  out += ") {\n";
  for (std::size_t i = g.params.size(); i < g.nodes.size(); ++i) {
    const Node& n = g.nodes[i];
    out += "  %" + std::to_string(i) + " = " + std::string(op_name(n.op));
    if (!n.attrs.empty()) {
      out += "[";
      bool first = true;
      for (const auto& [name, value] : n.attrs.items()) {
        if (!first) out += ", ";
        first = false;
        out += name + "=" + format_attr_value(value);
      }
      out += "]";
    }
    for (std::size_t j = 0; j < n.inputs.size(); ++j)
      out += (j ? ", %" : " %") + std::to_string(n.inputs[j]);
    out += " : " + format_type(n);
    if (options.with_origins && has_known_origin(n.origin)) out += "  # " + n.origin.describe();
    out += "\n";
  }
  out += "  return";
  for (std::size_t i = 0; i < g.outputs.size(); ++i)
    out += (i ? ", %" : " %") + std::to_string(g.outputs[i]);
  out += "\n}\n";
  return out;
}

}  // namespace weft
