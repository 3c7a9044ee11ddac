// Parsing the text form back into a graph, with errors that name line and column.
#include "ir/text_syntax.h"
#include "weft/ir/text.h"

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

class Parser {
 public:
  explicit Parser(std::string_view text) : lex_(text) { advance(); }

  Graph parse() {
    Graph g;
    parse_signature(g);
    while (tok_.kind == Tok::Value) parse_statement(g);
    if (!at_word("return")) expected("a statement ('%name = op ...') or 'return'");
    advance();
    std::vector<int> output_lines;
    if (tok_.kind == Tok::Value) {
      while (true) {
        output_lines.push_back(tok_.line);
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
    if (tok_.kind != Tok::End) expected("end of input after the closing '}'");

    try {
      verify(g);
    } catch (const InvalidGraphError& e) {
      throw InvalidGraphError("line " + std::to_string(line_of_error(g, e.what())) + ": " +
                              e.what());
    }
    check_result_types(g, output_lines);
    return g;
  }

 private:
  struct Definition {
    ValueId id;
    int line;
  };

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

  void define(const Token& name, ValueId id) {
    values_.emplace(std::string(name.text), Definition{id, name.line});
  }

  void check_not_defined(const Token& name) const {
    auto it = values_.find(std::string(name.text));
    if (it != values_.end())
      fail_at(name, "value " + truncated(name.text) + " is already defined on line " +
                        std::to_string(it->second.line));
  }

  ValueId lookup(const Token& name) const {
    auto it = values_.find(std::string(name.text));
    if (it == values_.end())
      fail_at(name, "undefined value " + truncated(name.text) +
                        " (values must be defined before they are used)");
    return it->second.id;
  }

  TensorType parse_type() {
    if (tok_.kind != Tok::Ident) expected("a type such as f32[3,4]");
    const Token type_tok = tok_;
    auto dtype = dtype_from_name(tok_.text);
    if (!dtype)
      fail_at(tok_, "unknown dtype '" + truncated(tok_.text) +
                        "'; expected bool, i32, i64, u32, f32 or f64");
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

  // `[name=value, ...]`; records where `value` was written so constants can report it.
  Attrs parse_attrs(std::optional<Token>& value_token) {
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
      if (name.text == "value") value_token = tok_;
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
    if (tok_.kind != Tok::LBracket)
      expected("an attribute value (an integer, a float or an integer list [1,2])");
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

  void parse_signature(Graph& g) {
    if (!at_word("func")) expected("'func' to start the function");
    func_line_ = tok_.line;
    advance();
    expect(Tok::At, "'@' and the function name after 'func'");
    if (tok_.kind == Tok::Ident) {
      g.name = std::string(tok_.text);
    } else if (tok_.kind == Tok::String) {
      g.name.clear();
      // The lexer checked the escapes; drop the quotes and the backslashes.
      const std::string_view body = tok_.text.substr(1, tok_.text.size() - 2);
      for (std::size_t i = 0; i < body.size(); ++i) {
        if (body[i] == '\\') ++i;
        g.name += body[i];
      }
    } else {
      expected("a function name after '@'");
    }
    advance();
    expect(Tok::LParen, "'(' after the function name");
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
        n.attrs.set("index", static_cast<std::int64_t>(g.params.size()));
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
        result_types_.push_back(parse_type());
        if (tok_.kind == Tok::RParen) break;
        if (tok_.kind != Tok::Comma) expected("',' or ')' after result type");
        advance();
      }
    }
    advance();
    expect(Tok::LBrace, "'{' to open the function body");
  }

  void parse_statement(Graph& g) {
    const Token name = tok_;
    check_not_defined(name);
    advance();
    if (tok_.kind != Tok::Equals) expected("'=' after " + truncated(name.text));
    advance();
    if (tok_.kind != Tok::Ident) expected("an op name after '='");
    const auto kind = op_from_name(tok_.text);
    if (!kind) fail_at(tok_, unknown_op_message(tok_.text));
    if (*kind == OpKind::Parameter)
      fail_at(tok_,
              "'param' cannot appear in the body; declare parameters in the signature, as "
              "in func @f(%0: f32[3])");
    advance();

    Node n;
    n.op = *kind;
    n.origin.text_line = name.line;
    std::optional<Token> value_token;
    const bool has_attrs = tok_.kind == Tok::LBracket;
    if (has_attrs) n.attrs = parse_attrs(value_token);
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
    const TensorType t = parse_type();
    n.dtype = t.dtype;
    n.shape = t.shape;
    if (n.op == OpKind::Constant) normalize_constant(n, value_token);
    define(name, g.add(std::move(n)));
  }

  // A float-dtype constant always holds a double, however its literal was written, so that
  // printing and parsing again is stable; an integer or bool constant needs an integer.
  void normalize_constant(Node& n, const std::optional<Token>& value_token) const {
    const AttrValue* value = n.attrs.find("value");
    if (!value || !value_token) return;  // verify reports the missing value
    if (is_float(n.dtype)) {
      if (const auto* i = std::get_if<std::int64_t>(value))
        n.attrs.set("value", static_cast<double>(*i));
    } else if (std::holds_alternative<double>(*value)) {
      fail_at(*value_token, "a constant of dtype " + std::string(dtype_name(n.dtype)) +
                                " needs an integer value, found " + truncated(value_token->text));
    }
  }

  // verify() names the failing node as "node %<id>"; map it back to the node's source line.
  int line_of_error(const Graph& g, std::string_view message) const {
    const std::size_t at = message.find("node %");
    if (at != std::string_view::npos) {
      std::size_t id = 0;
      std::size_t i = at + 6;
      bool any = false;
      while (i < message.size() && is_digit(message[i]) && id <= g.nodes.size()) {
        id = id * 10 + static_cast<std::size_t>(message[i] - '0');
        any = true;
        ++i;
      }
      if (any && id < g.nodes.size() && g.nodes[id].origin.text_line > 0)
        return g.nodes[id].origin.text_line;
    }
    return func_line_;
  }

  void check_result_types(const Graph& g, const std::vector<int>& output_lines) const {
    if (g.outputs.size() != result_types_.size()) {
      const int line = output_lines.empty() ? func_line_ : output_lines.front();
      throw InvalidGraphError("line " + std::to_string(line) + ": the signature declares " +
                              std::to_string(result_types_.size()) + " result(s) but 'return' " +
                              "lists " + std::to_string(g.outputs.size()));
    }
    for (std::size_t i = 0; i < g.outputs.size(); ++i) {
      const Node& n = g.node(g.outputs[i]);
      const TensorType actual{n.dtype, n.shape};
      if (actual != result_types_[i])
        throw InvalidGraphError(
            "line " + std::to_string(output_lines[i]) + ": result " + std::to_string(i) +
            " is declared " + type_to_string(result_types_[i]) +
            " in the signature but the returned value is " + type_to_string(actual));
    }
  }

  Lexer lex_;
  Token tok_;
  int func_line_ = 1;
  std::vector<TensorType> result_types_;
  std::unordered_map<std::string, Definition> values_;
};

}  // namespace

Graph parse_graph(std::string_view text) {
  return Parser(text).parse();
}

}  // namespace weft
