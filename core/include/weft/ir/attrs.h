// Op attributes: a small sorted map from name to int, float, int list or string. Sorted so the
// text form is canonical without extra work.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace weft {

using AttrValue = std::variant<std::int64_t, double, std::vector<std::int64_t>, std::string>;

class Attrs {
 public:
  Attrs() = default;
  Attrs(std::initializer_list<std::pair<std::string, AttrValue>> items);

  void set(std::string name, AttrValue value);
  bool has(std::string_view name) const;
  const AttrValue* find(std::string_view name) const;

  // Typed getters throw InvalidGraphError naming the attribute when absent or mistyped.
  std::int64_t get_int(std::string_view name) const;
  double get_float(std::string_view name) const;  // accepts an int attribute too
  const std::vector<std::int64_t>& get_ints(std::string_view name) const;
  const std::string& get_string(std::string_view name) const;

  const std::vector<std::pair<std::string, AttrValue>>& items() const { return items_; }
  bool empty() const { return items_.empty(); }
  bool operator==(const Attrs& other) const;

 private:
  std::vector<std::pair<std::string, AttrValue>> items_;  // sorted by name, unique
};

}  // namespace weft
