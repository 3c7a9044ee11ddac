#include "weft/ir/regions.h"

#include "ir/region_checks.h"
#include "primitives/primitive.h"
#include "weft/error.h"

namespace weft {

namespace region_checks {

namespace {

std::string types_to_string(std::span<const TensorType> types) {
  std::string s = "(";
  for (std::size_t i = 0; i < types.size(); ++i) s += (i ? ", " : "") + type_to_string(types[i]);
  return s + ")";
}

}  // namespace

void fail(OpKind op, const std::string& what) {
  throw InvalidGraphError(std::string(op_name(op)) + ": " + what);
}

std::size_t count_attr(OpKind op, const Attrs& attrs, const char* name, std::size_t available) {
  const std::int64_t n = attrs.get_int(name);
  if (n < 0 || static_cast<std::size_t>(n) > available)
    fail(op, std::string(name) + "=" + std::to_string(n) + " but only " +
                 std::to_string(available) + " operand(s) are left for it");
  return static_cast<std::size_t>(n);
}

void expect_regions(OpKind op, std::size_t have, std::size_t want) {
  if (have != want)
    fail(op, "has " + std::to_string(have) + " region(s), expected " + std::to_string(want));
}

void expect_results(OpKind op, std::span<const TensorType> results,
                    std::span<const TensorType> want, const char* what) {
  if (!std::equal(results.begin(), results.end(), want.begin(), want.end()))
    throw ShapeError(std::string(op_name(op)) + ": results " + types_to_string(results) +
                     " differ from " + what + " " + types_to_string(want));
}

}  // namespace region_checks

namespace {

using namespace region_checks;

}  // namespace

std::string region_name(OpKind op, std::size_t index) {
  if (const auto name = prim::primitive(op).regions.name) return name(index);
  return "body";
}

std::vector<RegionSignature> region_signatures(OpKind op, std::span<const TensorType> operands,
                                               const Attrs& attrs,
                                               std::span<const TensorType> results,
                                               std::size_t num_regions) {
  if (const auto rule = prim::primitive(op).regions.signatures)
    return rule(operands, attrs, results, num_regions);
  if (num_regions != 0) fail(op, "is not a control op and cannot own regions");
  return {};
}

}  // namespace weft
