// scan: every rule of the loop over xs. Its transformation rules are in this folder, one file
// per transformation.
//
//   scan[carries=n, xs=m, length=L, reverse=0|1](c..., xs..., k...)
//       body(i32[] iteration, c..., x..., k...) -> (c..., y...)
//       results: c..., ys... (each y with L in front)
//
// x is one row of xs (leading axis L dropped); the iteration runs 0..L-1, or L-1..0 with reverse.
#include <algorithm>

#include "ir/region_checks.h"
#include "primitives/families.h"
#include "primitives/scan/rules.h"
#include "weft/error.h"
#include "weft/ir/op_attrs.h"

namespace weft::prim {

namespace {

std::string scan_region_name(std::size_t) {
  return "body";
}

std::vector<RegionSignature> scan_signatures(std::span<const TensorType> operands,
                                             const Attrs& attrs,
                                             std::span<const TensorType> results,
                                             std::size_t num_regions) {
  using namespace region_checks;
  expect_regions(OpKind::Scan, num_regions, 1);
  const std::size_t n = count_attr(OpKind::Scan, attrs, ScanAttrs::kCarries, operands.size());
  const std::size_t m = count_attr(OpKind::Scan, attrs, ScanAttrs::kXs, operands.size() - n);
  // Read one by one: `reverse` is checked as the integer it is written as.
  const std::int64_t length = attrs.get_int(ScanAttrs::kLength);
  const std::int64_t reverse = attrs.get_int(ScanAttrs::kReverse);
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

constexpr CountAttr kCountAttrs[] = {{ScanAttrs::kCarries, "a count of operands"},
                                     {ScanAttrs::kXs, "a count of operands"},
                                     {ScanAttrs::kLength, "a scan length"}};

// One row of a stacked value (its leading axis dropped), and writing one back.
interp::Value value_row(const interp::Value& stacked, std::int64_t row) {
  interp::Value out =
      interp::make_value(stacked.dtype, Shape(stacked.shape.begin() + 1, stacked.shape.end()));
  const std::int64_t n = out.size();
  if (is_float(stacked.dtype)) {
    std::copy_n(stacked.f.begin() + row * n, n, out.f.begin());
  } else {
    std::copy_n(stacked.i.begin() + row * n, n, out.i.begin());
  }
  return out;
}

void set_value_row(interp::Value& stacked, std::int64_t row, const interp::Value& value) {
  const std::int64_t n = value.size();
  if (is_float(stacked.dtype)) {
    std::copy_n(value.f.begin(), n, stacked.f.begin() + row * n);
  } else {
    std::copy_n(value.i.begin(), n, stacked.i.begin() + row * n);
  }
}

std::vector<interp::Value> evaluate_scan(const Node& node, interp::Operands operands,
                                         const interp::RunGraph& run) {
  const auto [carries, xs, length, reverse] = ScanAttrs::read(node.attrs);
  const auto n = static_cast<std::size_t>(carries);
  const auto m = static_cast<std::size_t>(xs);
  std::vector<interp::Value> out;
  for (std::size_t k = 0; k < n; ++k) out.push_back(*operands[k]);
  for (std::size_t j = n; j < node.results.size(); ++j)
    out.push_back(interp::make_value(node.results[j].dtype, node.results[j].shape));
  // Body parameters: the iteration, the carries, one row of each xs, the captured values.
  std::vector<interp::Value> args(1 + n + m);
  for (std::size_t k = n + m; k < operands.size(); ++k) args.push_back(*operands[k]);
  for (std::int64_t step = 0; step < length; ++step) {
    const std::int64_t row = reverse ? length - 1 - step : step;
    args[0] = interp::make_value(DType::I32, {});
    args[0].i[0] = row;
    for (std::size_t k = 0; k < n; ++k) args[1 + k] = std::move(out[k]);
    for (std::size_t j = 0; j < m; ++j) args[1 + n + j] = value_row(*operands[n + j], row);
    std::vector<interp::Value> results = run(node.regions[0], args);
    for (std::size_t k = 0; k < n; ++k) out[k] = std::move(results[k]);
    for (std::size_t j = n; j < results.size(); ++j) set_value_row(out[j], row, results[j]);
  }
  return out;
}

// Effect tokens are extra carries, after the user's: the body takes them after its iteration
// and carries and returns them after its carries.
TokenPlacement scan_tokens(const Node& node) {
  const auto carries = static_cast<std::size_t>(ScanAttrs::read(node.attrs).carries);
  return {.operands_at = carries,
          .results_at = carries,
          .as_carries = true,
          .regions = {{1 + carries, carries}}};
}

}  // namespace

void define_scan_primitive(Definitions& defs) {
  Primitive p = jax_names(row(OpKind::Scan, "scan", OpClass::Control, -1), "scan fori_loop");
  p.regions = {.min = 1, .max = 1, .name = scan_region_name, .signatures = scan_signatures};
  p.count_attrs = kCountAttrs;
  p.evaluate_control = evaluate_scan;
  p.control_flow = ControlFlow::counted_loop;
  p.token_placement = scan_tokens;
  p.control_jvp.fn = scan_rules::jvp;
  p.control_linearize.fn = scan_rules::linearize;
  p.control_transpose.fn = scan_rules::transpose;
  p.control_batch.fn = scan_rules::batch;
  defs.add(std::move(p));
}

}  // namespace weft::prim
