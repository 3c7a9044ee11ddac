// lax::while_loop and the checks of lax::fori_loop's bounds.
#include <limits>

#include "control_flow_internal.h"
#include "weft/error.h"
#include "weft/ir/op_attrs.h"

namespace weft::detail {

std::vector<Array> while_loop_flat(const std::vector<Array>& init, const std::string& init_sig,
                                   std::size_t hidden, const NamedFn& cond, const NamedFn& body,
                                   const std::string& api, const std::source_location& loc) {
  check_leaves_valid(api, loc, "carry", init_sig, init, hidden);
  const std::vector<TensorType> carries = types_of(init);

  FlatOut cond_out;
  TracedRegion regions[2] = {trace_fn(OpKind::While, 0, cond, api, loc, carries, cond_out), {}};
  const TensorType want{DType::Bool, {}};
  if (cond_out.leaves.size() != 1 || cond_out.leaves[0].dtype() != DType::Bool ||
      !cond_out.leaves[0].shape().empty()) {
    const std::string got =
        cond_out.leaves.size() == 1
            ? type_to_string({cond_out.leaves[0].dtype(), cond_out.leaves[0].shape()})
            : std::to_string(cond_out.leaves.size()) + " arrays";
    const std::string msg = at(api, loc) + cond.name + " must return a bool scalar (bool[]), got " +
                            got +
                            "; reduce an array condition with np::all/np::any, compare a "
                            "number with a comparison operator";
    if (cond_out.leaves.size() == 1 && cond_out.leaves[0].dtype() == DType::Bool)
      throw ShapeError(msg);
    throw DTypeError(msg);
  }

  FlatOut body_out;
  regions[1] = trace_fn(OpKind::While, 1, body, api, loc, carries, body_out);
  const std::vector<TensorType> got = types_of(body_out.leaves);
  const std::vector<TensorType> want_tree(carries.begin() + static_cast<std::ptrdiff_t>(hidden),
                                          carries.end());
  const std::vector<TensorType> got_tree(
      got.begin() + static_cast<std::ptrdiff_t>(std::min(hidden, got.size())), got.end());
  check_same_tree(api, loc, "carry", init_sig, want_tree, "init", body_out.sig, got_tree, body.name,
                  " (a loop carry keeps its tree, dtypes and shapes; convert with astype where "
                  "an operation promotes)");

  std::vector<Array> operands = init;
  const std::vector<Array> captured = unify_captures(regions);
  operands.insert(operands.end(), captured.begin(), captured.end());
  const Attrs attrs = WhileAttrs{static_cast<std::int64_t>(init.size())}.write();
  return bind_control(OpKind::While, operands, attrs,
                      {std::move(regions[0].graph), std::move(regions[1].graph)}, carries, api,
                      loc);
}

std::int64_t fori_trip_count(std::int64_t lower, std::int64_t upper,
                             const std::source_location& loc) {
  constexpr std::int64_t lo = std::numeric_limits<std::int32_t>::min();
  constexpr std::int64_t hi = std::numeric_limits<std::int32_t>::max();
  if (lower < lo || lower > hi || upper < lo || upper > hi)
    throw InvalidArgumentError(at("fori_loop", loc) + "the bounds [" + std::to_string(lower) +
                               ", " + std::to_string(upper) +
                               ") leave the i32 range of the loop index; pass the bounds as "
                               "i64 Arrays for a wider index");
  return upper > lower ? upper - lower : 0;
}

namespace {

void check_bound(const Array& a, const char* which, const std::source_location& loc) {
  if (!a.valid())
    throw InvalidArgumentError(at("fori_loop", loc) + "the " + which + " bound is an empty Array");
  const std::string type = type_to_string({a.dtype(), a.shape()});
  if (!is_integer(a.dtype()))
    throw DTypeError(at("fori_loop", loc) + "the " + which +
                     " bound must be an integer scalar, got " + type +
                     "; convert it with astype(DType::I32)");
  if (!a.shape().empty())
    throw ShapeError(at("fori_loop", loc) + "the " + which +
                     " bound must be an integer scalar, got " + type);
}

}  // namespace

std::pair<Array, Array> fori_bounds(const Array* lower, std::int64_t lower_value,
                                    const Array* upper, std::int64_t upper_value,
                                    const std::source_location& loc) {
  if (lower) check_bound(*lower, "lower", loc);
  if (upper) check_bound(*upper, "upper", loc);
  if (lower && upper && lower->dtype() != upper->dtype())
    throw DTypeError(at("fori_loop", loc) + "the bounds must have one dtype, got lower " +
                     type_to_string({lower->dtype(), lower->shape()}) + " and upper " +
                     type_to_string({upper->dtype(), upper->shape()}) +
                     "; convert one with astype");
  const DType dtype = lower ? lower->dtype() : upper->dtype();
  return {lower ? *lower : Array::scalar_int(lower_value, dtype),
          upper ? *upper : Array::scalar_int(upper_value, dtype)};
}

}  // namespace weft::detail
