#include "transforms/control_rules.h"
#include "transforms/staging.h"
#include "weft/ir/regions.h"

namespace weft::detail {

std::vector<TensorType> value_types(std::span<const Array> values) {
  std::vector<TensorType> out;
  out.reserve(values.size());
  for (const Array& v : values) out.push_back({v.dtype(), v.shape()});
  return out;
}

Array instantiate(const Tangent& t, const TensorType& type, const std::source_location& loc) {
  return t ? *t : zeros_of(type, loc);
}

RegionInfo transformed_region(const Node& n, std::size_t k, const std::string& api,
                              const std::source_location& loc) {
  const std::string name = region_name(n.op, k);
  return {.name = name,
          .function = name + " (" + api + " of " + std::string(op_name(n.op)) + " at " +
                      n.origin.describe() + ")",
          .api = api,
          .loc = loc};
}

}  // namespace weft::detail
