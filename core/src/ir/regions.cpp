#include "weft/ir/regions.h"

#include "primitives/custom_attrs.h"
#include "weft/error.h"

namespace weft {
namespace {

std::string types_to_string(std::span<const TensorType> types) {
  std::string s = "(";
  for (std::size_t i = 0; i < types.size(); ++i) s += (i ? ", " : "") + type_to_string(types[i]);
  return s + ")";
}

[[noreturn]] void fail(OpKind op, const std::string& what) {
  throw InvalidGraphError(std::string(op_name(op)) + ": " + what);
}

// An attribute giving a count of operands, checked against what is there.
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

std::vector<RegionSignature> while_signatures(std::span<const TensorType> operands,
                                              const Attrs& attrs,
                                              std::span<const TensorType> results,
                                              std::size_t num_regions) {
  expect_regions(OpKind::While, num_regions, 2);
  const std::size_t n = count_attr(OpKind::While, attrs, "carries", operands.size());
  std::vector<TensorType> params(operands.begin(), operands.end());
  std::vector<TensorType> carries(operands.begin(), operands.begin() + n);
  expect_results(OpKind::While, results, carries, "the carries");
  return {{"cond", params, {TensorType{DType::Bool, {}}}}, {"body", params, carries}};
}

std::vector<RegionSignature> cond_signatures(std::span<const TensorType> operands,
                                             std::span<const TensorType> results,
                                             std::size_t num_regions) {
  if (operands.empty()) fail(OpKind::Cond, "needs an index operand");
  const TensorType& index = operands[0];
  if (!index.shape.empty())
    throw ShapeError("cond: the index must be a scalar, got " + type_to_string(index));
  if (index.dtype == DType::Bool) {
    if (num_regions != 2)
      fail(OpKind::Cond,
           "a bool index selects between exactly 2 branches, got " + std::to_string(num_regions));
  } else if (!is_integer(index.dtype)) {
    throw DTypeError("cond: the index must be bool or an integer, got " + type_to_string(index));
  }
  if (num_regions == 0) fail(OpKind::Cond, "needs at least one branch");
  std::vector<TensorType> params(operands.begin() + 1, operands.end());
  std::vector<TensorType> outs(results.begin(), results.end());
  std::vector<RegionSignature> out;
  for (std::size_t b = 0; b < num_regions; ++b)
    out.push_back({region_name(OpKind::Cond, b), params, outs});
  return out;
}

std::vector<RegionSignature> scan_signatures(std::span<const TensorType> operands,
                                             const Attrs& attrs,
                                             std::span<const TensorType> results,
                                             std::size_t num_regions) {
  expect_regions(OpKind::Scan, num_regions, 1);
  const std::size_t n = count_attr(OpKind::Scan, attrs, "carries", operands.size());
  const std::size_t m = count_attr(OpKind::Scan, attrs, "xs", operands.size() - n);
  const std::int64_t length = attrs.get_int("length");
  const std::int64_t reverse = attrs.get_int("reverse");
  if (length < 0) fail(OpKind::Scan, "length=" + std::to_string(length) + " is negative");
  if (reverse != 0 && reverse != 1)
    fail(OpKind::Scan, "reverse=" + std::to_string(reverse) + " must be 0 or 1");
  if (results.size() < n)
    fail(OpKind::Scan, "has " + std::to_string(results.size()) + " result(s), fewer than its " +
                           std::to_string(n) + " carries");
  std::vector<TensorType> carries(operands.begin(), operands.begin() + n);
  expect_results(OpKind::Scan, results.first(n), carries, "the carries");
  RegionSignature body{"body", {TensorType{DType::I32, {}}}, carries};
  body.params.insert(body.params.end(), carries.begin(), carries.end());
  auto row_of = [&](const TensorType& stacked, const std::string& what) {
    if (stacked.shape.empty() || stacked.shape[0] != length)
      throw ShapeError("scan: " + what + " " + type_to_string(stacked) +
                       " must have the scan length " + std::to_string(length) +
                       " as its leading axis");
    return TensorType{stacked.dtype, Shape(stacked.shape.begin() + 1, stacked.shape.end())};
  };
  for (std::size_t j = 0; j < m; ++j)
    body.params.push_back(row_of(operands[n + j], "xs operand " + std::to_string(j)));
  body.params.insert(body.params.end(), operands.begin() + static_cast<std::ptrdiff_t>(n + m),
                     operands.end());
  for (std::size_t j = n; j < results.size(); ++j)
    body.results.push_back(row_of(results[j], "stacked result " + std::to_string(j - n)));
  return {std::move(body)};
}

// custom_jvp, custom_vjp, checkpoint: body(operands) -> results.
std::vector<RegionSignature> custom_function_signatures(OpKind op,
                                                        std::span<const TensorType> operands,
                                                        std::span<const TensorType> results,
                                                        std::size_t num_regions) {
  expect_regions(op, num_regions, 1);
  return {{"body", std::vector<TensorType>(operands.begin(), operands.end()),
           std::vector<TensorType>(results.begin(), results.end())}};
}

// custom_lin and the collectives have no region.
std::vector<RegionSignature> no_regions(OpKind op, std::size_t num_regions) {
  expect_regions(op, num_regions, 0);
  return {};
}

}  // namespace

std::string region_name(OpKind op, std::size_t index) {
  switch (op) {
    case OpKind::While:
      return index == 0 ? "cond" : "body";
    case OpKind::Cond:
      return "branch" + std::to_string(index);
    default:
      return "body";
  }
}

std::vector<RegionSignature> region_signatures(OpKind op, std::span<const TensorType> operands,
                                               const Attrs& attrs,
                                               std::span<const TensorType> results,
                                               std::size_t num_regions) {
  switch (op) {
    case OpKind::While:
      return while_signatures(operands, attrs, results, num_regions);
    case OpKind::Cond:
      return cond_signatures(operands, results, num_regions);
    case OpKind::Scan:
      return scan_signatures(operands, attrs, results, num_regions);
    case OpKind::CustomJvp:
    case OpKind::CustomVjp:
      count_attr(op, attrs, prim::CustomFunctionAttrs::kInputs, operands.size());
      return custom_function_signatures(op, operands, results, num_regions);
    case OpKind::Checkpoint:
      return custom_function_signatures(op, operands, results, num_regions);
    case OpKind::CustomLin:
      count_attr(op, attrs, prim::CustomLinAttrs::kTangents, operands.size());
      return no_regions(op, num_regions);
    case OpKind::Psum:
    case OpKind::Pmean:
    case OpKind::Pmax:
    case OpKind::AllGather:
    case OpKind::AxisIndex:
      prim::CollectiveAttrs::read(attrs);
      return no_regions(op, num_regions);
    default:
      if (num_regions != 0) fail(op, "is not a control op and cannot own regions");
      return {};
  }
}

}  // namespace weft
