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

std::vector<bool> present(std::span<const Tangent> tangents) {
  std::vector<bool> out;
  for (const Tangent& t : tangents) out.push_back(t.has_value());
  return out;
}

std::vector<Graph> graphs_of(std::vector<TracedRegion>& regions) {
  std::vector<Graph> out;
  for (TracedRegion& r : regions) out.push_back(std::move(r.graph));
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
