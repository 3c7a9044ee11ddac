#include "signature.h"

#include <cctype>

namespace weft::cli {

namespace {

// A cursor over the text that skips whitespace and '#' comments between tokens.
class Scanner {
 public:
  explicit Scanner(std::string_view text) : text_(text) {}

  void skip() {
    while (pos_ < text_.size()) {
      const char c = text_[pos_];
      if (c == '#') {
        while (pos_ < text_.size() && text_[pos_] != '\n') ++pos_;
      } else if (std::isspace(static_cast<unsigned char>(c))) {
        ++pos_;
      } else {
        return;
      }
    }
  }
  char peek() {
    skip();
    return pos_ < text_.size() ? text_[pos_] : '\0';
  }
  bool eat(char c) {
    if (peek() != c) return false;
    ++pos_;
    return true;
  }
  bool eat_word(std::string_view word) {
    skip();
    if (text_.substr(pos_, word.size()) != word) return false;
    pos_ += word.size();
    return true;
  }
  // Letters, digits, '_' and '.': identifiers and value names.
  std::string word() {
    skip();
    const std::size_t start = pos_;
    while (pos_ < text_.size() && (std::isalnum(static_cast<unsigned char>(text_[pos_])) ||
                                   text_[pos_] == '_' || text_[pos_] == '.'))
      ++pos_;
    return std::string(text_.substr(start, pos_ - start));
  }
  // A quoted function name with '\' escapes.
  bool skip_string() {
    if (!eat('"')) return false;
    while (pos_ < text_.size() && text_[pos_] != '"') pos_ += text_[pos_] == '\\' ? 2 : 1;
    return pos_++ < text_.size();
  }
  // Everything up to and including the next ']' (a type's dimension list).
  bool skip_past(char c) {
    while (pos_ < text_.size() && text_[pos_] != c) ++pos_;
    return pos_++ < text_.size();
  }

 private:
  std::string_view text_;
  std::size_t pos_ = 0;
};

}  // namespace

std::vector<std::string> parameter_names(std::string_view text) {
  Scanner s(text);
  if (!s.eat_word("func") || !s.eat('@')) return {};
  if (s.peek() == '"' ? !s.skip_string() : s.word().empty()) return {};
  if (!s.eat('(')) return {};
  std::vector<std::string> names;
  if (s.eat(')')) return names;
  while (true) {
    if (!s.eat('%')) return {};
    std::string name = s.word();
    if (name.empty() || !s.eat(':') || s.word().empty() || !s.eat('[') || !s.skip_past(']'))
      return {};
    names.push_back(std::move(name));
    if (s.eat(')')) return names;
    if (!s.eat(',')) return {};
  }
}

}  // namespace weft::cli
