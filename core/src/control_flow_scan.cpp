// lax::scan (and lax::fori_loop with static bounds): one scan op with a body region.
#include "control_flow_internal.h"
#include "weft/error.h"
#include "weft/ir/op_attrs.h"

namespace weft::detail {
namespace {

// The scan length: the leading axis every xs leaf shares, and options.length where given.
std::int64_t scan_length(const std::vector<Array>& xs, const std::string& xs_sig,
                         const std::optional<std::int64_t>& length, const std::string& api,
                         const std::source_location& loc) {
  const std::vector<std::string> paths = leaf_paths(xs_sig, "xs", xs.size());
  std::optional<std::int64_t> axis;
  std::size_t first = 0;
  for (std::size_t k = 0; k < xs.size(); ++k) {
    const std::string type = type_to_string({xs[k].dtype(), xs[k].shape()});
    if (xs[k].shape().empty())
      throw ShapeError(at(api, loc) + paths[k] + " is a scalar (" + type +
                       "); every leaf of xs needs a leading axis to scan over");
    if (!axis) {
      axis = xs[k].shape()[0];
      first = k;
    } else if (xs[k].shape()[0] != *axis) {
      throw ShapeError(at(api, loc) +
                       "the leaves of xs must share their leading axis: " + paths[first] + " is " +
                       type_to_string({xs[first].dtype(), xs[first].shape()}) + " but " + paths[k] +
                       " is " + type);
    }
  }
  if (length && *length < 0)
    throw InvalidArgumentError(at(api, loc) + "length=" + std::to_string(*length) + " is negative");
  if (axis && length && *axis != *length)
    throw ShapeError(at(api, loc) + "length=" + std::to_string(*length) +
                     " disagrees with the leading axis " + std::to_string(*axis) + " of xs (" +
                     paths[first] + " is " +
                     type_to_string({xs[first].dtype(), xs[first].shape()}) + ")");
  if (axis) return *axis;
  if (length) return *length;
  throw InvalidArgumentError(at(api, loc) +
                             "xs has no arrays to scan over and no length was given; pass "
                             "ScanOptions{.length = n}");
}

}  // namespace

std::vector<Array> scan_flat(const std::vector<Array>& init, const std::string& init_sig,
                             const std::vector<Array>& xs, const std::string& xs_sig,
                             const FlatFn& body, const lax::ScanOptions& options,
                             const std::string& api, const std::source_location& loc) {
  check_leaves_valid(api, loc, "carry", init_sig, init);
  check_leaves_valid(api, loc, "xs", xs_sig, xs);
  const std::int64_t length = scan_length(xs, xs_sig, options.length, api, loc);
  const std::vector<TensorType> carries = types_of(init);

  std::vector<TensorType> params{TensorType{DType::I32, {}}};
  params.insert(params.end(), carries.begin(), carries.end());
  for (const Array& x : xs)
    params.push_back({x.dtype(), Shape(x.shape().begin() + 1, x.shape().end())});

  const std::string fn_name = api == "scan" ? "f" : "body_fn";
  FlatOut out;
  TracedRegion region[1] = {trace_fn(OpKind::Scan, 0, {fn_name, body}, api, loc, params, out)};
  const std::vector<TensorType> got = types_of(out.leaves);
  check_same_tree(api, loc, "carry", init_sig, carries, "init", out.sig,
                  std::vector<TensorType>(
                      got.begin(), got.begin() + static_cast<std::ptrdiff_t>(out.carry_leaves)),
                  fn_name,
                  " (a loop carry keeps its tree, dtypes and shapes; convert with astype where an "
                  "operation promotes)");
  std::vector<TensorType> results = carries;
  for (std::size_t k = out.carry_leaves; k < got.size(); ++k) {
    Shape stacked{length};
    stacked.insert(stacked.end(), got[k].shape.begin(), got[k].shape.end());
    results.push_back({got[k].dtype, std::move(stacked)});
  }

  const std::vector<Array> captured = unify_captures(region);
  std::vector<Array> operands = init;
  operands.insert(operands.end(), xs.begin(), xs.end());
  operands.insert(operands.end(), captured.begin(), captured.end());
  const Attrs attrs = ScanAttrs{.carries = static_cast<std::int64_t>(init.size()),
                                .xs = static_cast<std::int64_t>(xs.size()),
                                .length = length,
                                .reverse = options.reverse}
                          .write();
  return bind_control(OpKind::Scan, operands, attrs, {std::move(region[0].graph)}, results, api,
                      loc);
}

}  // namespace weft::detail
