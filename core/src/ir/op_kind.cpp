#include "weft/ir/op_kind.h"

#include <string>

#include "primitives/primitive.h"

namespace weft {

const OpInfo& op_info(OpKind kind) {
  return prim::primitive(kind).info;
}

std::optional<OpKind> op_from_name(std::string_view name) {
  for (int k = 0; k < kNumOpKinds; ++k)
    if (op_info(static_cast<OpKind>(k)).name == name) return static_cast<OpKind>(k);
  return std::nullopt;
}

std::string_view all_op_names_csv() {
  static const std::string csv = [] {
    std::string s;
    for (int k = 0; k < kNumOpKinds; ++k) {
      if (!s.empty()) s += ",";
      s += op_info(static_cast<OpKind>(k)).name;
    }
    return s;
  }();
  return csv;
}

}  // namespace weft
