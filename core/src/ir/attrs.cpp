#include "weft/ir/attrs.h"

#include <algorithm>
#include <bit>

#include "weft/error.h"

namespace weft {

Attrs::Attrs(std::initializer_list<std::pair<std::string, AttrValue>> items) {
  for (const auto& [name, value] : items) set(name, value);
}

void Attrs::set(std::string name, AttrValue value) {
  auto it = std::lower_bound(items_.begin(), items_.end(), name,
                             [](const auto& item, const std::string& n) { return item.first < n; });
  if (it != items_.end() && it->first == name) {
    it->second = std::move(value);
  } else {
    items_.insert(it, {std::move(name), std::move(value)});
  }
}

const AttrValue* Attrs::find(std::string_view name) const {
  for (const auto& item : items_)
    if (item.first == name) return &item.second;
  return nullptr;
}

bool Attrs::has(std::string_view name) const {
  return find(name) != nullptr;
}

namespace {
[[noreturn]] void bad_attr(std::string_view name, const char* want) {
  throw InvalidGraphError("attribute '" + std::string(name) + "' is missing or is not " + want +
                          "; check the op's attributes");
}
}  // namespace

std::int64_t Attrs::get_int(std::string_view name) const {
  const AttrValue* v = find(name);
  if (!v || !std::holds_alternative<std::int64_t>(*v)) bad_attr(name, "an integer");
  return std::get<std::int64_t>(*v);
}

double Attrs::get_float(std::string_view name) const {
  const AttrValue* v = find(name);
  if (v && std::holds_alternative<double>(*v)) return std::get<double>(*v);
  if (v && std::holds_alternative<std::int64_t>(*v))
    return static_cast<double>(std::get<std::int64_t>(*v));
  bad_attr(name, "a number");
}

const std::vector<std::int64_t>& Attrs::get_ints(std::string_view name) const {
  const AttrValue* v = find(name);
  if (!v || !std::holds_alternative<std::vector<std::int64_t>>(*v))
    bad_attr(name, "an integer list");
  return std::get<std::vector<std::int64_t>>(*v);
}

const std::string& Attrs::get_string(std::string_view name) const {
  const AttrValue* v = find(name);
  if (!v || !std::holds_alternative<std::string>(*v)) bad_attr(name, "a string");
  return std::get<std::string>(*v);
}

// Floats compare by bit pattern so a NaN constant equals itself after a round trip.
bool Attrs::operator==(const Attrs& other) const {
  if (items_.size() != other.items_.size()) return false;
  for (std::size_t i = 0; i < items_.size(); ++i) {
    const auto& [name, value] = items_[i];
    const auto& [other_name, other_value] = other.items_[i];
    if (name != other_name || value.index() != other_value.index()) return false;
    if (std::holds_alternative<double>(value)) {
      if (std::bit_cast<std::uint64_t>(std::get<double>(value)) !=
          std::bit_cast<std::uint64_t>(std::get<double>(other_value)))
        return false;
    } else if (value != other_value) {
      return false;
    }
  }
  return true;
}

}  // namespace weft
