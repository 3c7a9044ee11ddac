// Parsing the text form back into a graph, with errors that name line and column.
#include "ir/text_syntax.h"
#include "primitives/primitive.h"
#include "weft/ir/op_attrs.h"
#include "weft/ir/regions.h"
#include "weft/ir/text.h"

#include <unordered_set>

namespace weft {
namespace {

using namespace text_syntax;

// ---------------------------------------------------------------------------------------------
// Parsing.

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diag = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

std::string unknown_op_message(std::string_view name) {
  std::string msg = "unknown op '" + truncated(name) + "'";
  // Long garbage gets no suggestion; the distance computation is quadratic.
  if (name.size() > 64) return msg;
  std::string_view best;
  std::size_t best_distance = std::numeric_limits<std::size_t>::max();
  for (int k = 0; k < kNumOpKinds; ++k) {
    const auto kind = static_cast<OpKind>(k);
    if (kind == OpKind::Parameter) continue;
    const std::size_t d = edit_distance(name, op_name(kind));
    if (d < best_distance) {
      best_distance = d;
      best = op_name(kind);
    }
  }
  return msg + "; did you mean '" + std::string(best) + "'?";
}

// Source lines of one parsed graph (the function or a region), kept beside the graph so that
// errors found after parsing (by verify, or in the declared result types) name a line.
struct GraphLines {
  std::string what;  // "the signature", "region body of the while on line 3"
  int header = 1;    // line of the function or region header
  int ret = 1;       // line of 'return'
  std::vector<int> output_lines;
  std::vector<TensorType> declared_results;
  // Per control node (by id in the graph): the lines of its regions, in order.
  std::vector<std::pair<ValueId, std::vector<GraphLines>>> controls;

  const std::vector<GraphLines>* regions_of(ValueId id) const {
    for (const auto& [node, regions] : controls)
      if (node == id) return &regions;
    return nullptr;
  }
};

// The number of regions each control op has, from its definition.
std::size_t min_regions(OpKind op) {
  return prim::primitive(op).regions.min;
}
std::size_t max_regions(OpKind op) {
  return prim::primitive(op).regions.max;
}
bool any_number_of_regions(OpKind op) {
  return max_regions(op) == prim::Regions::kAny;
}

std::string region_list(OpKind op) {
  if (any_number_of_regions(op)) return region_name(op, 0) + ", " + region_name(op, 1) + ", ...";
  std::string s;
  for (std::size_t k = 0; k < max_regions(op); ++k) s += (k ? ", " : "") + region_name(op, k);
  return s;
}

class Parser {
 public:
  explicit Parser(std::string_view text) : lex_(text) { advance(); }

  Graph parse() {
    Graph g;
    GraphLines lines;
    lines.what = "the signature";
    if (!at_word("func")) expected("'func' to start the function");
    lines.header = tok_.line;
    advance();
    expect(Tok::At, "'@' and the function name after 'func'");
    if (tok_.kind == Tok::Ident) {
      g.name = std::string(tok_.text);
    } else if (tok_.kind == Tok::String) {
      g.name = string_value(tok_);
    } else {
      expected("a function name after '@'");
    }
    advance();
    scopes_.emplace_back();
    parse_header(g, lines, "the function name", "function body");
    parse_body(g, lines, 0);
    if (tok_.kind != Tok::End) expected("end of input after the closing '}'");

    try {
      verify(g);
    } catch (const InvalidGraphError& e) {
      throw InvalidGraphError("line " + std::to_string(line_of_error(g, lines, e.what())) + ": " +
                              e.what());
    }
    check_result_types(g, lines);
    return g;
  }

 private:
  struct Definition {
    ValueId id;
    int line;
  };
  using Scope = std::unordered_map<std::string, Definition>;

  void advance() { tok_ = lex_.next(); }
  bool at_word(std::string_view word) const { return tok_.kind == Tok::Ident && tok_.text == word; }

  [[noreturn]] void fail_at(const Token& t, const std::string& message) const {
    throw ParseError(
        "line " + std::to_string(t.line) + ", column " + std::to_string(t.column) + ": " + message,
        t.line, t.column);
  }
  [[noreturn]] void expected(const std::string& what) const {
    fail_at(tok_, "expected " + what + ", found " + describe(tok_));
  }
  void expect(Tok kind, const std::string& what) {
    if (tok_.kind != kind) expected(what);
    advance();
  }

  // The lexer checked the escapes; drops the quotes and the backslashes.
  static std::string string_value(const Token& t) {
    std::string out;
    const std::string_view body = t.text.substr(1, t.text.size() - 2);
    for (std::size_t i = 0; i < body.size(); ++i) {
      if (body[i] == '\\') ++i;
      out += body[i];
    }
    return out;
  }

  std::int64_t int_value(const Token& t) const {
    std::int64_t v = 0;
    const char* end = t.text.data() + t.text.size();
    auto [ptr, ec] = std::from_chars(t.text.data(), end, v);
    if (ec != std::errc() || ptr != end)
      fail_at(t, "integer " + truncated(t.text) + " does not fit in 64 bits");
    return v;
  }

  double float_value(const Token& t) const {
    if (t.text == "inf") return std::numeric_limits<double>::infinity();
    if (t.text == "-inf") return -std::numeric_limits<double>::infinity();
    if (t.text == "nan") return std::numeric_limits<double>::quiet_NaN();
    double v = 0;
    const char* end = t.text.data() + t.text.size();
    auto [ptr, ec] = std::from_chars(t.text.data(), end, v);
    if (ec != std::errc() || ptr != end)
      fail_at(t, "float " + truncated(t.text) + " is out of the range of a 64-bit float");
    return v;
  }

  // Values live in scopes: the function's, and one per region, innermost last. A region sees
  // only its own scope.
  void define(const Token& name, ValueId id) {
    scopes_.back().emplace(std::string(name.text), Definition{id, name.line});
  }

  void check_not_defined(const Token& name) const {
    auto it = scopes_.back().find(std::string(name.text));
    if (it != scopes_.back().end())
      fail_at(name, "value " + truncated(name.text) + " is already defined on line " +
                        std::to_string(it->second.line));
  }

  ValueId lookup(const Token& name) const {
    const std::string key(name.text);
    auto it = scopes_.back().find(key);
    if (it != scopes_.back().end()) return it->second.id;
    for (std::size_t s = scopes_.size() - 1; s-- > 0;) {
      auto outer = scopes_[s].find(key);
      if (outer == scopes_[s].end()) continue;
      fail_at(name, "value " + truncated(name.text) + " is defined outside the region (on line " +
                        std::to_string(outer->second.line) +
                        "); a region sees only its parameters: pass the value to the control op " +
                        "as an operand and take it as a region parameter");
    }
    fail_at(name, "undefined value " + truncated(name.text) +
                      " (values must be defined before they are used)");
  }

  TensorType parse_type() {
    if (tok_.kind != Tok::Ident) expected("a type such as f32[3,4]");
    const Token type_tok = tok_;
    auto dtype = dtype_from_name(tok_.text);
    if (!dtype)
      fail_at(tok_, "unknown dtype '" + truncated(tok_.text) +
                        "'; expected bool, i32, i64, u32, f32, f64, u8, i8, u16, i16, u64, f16, "
                        "bf16 or token");
    advance();
    if (tok_.kind != Tok::LBracket)
      expected("'[' and the shape after dtype '" + std::string(dtype_name(*dtype)) + "'");
    advance();
    TensorType t{*dtype, {}};
    if (tok_.kind == Tok::RBracket) {
      advance();
      return t;
    }
    std::int64_t extent_product = 1;  // of max(d, 1): bounds every partial product too
    while (true) {
      if (tok_.kind != Tok::Int) expected("a dimension size");
      const std::int64_t d = int_value(tok_);
      if (d < 0)
        fail_at(tok_, "dimension sizes must be non-negative, found " + truncated(tok_.text));
      if (d > kMaxExtent)
        fail_at(tok_, "dimension size " + std::string(tok_.text) + " exceeds the limit " +
                          std::to_string(kMaxExtent));
      if (__builtin_mul_overflow(extent_product, std::max<std::int64_t>(d, 1), &extent_product))
        fail_at(type_tok, "the shape has too many elements to count in 64 bits");
      t.shape.push_back(d);
      advance();
      if (tok_.kind == Tok::RBracket) break;
      if (tok_.kind != Tok::Comma) expected("',' or ']' after dimension size");
      advance();
    }
    advance();
    return t;
  }

  // The integer attributes that count operands, name an axis or a callback slot, with what
  // they mean; nullptr for the others. Their users keep them in an int (the OpenCL plan's
  // callback slot, carries and xs), so a value beyond 0..2^31-1 is refused with its name and
  // range here rather than wrapped later (callback=999999999999 used to become slot
  // -727379969).
  static const char* count_attr_meaning(OpKind op, std::string_view name) {
    for (const prim::CountAttr& attr : prim::primitive(op).count_attrs)
      if (attr.name == name) return attr.meaning;
    if (op == OpKind::HostCall && name == HostCallAttrs::kCallback)
      return "a slot in the callback table";
    if ((op == OpKind::Iota || op == OpKind::Concatenate) && name == DimensionAttrs::kDimension)
      return "an axis";
    return nullptr;
  }

  // At the value of attribute `name` of `op`: refuses an integer out of its range, also one
  // beyond 64 bits, naming the attribute.
  void check_count_attr(OpKind op, const Token& name) const {
    const char* meaning = count_attr_meaning(op, name.text);
    if (!meaning || tok_.kind != Tok::Int) return;
    std::int64_t v = 0;
    const char* end = tok_.text.data() + tok_.text.size();
    const auto [ptr, ec] = std::from_chars(tok_.text.data(), end, v);
    if (ec == std::errc() && ptr == end && v >= 0 && v <= kMaxExtent) return;
    fail_at(tok_, "attribute '" + std::string(name.text) + "' of " + std::string(op_name(op)) +
                      " is " + truncated(tok_.text) + ", outside its range 0 to " +
                      std::to_string(kMaxExtent) + " (" + meaning + ")");
  }

  // `[name=value, ...]` of an `op`; records where `value` was written so constants can report
  // it.
  Attrs parse_attrs(OpKind op, std::optional<Token>& value_token) {
    advance();  // '['
    Attrs attrs;
    if (tok_.kind == Tok::RBracket) {
      advance();
      return attrs;
    }
    while (true) {
      if (tok_.kind != Tok::Ident) expected("an attribute name");
      const Token name = tok_;
      if (attrs.has(name.text))
        fail_at(name, "attribute '" + truncated(name.text) + "' is given twice");
      advance();
      if (tok_.kind != Tok::Equals)
        expected("'=' after attribute name '" + truncated(name.text) + "'");
      advance();
      if (name.text == ConstantAttrs::kValue) value_token = tok_;
      check_count_attr(op, name);
      attrs.set(std::string(name.text), parse_attr_value());
      if (tok_.kind == Tok::RBracket) break;
      if (tok_.kind != Tok::Comma) expected("',' or ']' after attribute value");
      advance();
    }
    advance();
    return attrs;
  }

  AttrValue parse_attr_value() {
    if (tok_.kind == Tok::Int) {
      const std::int64_t v = int_value(tok_);
      advance();
      return v;
    }
    if (tok_.kind == Tok::Float || at_word("inf") || at_word("nan")) {
      const double v = float_value(tok_);
      advance();
      return v;
    }
    if (tok_.kind == Tok::String) {
      std::string v = string_value(tok_);
      advance();
      return v;
    }
    if (tok_.kind != Tok::LBracket)
      expected("an attribute value (an integer, a float, a string or an integer list [1,2])");
    advance();
    std::vector<std::int64_t> list;
    if (tok_.kind == Tok::RBracket) {
      advance();
      return list;
    }
    while (true) {
      if (tok_.kind != Tok::Int) expected("an integer list entry");
      const std::int64_t v = int_value(tok_);
      if (v > kMaxExtent || v < -kMaxExtent)
        fail_at(tok_, "list entry " + std::string(tok_.text) +
                          " is outside the supported range [-" + std::to_string(kMaxExtent) + ", " +
                          std::to_string(kMaxExtent) + "]");
      list.push_back(v);
      advance();
      if (tok_.kind == Tok::RBracket) break;
      if (tok_.kind != Tok::Comma) expected("',' or ']' after list entry");
      advance();
    }
    advance();
    return list;
  }

  // "(%a: type, ...) -> (type, ...) {": the parameters of a function or region, defined in the
  // current scope, and its declared result types.
  void parse_header(Graph& g, GraphLines& lines, const std::string& after,
                    const std::string& body) {
    expect(Tok::LParen, "'(' after " + after);
    if (tok_.kind != Tok::RParen) {
      while (true) {
        if (tok_.kind != Tok::Value) expected("a parameter name such as %0");
        const Token name = tok_;
        check_not_defined(name);
        advance();
        expect(Tok::Colon, "':' and a type after parameter " + truncated(name.text));
        const TensorType t = parse_type();
        Node n;
        n.op = OpKind::Parameter;
        n.dtype = t.dtype;
        n.shape = t.shape;
        n.attrs = IndexAttrs{static_cast<std::int64_t>(g.params.size())}.write();
        n.origin.text_line = name.line;
        const ValueId id = g.add(std::move(n));
        g.params.push_back(id);
        define(name, id);
        if (tok_.kind == Tok::RParen) break;
        if (tok_.kind != Tok::Comma) expected("',' or ')' after parameter type");
        advance();
      }
    }
    advance();
    expect(Tok::Arrow, "'->' and the result types after the parameter list");
    expect(Tok::LParen, "'(' before the result types");
    if (tok_.kind != Tok::RParen) {
      while (true) {
        lines.declared_results.push_back(parse_type());
        if (tok_.kind == Tok::RParen) break;
        if (tok_.kind != Tok::Comma) expected("',' or ')' after result type");
        advance();
      }
    }
    advance();
    expect(Tok::LBrace, "'{' to open the " + body);
  }

  // Statements, 'return' and the closing '}' of a function or region at nesting `depth`.
  void parse_body(Graph& g, GraphLines& lines, int depth) {
    while (true) {
      if (tok_.kind == Tok::Value) {
        parse_statement(g, lines, depth);
      } else if (tok_.kind == Tok::Ident && !at_word("return")) {
        // Only a control or host op without results is written without '%name ='.
        const auto kind = op_from_name(tok_.text);
        if (!kind || !is_multi_result(*kind)) {
          if (kind)
            fail_at(tok_, "expected a statement ('%name = op ...') or 'return', found '" +
                              std::string(tok_.text) +
                              "'; only a control op (while, cond, scan) or a host op " +
                              "(debug_print, host_call) without results is written without " +
                              "'%name ='");
          expected("a statement ('%name = op ...') or 'return'");
        }
        parse_statement(g, lines, depth);
      } else {
        break;
      }
    }
    if (!at_word("return")) expected("a statement ('%name = op ...') or 'return'");
    lines.ret = tok_.line;
    advance();
    if (tok_.kind == Tok::Value) {
      while (true) {
        lines.output_lines.push_back(tok_.line);
        g.outputs.push_back(lookup(tok_));
        advance();
        if (tok_.kind != Tok::Comma) break;
        advance();
        if (tok_.kind != Tok::Value) expected("a return value after ','");
      }
      if (tok_.kind != Tok::RBrace) expected("',' or '}' after return value");
    } else if (tok_.kind != Tok::RBrace) {
      expected("a return value or '}' after 'return'");
    }
    advance();
  }

  void parse_statement(Graph& g, GraphLines& lines, int depth) {
    const Token first = tok_;
    std::vector<Token> names;
    if (tok_.kind == Tok::Value) {
      std::unordered_set<std::string_view> seen;
      while (true) {
        const Token name = tok_;
        check_not_defined(name);
        if (!seen.insert(name.text).second)
          fail_at(name, "value " + truncated(name.text) + " is named twice on the left of '='");
        names.push_back(name);
        advance();
        if (tok_.kind != Tok::Comma) break;
        advance();
        if (tok_.kind != Tok::Value) expected("a value name after ','");
      }
      if (tok_.kind != Tok::Equals) expected("'=' after " + truncated(names.back().text));
      advance();
    }
    if (tok_.kind != Tok::Ident) expected("an op name after '='");
    const Token op_tok = tok_;
    const auto kind = op_from_name(tok_.text);
    if (!kind) fail_at(tok_, unknown_op_message(tok_.text));
    if (*kind == OpKind::Parameter)
      fail_at(tok_,
              "'param' cannot appear in the body; declare parameters in the signature, as "
              "in func @f(%0: f32[3])");
    if (*kind == OpKind::Result)
      fail_at(tok_,
              "'result' cannot be written as a statement; the results of a control op are named "
              "on the left of it, as in '%a, %b = while ...'");
    if (!is_multi_result(*kind) && names.size() != 1)
      fail_at(names.size() > 1 ? names[1] : op_tok,
              "only a control op (while, cond, scan) or a host op (debug_print, host_call) "
              "defines several values; '" +
                  std::string(op_tok.text) + "' defines one");
    advance();

    Node n;
    n.op = *kind;
    n.origin.text_line = first.line;
    std::optional<Token> value_token;
    const bool has_attrs = tok_.kind == Tok::LBracket;
    if (has_attrs) n.attrs = parse_attrs(n.op, value_token);
    if (tok_.kind == Tok::Value) {
      while (true) {
        n.inputs.push_back(lookup(tok_));
        advance();
        if (tok_.kind == Tok::Colon) break;
        if (tok_.kind != Tok::Comma) expected("',' or ':' after operand");
        advance();
        if (tok_.kind != Tok::Value) expected("an operand after ','");
      }
    } else if (tok_.kind != Tok::Colon) {
      expected(has_attrs ? "an operand or ':' after the attributes"
                         : "'[', an operand or ':' after the op name");
    }
    advance();
    if (is_host_op(n.op)) {
      parse_host(g, std::move(n), names);
      return;
    }
    if (is_control(n.op)) {
      parse_control(g, lines, std::move(n), names, depth);
      return;
    }
    const TensorType t = parse_type();
    n.dtype = t.dtype;
    n.shape = t.shape;
    if (n.op == OpKind::Constant) normalize_constant(n, value_token);
    define(names[0], g.add(std::move(n)));
  }

  // After "%t, %y = host_call[...] %x :": the result types, "()" for none.
  void parse_host(Graph& g, Node n, const std::vector<Token>& names) {
    const Token types_at = tok_;
    if (tok_.kind == Tok::LParen) {
      advance();
      if (tok_.kind != Tok::RParen) expected("')' after '(': \"()\" stands for no results");
      advance();
    } else {
      while (true) {
        n.results.push_back(parse_type());
        if (tok_.kind != Tok::Comma) break;
        advance();
      }
    }
    if (n.results.size() != names.size())
      fail_at(types_at, std::to_string(names.size()) + " value(s) named on the left of '" +
                            std::string(op_name(n.op)) + "' but " +
                            std::to_string(n.results.size()) +
                            " result type(s) after ':'; name one value per result");
    const ValueId first = g.add_control(std::move(n));
    for (std::size_t k = 0; k < names.size(); ++k)
      define(names[k], first + static_cast<ValueId>(k));
  }

  // After "%a, %b = while[...] %x, %y :": the result types, then '{', the regions and '}'.
  void parse_control(Graph& g, GraphLines& lines, Node n, const std::vector<Token>& names,
                     int depth) {
    const std::string op(op_name(n.op));
    if (tok_.kind != Tok::LBrace) {
      while (true) {
        n.results.push_back(parse_type());
        if (tok_.kind == Tok::LBrace) break;
        if (tok_.kind != Tok::Comma) expected("',' or '{' after result type");
        advance();
      }
    }
    if (n.results.size() != names.size())
      fail_at(tok_, std::to_string(names.size()) + " value(s) named on the left of '" + op +
                        "' but " + std::to_string(n.results.size()) +
                        " result type(s) after ':'; name one value per result");
    if (depth + 1 > kMaxRegionDepth)
      fail_at(tok_, "regions nest deeper than the limit of " + std::to_string(kMaxRegionDepth) +
                        " levels");
    advance();  // '{'
    std::vector<GraphLines> region_lines;
    while (tok_.kind != Tok::RBrace) {
      const std::size_t k = n.regions.size();
      if (k >= max_regions(n.op))
        fail_at(tok_, op +
                          (max_regions(n.op) == 0 ? std::string(" has no regions")
                                                  : " has " + std::to_string(max_regions(n.op)) +
                                                        " region(s) (" + region_list(n.op) + ")") +
                          "; expected '}' to close it, found " + describe(tok_));
      const std::string want = region_name(n.op, k);
      if (tok_.kind != Tok::Ident || tok_.text != want)
        fail_at(tok_, "expected region '" + want + "' (region " + std::to_string(k) + " of " + op +
                          ", whose regions are " + region_list(n.op) + "), found " +
                          describe(tok_));
      Graph region;
      region.name = want;
      GraphLines rl;
      rl.what =
          "region " + want + " of the " + op + " on line " + std::to_string(n.origin.text_line);
      rl.header = tok_.line;
      advance();
      scopes_.emplace_back();
      parse_header(region, rl, "region name '" + want + "'", "body of region " + want);
      parse_body(region, rl, depth + 1);
      scopes_.pop_back();
      n.regions.push_back(std::move(region));
      region_lines.push_back(std::move(rl));
    }
    if (n.regions.size() < min_regions(n.op))
      fail_at(tok_, op + " needs " +
                        (any_number_of_regions(n.op)
                             ? "at least " + std::to_string(min_regions(n.op)) + " region"
                             : std::to_string(min_regions(n.op)) + " regions") +
                        " (" + region_list(n.op) + ") but has " + std::to_string(n.regions.size()) +
                        "; expected region '" + region_name(n.op, n.regions.size()) + "', found " +
                        describe(tok_));
    advance();  // '}'
    const ValueId first = g.add_control(std::move(n));
    lines.controls.emplace_back(first - 1, std::move(region_lines));
    for (std::size_t k = 0; k < names.size(); ++k)
      define(names[k], first + static_cast<ValueId>(k));
  }

  // A float-dtype constant always holds a double, however its literal was written, so that
  // printing and parsing again is stable; an integer or bool constant needs an integer.
  void normalize_constant(Node& n, const std::optional<Token>& value_token) const {
    const AttrValue* value = n.attrs.find(ConstantAttrs::kValue);
    if (!value || !value_token) return;  // verify reports the missing value
    if (is_float(n.dtype)) {
      if (const auto* i = std::get_if<std::int64_t>(value))
        n.attrs.set(ConstantAttrs::kValue, static_cast<double>(*i));
    } else if (std::holds_alternative<double>(*value)) {
      fail_at(*value_token, "a constant of dtype " + std::string(dtype_name(n.dtype)) +
                                " needs an integer value, found " + truncated(value_token->text));
    }
  }

  // verify() names the failing node as "node %<id>", after the chain of regions it sits in
  // ("in region body of node %4 (while, at line 3): "). Follows that chain through the graph
  // to the node, or to the region whose signature is wrong, and returns its source line.
  int line_of_error(const Graph& g, const GraphLines& lines, std::string_view message) const {
    const Graph* graph = &g;
    const GraphLines* where = &lines;
    int line = lines.header;
    std::size_t pos = 0;
    // Reads "%<id>" at pos; -1 when it is not a node of `graph`.
    auto read_id = [&]() -> ValueId {
      std::size_t id = 0;
      bool any = false;
      while (pos < message.size() && is_digit(message[pos]) && id <= graph->nodes.size()) {
        id = id * 10 + static_cast<std::size_t>(message[pos] - '0');
        any = true;
        ++pos;
      }
      return any && id < graph->nodes.size() ? static_cast<ValueId>(id) : -1;
    };
    // Enters region `name` of node `id`: returns false when there is no such region.
    auto enter = [&](ValueId id, std::string_view name) {
      const Node& n = graph->nodes[id];
      const std::vector<GraphLines>* regions = where->regions_of(id);
      for (std::size_t k = 0; k < n.regions.size(); ++k) {
        if (region_name(n.op, k) != name) continue;
        if (!regions || k >= regions->size()) return false;
        graph = &n.regions[k];
        where = &(*regions)[k];
        return true;
      }
      return false;
    };
    constexpr std::string_view kInRegion = "in region ";
    constexpr std::string_view kOfNode = " of node %";
    constexpr std::string_view kNode = "node %";
    constexpr std::string_view kRegion = ", region ";
    while (message.substr(pos).starts_with(kInRegion)) {
      const std::size_t name_at = pos + kInRegion.size();
      const std::size_t of = message.find(kOfNode, name_at);
      if (of == std::string_view::npos) return line;
      pos = of + kOfNode.size();
      const ValueId id = read_id();
      if (id < 0) return line;
      if (graph->nodes[id].origin.text_line > 0) line = graph->nodes[id].origin.text_line;
      if (!enter(id, message.substr(name_at, of - name_at))) return line;
      line = where->header;
      const std::size_t next = message.find("): ", pos);
      if (next == std::string_view::npos) return line;
      pos = next + 3;
    }
    if (!message.substr(pos).starts_with(kNode)) return line;
    pos += kNode.size();
    const ValueId id = read_id();
    if (id < 0) return line;
    if (graph->nodes[id].origin.text_line > 0) line = graph->nodes[id].origin.text_line;
    // "node %4 (while, at line 3), region body: takes ..." is about the region itself.
    const std::size_t close = message.find(')', pos);
    if (close == std::string_view::npos || !message.substr(close + 1).starts_with(kRegion))
      return line;
    const std::size_t name_at = close + 1 + kRegion.size();
    const std::size_t colon = message.find(": ", name_at);
    if (colon == std::string_view::npos || !enter(id, message.substr(name_at, colon - name_at)))
      return line;
    return message.substr(colon + 2).starts_with("returns") ? where->ret : where->header;
  }

  // The declared result types of the function and of every region must match what 'return'
  // names; regions first, in text order.
  void check_result_types(const Graph& g, const GraphLines& lines) const {
    for (const auto& [id, regions] : lines.controls) {
      const Node& n = g.node(id);
      for (std::size_t k = 0; k < regions.size() && k < n.regions.size(); ++k)
        check_result_types(n.regions[k], regions[k]);
    }
    const std::vector<TensorType>& declared = lines.declared_results;
    if (g.outputs.size() != declared.size()) {
      const int line = lines.output_lines.empty() ? lines.header : lines.output_lines.front();
      throw InvalidGraphError("line " + std::to_string(line) + ": " + lines.what + " declares " +
                              std::to_string(declared.size()) + " result(s) but 'return' " +
                              "lists " + std::to_string(g.outputs.size()));
    }
    for (std::size_t i = 0; i < g.outputs.size(); ++i) {
      const Node& n = g.node(g.outputs[i]);
      const TensorType actual{n.dtype, n.shape};
      if (actual != declared[i])
        throw InvalidGraphError("line " + std::to_string(lines.output_lines[i]) + ": result " +
                                std::to_string(i) + " is declared " + type_to_string(declared[i]) +
                                " in " + lines.what + " but the returned value is " +
                                type_to_string(actual));
    }
  }

  Lexer lex_;
  Token tok_;
  std::vector<Scope> scopes_;
};

}  // namespace

Graph parse_graph(std::string_view text) {
  return Parser(text).parse();
}

}  // namespace weft
