#include "primitives/type_rule_checks.h"

#include "weft/error.h"

namespace weft::prim {

namespace {

std::string operands_to_string(std::span<const TensorType> operands) {
  std::string s;
  for (std::size_t i = 0; i < operands.size(); ++i) {
    if (i) s += ", ";
    s += type_to_string(operands[i]);
  }
  return s;
}

}  // namespace

std::string list_to_string(const std::vector<std::int64_t>& v) {
  return shape_to_string(v);
}

void shape_fail(OpKind op, std::span<const TensorType> operands, const std::string& what) {
  throw ShapeError(std::string(op_name(op)) + ": " + what +
                   " (operands: " + operands_to_string(operands) + ")");
}

void dtype_fail(OpKind op, std::span<const TensorType> operands, const std::string& what) {
  throw DTypeError(std::string(op_name(op)) + ": " + what +
                   " (operands: " + operands_to_string(operands) + ")");
}

void check_axes_list(OpKind op, std::span<const TensorType> operands,
                     const std::vector<std::int64_t>& axes, std::size_t rank, const char* attr) {
  for (std::size_t i = 0; i < axes.size(); ++i) {
    if (axes[i] < 0 || axes[i] >= static_cast<std::int64_t>(rank))
      shape_fail(op, operands,
                 std::string(attr) + "=" + list_to_string(axes) + " names an axis outside rank " +
                     std::to_string(rank));
    if (i && axes[i] <= axes[i - 1])
      shape_fail(op, operands,
                 std::string(attr) + "=" + list_to_string(axes) + " must be strictly increasing");
  }
}

}  // namespace weft::prim
