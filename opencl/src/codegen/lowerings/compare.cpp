// Comparisons: bool from two operands of one dtype (ordering ones not on bool).
#include <string>

#include "codegen/lowerings/families.h"

namespace weft::opencl::lowerings {
namespace {

template <Spelling Symbol>
std::string compare(const ElementOp&, const std::string& a, const std::string& b) {
  return "(" + a + " " + Symbol.text + " " + b + ")";
}

}  // namespace

void define_compare_lowerings(Lowerings& table) {
  table.add(binary(OpKind::Eq, compare<"==">));
  table.add(binary(OpKind::Ne, compare<"!=">));
  table.add(binary(OpKind::Lt, compare<"<">));
  table.add(binary(OpKind::Le, compare<"<=">));
  table.add(binary(OpKind::Gt, compare<">">));
  table.add(binary(OpKind::Ge, compare<">=">));
}

}  // namespace weft::opencl::lowerings
