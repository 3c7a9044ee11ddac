// lax::cond and lax::switch_: one cond op whose regions are the branches.
#include "control_flow_internal.h"
#include "weft/error.h"
#include "weft/ops.h"

namespace weft::detail {
namespace {

// The index operand of the cond op: a bool predicate (lax::cond; an integer predicate is
// compared with 0, as JAX does) or an integer index (lax::switch_).
Array checked_index(const Array& index, bool boolean, const std::source_location& loc) {
  const std::string api = boolean ? "cond" : "switch_";
  const std::string what = boolean ? "the predicate" : "the index";
  if (!index.valid()) throw InvalidArgumentError(at(api, loc) + what + " is an empty Array");
  const std::string type = type_to_string({index.dtype(), index.shape()});
  if (!index.shape().empty())
    throw ShapeError(at(api, loc) + what + " must be a scalar, got " + type +
                     (boolean ? "; reduce it with np::all/np::any, or use np::where to select "
                                "elementwise"
                              : ""));
  if (boolean) {
    if (index.dtype() == DType::Bool) return index;
    if (is_integer(index.dtype())) return lax::ne(index, Array::scalar_int(0, index.dtype()), loc);
    throw DTypeError(at(api, loc) + what + " must be bool or an integer, got " + type);
  }
  if (!is_integer(index.dtype()))
    throw DTypeError(at(api, loc) + what +
                     " must be an integer (i8, i16, i32, i64, u8, u16, u32 or u64), got " + type +
                     (index.dtype() == DType::Bool ? "; use lax::cond for a bool predicate" : ""));
  return index;
}

}  // namespace

std::vector<Array> cond_flat(const Array& index, bool boolean, const std::vector<NamedFn>& branches,
                             const std::vector<Array>& operands, const std::source_location& loc) {
  const std::string api = boolean ? "cond" : "switch_";
  if (branches.empty()) throw InvalidArgumentError(at(api, loc) + "needs at least one branch");
  const Array pred = checked_index(index, boolean, loc);
  check_leaves_valid(api, loc, "operands", "", operands);
  const std::vector<TensorType> params = types_of(operands);

  // Traced in the user's order (true_fn first); the regions are in index order (for a bool
  // predicate, false first).
  std::vector<TracedRegion> traced;
  FlatOut first;
  std::vector<TensorType> first_types;
  for (std::size_t k = 0; k < branches.size(); ++k) {
    const std::size_t region = boolean ? 1 - k : k;
    FlatOut out;
    traced.push_back(trace_fn(OpKind::Cond, region, branches[k], api, loc, params, out));
    const std::vector<TensorType> types = types_of(out.leaves);
    if (k == 0) {
      first = std::move(out);
      first_types = types;
      continue;
    }
    check_same_tree(api, loc, "output", first.sig, first_types, branches[0].name, out.sig, types,
                    branches[k].name,
                    " (every branch must return the same tree of the same types)");
  }
  const std::vector<Array> captured = unify_captures(traced);

  std::vector<Graph> regions;
  for (std::size_t r = 0; r < traced.size(); ++r)
    regions.push_back(std::move(traced[boolean ? 1 - r : r].graph));
  std::vector<Array> all{pred};
  all.insert(all.end(), operands.begin(), operands.end());
  all.insert(all.end(), captured.begin(), captured.end());
  return bind_control(OpKind::Cond, all, {}, std::move(regions), first_types, api, loc);
}

}  // namespace weft::detail
