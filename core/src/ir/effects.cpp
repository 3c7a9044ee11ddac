#include "weft/ir/effects.h"

#include <algorithm>

#include "weft/error.h"
#include "weft/ir/op_attrs.h"
#include "weft/ir/walk.h"

namespace weft {

std::optional<Effect> node_effect(const Node& node) {
  const bool is_ordered = HostEffectAttrs::ordered(node.attrs);
  switch (node.op) {
    case OpKind::DebugPrint:
      return Effect{"debug_print", is_ordered};
    case OpKind::HostCall: {
      const std::string* effect = HostCallAttrs::effect(node.attrs);
      if (!effect) return std::nullopt;
      return Effect{*effect, is_ordered};
    }
    default:
      return std::nullopt;
  }
}

std::vector<Effect> graph_effects(const Graph& graph) {
  std::vector<Effect> effects;
  for_each_graph(graph, [&](const Graph& g, int) {
    for (const Node& n : g.nodes)
      if (auto e = node_effect(n)) effects.push_back(*e);
  });
  std::sort(effects.begin(), effects.end());
  effects.erase(std::unique(effects.begin(), effects.end()), effects.end());
  return effects;
}

bool has_effect(const Node& node) {
  if (node_effect(node)) return true;
  for (const Graph& region : node.regions)
    for (const Node& n : region.nodes)
      if (has_effect(n)) return true;
  return false;
}

std::string describe_effects(const std::vector<Effect>& effects) {
  if (effects.empty()) return "none";
  std::string s;
  for (const Effect& e : effects) {
    if (!s.empty()) s += ", ";
    s += e.name + (e.ordered ? " (ordered)" : "");
  }
  return s;
}

namespace {

[[noreturn]] void host_fail(OpKind op, const std::string& what) {
  throw InvalidGraphError(std::string(op_name(op)) + ": " + what);
}

bool is_effect_name(const std::string& name) {
  if (name.empty() || name.size() > 64) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '.';
  });
}

}  // namespace

void check_host_op(OpKind op, std::span<const TensorType> operands, const Attrs& attrs,
                   std::span<const TensorType> results) {
  auto is_token = [](const TensorType& t) { return t.dtype == DType::Token; };
  if (op == OpKind::AfterAll) {
    for (const TensorType& t : operands)
      if (!is_token(t)) host_fail(op, "takes tokens only, found " + type_to_string(t));
    return;
  }
  const bool token_in = !operands.empty() && is_token(operands[0]);
  const bool token_out = !results.empty() && is_token(results[0]);
  for (std::size_t k = token_in ? 1 : 0; k < operands.size(); ++k)
    if (is_token(operands[k]))
      host_fail(op, "operand " + std::to_string(k) + " is a token; only the first may be");
  for (std::size_t k = token_out ? 1 : 0; k < results.size(); ++k)
    if (is_token(results[k]))
      host_fail(op, "result " + std::to_string(k) + " is a token; only the first may be");
  if (token_in && !token_out)
    host_fail(op, "takes a token but returns none; an op that waits on a token returns one");

  bool ordered = false;
  if (const AttrValue* value = attrs.find(HostEffectAttrs::kOrdered)) {
    const auto* flag = std::get_if<std::int64_t>(value);
    if (!flag || (*flag != 0 && *flag != 1)) host_fail(op, "attribute 'ordered' must be 0 or 1");
    ordered = *flag == 1;
  }
  bool effectful = true;
  if (op == OpKind::DebugPrint) {
    const std::string& format = attrs.get_string(DebugPrintAttrs::kFormat);
    std::size_t placeholders = 0;
    try {
      placeholders = count_format_placeholders(format);
    } catch (const Error& e) {
      host_fail(op, e.what());
    }
    const std::size_t arrays = operands.size() - (token_in ? 1 : 0);
    if (placeholders != arrays)
      host_fail(op, "the format has " + std::to_string(placeholders) + " placeholder(s) but " +
                        std::to_string(arrays) + " array(s) are printed");
    if (results.size() > (token_out ? 1u : 0u)) host_fail(op, "returns no arrays (only a token)");
  } else {
    if (attrs.get_int(HostCallAttrs::kCallback) < 0)
      host_fail(op, "attribute 'callback' must be a slot >= 0");
    if (const AttrValue* effect = attrs.find(HostCallAttrs::kEffect)) {
      const auto* name = std::get_if<std::string>(effect);
      if (!name || !is_effect_name(*name))
        host_fail(op, "attribute 'effect' must name the effect ([A-Za-z0-9_.], at most 64 bytes)");
    } else {
      effectful = false;
      if (ordered) host_fail(op, "a pure callback (no 'effect' attribute) cannot be ordered");
    }
  }
  if (!effectful && (token_in || token_out))
    host_fail(op, "a pure callback takes and returns no tokens");
  if (token_in && !ordered)
    host_fail(op, "an unordered effect takes no token (it waits for nothing)");
}

std::size_t count_format_placeholders(const std::string& format) {
  std::size_t count = 0;
  for (std::size_t i = 0; i < format.size(); ++i) {
    const char c = format[i];
    if (c == '{') {
      if (i + 1 < format.size() && format[i + 1] == '{') {
        ++i;
      } else if (i + 1 < format.size() && format[i + 1] == '}') {
        ++count;
        ++i;
      } else {
        throw InvalidArgumentError("the format \"" + format + "\" has a '{' at byte " +
                                   std::to_string(i) +
                                   " that does not start \"{}\"; write \"{{\" for a brace (only "
                                   "plain \"{}\" placeholders are supported)");
      }
    } else if (c == '}') {
      if (i + 1 < format.size() && format[i + 1] == '}') {
        ++i;
      } else {
        throw InvalidArgumentError("the format \"" + format + "\" has an unmatched '}' at byte " +
                                   std::to_string(i) + "; write \"}}\" for a brace");
      }
    }
  }
  return count;
}

std::string apply_format(const std::string& format, const std::vector<std::string>& arguments) {
  std::string out;
  std::size_t next = 0;
  for (std::size_t i = 0; i < format.size(); ++i) {
    const char c = format[i];
    const char after = i + 1 < format.size() ? format[i + 1] : '\0';
    if (c == '{' && after == '}') {
      if (next < arguments.size()) out += arguments[next];
      ++next;
      ++i;
    } else if ((c == '{' && after == '{') || (c == '}' && after == '}')) {
      out += c;
      ++i;
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace weft
