// The IR text form's lexical layer, shared by the printer (which must only print what the
// lexer reads back) and the parser. Internal to core.
#pragma once

#include <algorithm>
#include <charconv>
#include <climits>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <unordered_map>
#include <variant>
#include <vector>

#include "weft/error.h"
#include "weft/ir/shape_rules.h"

namespace weft::text_syntax {

// Dimension sizes and integer-list attribute entries are bounded so that every piece of shape
// arithmetic in the shape rules (pad sizes, slice counts, element counts) stays far from
// int64 overflow, whatever the text says.
constexpr std::int64_t kMaxExtent = std::numeric_limits<std::int32_t>::max();

// Regions may nest this many levels deep (a control op in the function body opens level 1).
// The parser, verify, the printer and the passes all recurse once per level, so a bound keeps
// hostile text from exhausting the stack.
constexpr int kMaxRegionDepth = 64;

inline bool is_ident_start(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_';
}
inline bool is_digit(char c) {
  return c >= '0' && c <= '9';
}
inline bool is_ident_char(char c) {
  return is_ident_start(c) || is_digit(c) || c == '.';
}

// ---------------------------------------------------------------------------------------------
// Lexing. Tokens are produced on demand so that the first error in reading order is the one
// reported; a bad character becomes an Invalid token and is reported by whatever the parser
// expected at that point.

enum class Tok : std::uint8_t {
  End,
  Invalid,
  Ident,   // [A-Za-z_][A-Za-z0-9_.]*: keywords, op names, dtypes, attribute names, inf, nan
  Value,   // %[A-Za-z0-9_.]+
  String,  // "..." with \" and \\ escapes
  Int,
  Float,
  LParen,
  RParen,
  LBracket,
  RBracket,
  LBrace,
  RBrace,
  Comma,
  Colon,
  Equals,
  Arrow,
  At,
};

struct Token {
  Tok kind = Tok::End;
  std::string_view text;
  int line = 1;
  int column = 1;
  std::string problem;  // for Invalid: what was found instead of a token
};

inline std::string truncated(std::string_view s) {
  constexpr std::size_t kMax = 40;
  if (s.size() <= kMax) return std::string(s);
  return std::string(s.substr(0, kMax)) + "...";
}

inline std::string describe(const Token& t) {
  switch (t.kind) {
    case Tok::End:
      return "end of input";
    case Tok::Invalid:
      return t.problem;
    case Tok::String:
      return "a quoted string";
    default:
      return "'" + truncated(t.text) + "'";
  }
}

class Lexer {
 public:
  explicit Lexer(std::string_view src) : src_(src) {}

  Token next() {
    skip_space_and_comments();
    Token t;
    t.line = line_;
    t.column = column();
    const std::size_t start = pos_;
    if (pos_ >= src_.size()) return t;
    const char c = src_[pos_];
    if (is_ident_start(c)) {
      while (pos_ < src_.size() && is_ident_char(src_[pos_])) ++pos_;
      t.kind = Tok::Ident;
    } else if (c == '%') {
      ++pos_;
      while (pos_ < src_.size() && is_ident_char(src_[pos_])) ++pos_;
      t.kind = pos_ - start > 1 ? Tok::Value : Tok::Invalid;
      if (t.kind == Tok::Invalid) t.problem = "'%' without a value name";
    } else if (c == '"') {
      lex_string(t);
    } else if (is_digit(c) || (c == '-' && is_digit(at(pos_ + 1)))) {
      lex_number(t);
    } else if (c == '-' && at(pos_ + 1) == '>') {
      pos_ += 2;
      t.kind = Tok::Arrow;
    } else if (c == '-' && src_.substr(pos_ + 1, 3) == "inf" && !is_ident_char(at(pos_ + 4))) {
      pos_ += 4;
      t.kind = Tok::Float;
    } else {
      t.kind = punctuation(c);
      ++pos_;
      if (t.kind == Tok::Invalid) t.problem = describe_char(c);
    }
    t.text = src_.substr(start, pos_ - start);
    return t;
  }

 private:
  char at(std::size_t i) const { return i < src_.size() ? src_[i] : '\0'; }

  int column() const {
    return static_cast<int>(std::min<std::size_t>(pos_ - line_start_ + 1, INT_MAX));
  }

  void newline_at(std::size_t newline_pos) {
    if (line_ < INT_MAX) ++line_;
    line_start_ = newline_pos + 1;
  }

  void skip_space_and_comments() {
    while (pos_ < src_.size()) {
      const char c = src_[pos_];
      if (c == '\n') {
        newline_at(pos_);
        ++pos_;
      } else if (c == ' ' || c == '\t' || c == '\r') {
        ++pos_;
      } else if (c == '#') {
        while (pos_ < src_.size() && src_[pos_] != '\n') ++pos_;
      } else {
        break;
      }
    }
  }

  // Strings may span lines: any byte but an unescaped quote or backslash stands for itself.
  void lex_string(Token& t) {
    ++pos_;
    while (true) {
      if (pos_ >= src_.size()) {
        t.kind = Tok::Invalid;
        t.problem = "an unterminated string (a closing '\"' is missing)";
        return;
      }
      const char c = src_[pos_];
      if (c == '"') {
        ++pos_;
        t.kind = Tok::String;
        return;
      }
      if (c == '\\') {
        const char e = at(pos_ + 1);
        if (pos_ + 1 >= src_.size() || (e != '"' && e != '\\')) {
          t.kind = Tok::Invalid;
          t.problem = "a string with an unsupported escape (only \\\" and \\\\ are allowed)";
          return;
        }
        pos_ += 2;
        continue;
      }
      if (c == '\n') newline_at(pos_);
      ++pos_;
    }
  }

  // -?[0-9]+(\.[0-9]+)?([eE][+-]?[0-9]+)?, and no identifier character right after it.
  void lex_number(Token& t) {
    const std::size_t start = pos_;
    if (src_[pos_] == '-') ++pos_;
    while (is_digit(at(pos_))) ++pos_;
    bool is_float = false;
    if (at(pos_) == '.' && is_digit(at(pos_ + 1))) {
      is_float = true;
      ++pos_;
      while (is_digit(at(pos_))) ++pos_;
    }
    if (at(pos_) == 'e' || at(pos_) == 'E') {
      std::size_t q = pos_ + 1;
      if (at(q) == '+' || at(q) == '-') ++q;
      if (is_digit(at(q))) {
        is_float = true;
        pos_ = q;
        while (is_digit(at(pos_))) ++pos_;
      }
    }
    if (is_ident_char(at(pos_))) {
      while (is_ident_char(at(pos_))) ++pos_;
      t.kind = Tok::Invalid;
      t.problem = "malformed number '" + truncated(src_.substr(start, pos_ - start)) + "'";
      return;
    }
    t.kind = is_float ? Tok::Float : Tok::Int;
  }

  static Tok punctuation(char c) {
    switch (c) {
      case '(':
        return Tok::LParen;
      case ')':
        return Tok::RParen;
      case '[':
        return Tok::LBracket;
      case ']':
        return Tok::RBracket;
      case '{':
        return Tok::LBrace;
      case '}':
        return Tok::RBrace;
      case ',':
        return Tok::Comma;
      case ':':
        return Tok::Colon;
      case '=':
        return Tok::Equals;
      case '@':
        return Tok::At;
      default:
        return Tok::Invalid;
    }
  }

  static std::string describe_char(char c) {
    const auto u = static_cast<unsigned char>(c);
    if (u >= 0x20 && u < 0x7f) return "unexpected character '" + std::string(1, c) + "'";
    static constexpr char kHex[] = "0123456789abcdef";
    return std::string("unexpected byte 0x") + kHex[u >> 4] + kHex[u & 15];
  }

  std::string_view src_;
  std::size_t pos_ = 0;
  std::size_t line_start_ = 0;
  int line_ = 1;
};

}  // namespace weft::text_syntax
