// lax::associative_scan, after JAX's: combine neighbouring pairs, scan the half-length
// sequence of pairs recursively (the odd positions' prefixes), combine those with the
// remaining even elements, and interleave. log2(n) rounds of slices and element-wise calls.
#include "weft/associative_scan.h"

#include "control_flow_internal.h"
#include "weft/error.h"
#include "weft/ops.h"

namespace weft::lax {
namespace {

struct Along {
  std::int64_t axis;
  std::source_location loc;

  // elements start, start + stride, ... before limit along the axis.
  Array slice(const Array& x, std::int64_t start, std::int64_t limit,
              std::int64_t stride = 1) const {
    Axes begin(x.shape().size(), 0), end(x.shape().begin(), x.shape().end()),
        step(x.shape().size(), 1);
    begin[axis] = start;
    end[axis] = limit;
    step[axis] = stride;
    return lax::slice(x, begin, end, step, loc);
  }
  std::vector<Array> slice(const std::vector<Array>& xs, std::int64_t start, std::int64_t limit,
                           std::int64_t stride = 1) const {
    std::vector<Array> out;
    for (const Array& x : xs) out.push_back(slice(x, start, limit, stride));
    return out;
  }
  std::int64_t length(const std::vector<Array>& xs) const { return xs[0].shape()[axis]; }

  // even[0], odd[0], even[1], ...: both spread out with holes, then each position picks its
  // source (a select, not a sum: -0.0 and NaN payloads pass unchanged).
  Array interleave(const Array& even, const Array& odd) const {
    const std::int64_t n = even.shape()[axis] + odd.shape()[axis];
    Axes low(even.shape().size(), 0), high(even.shape().size(), 0),
        interior(even.shape().size(), 0);
    interior[axis] = 1;
    const Array zero = lax::constant(0, even.dtype(), loc);
    high[axis] = n - (2 * even.shape()[axis] - 1);
    const Array spread_even = lax::pad(even, zero, low, high, interior, loc);
    low[axis] = 1;
    high[axis] = n - (2 * odd.shape()[axis]);
    const Array spread_odd = lax::pad(odd, zero, low, high, interior, loc);
    Shape shape = even.shape();
    shape[axis] = n;
    const Array position = lax::iota(DType::I32, shape, axis, loc);
    auto filled = [&](double v) {
      return lax::broadcast_in_dim(lax::constant(v, DType::I32, loc), shape, {}, loc);
    };
    const Array is_even = lax::eq(lax::rem(position, filled(2), loc), filled(0), loc);
    return lax::select(is_even, spread_even, spread_odd, loc);
  }
};

// fn(a, b), checked to return one array per element of the tuples.
std::vector<Array> combine(const AssociativeCombine& fn, const std::vector<Array>& a,
                           const std::vector<Array>& b, const Along& along) {
  std::vector<Array> c = fn(a, b);
  if (c.size() != a.size())
    throw ShapeError(detail::at("lax::associative_scan", along.loc) +
                     "the combine function returned " + std::to_string(c.size()) +
                     " arrays for tuples of " + std::to_string(a.size()) +
                     "; it must return one per array");
  return c;
}

std::vector<Array> scan(const AssociativeCombine& fn, const std::vector<Array>& elems,
                        const Along& along) {
  const std::int64_t n = along.length(elems);
  if (n < 2) return elems;
  // Pairs (0, 1), (2, 3), ...: their prefixes are the odd positions' results.
  const std::vector<Array> odd = scan(
      fn, combine(fn, along.slice(elems, 0, n - 1, 2), along.slice(elems, 1, n, 2), along), along);
  // Even positions 2, 4, ...: the previous odd result combined with the element.
  const std::vector<Array> rest = n > 2 ? along.slice(elems, 2, n, 2) : std::vector<Array>{};
  const std::vector<Array> even =
      rest.empty()
          ? std::vector<Array>{}
          : combine(fn, n % 2 == 0 ? along.slice(odd, 0, along.length(odd) - 1) : odd, rest, along);
  std::vector<Array> out;
  for (std::size_t k = 0; k < elems.size(); ++k) {
    const Array first = along.slice(elems[k], 0, 1);
    const Array evens =
        rest.empty() ? first : lax::concatenate({first, even[k]}, along.axis, along.loc);
    out.push_back(along.interleave(evens, odd[k]));
  }
  return out;
}

}  // namespace

std::vector<Array> associative_scan(const AssociativeCombine& fn, const std::vector<Array>& elems,
                                    bool reverse, std::int64_t axis, std::source_location loc) {
  const std::string api = "lax::associative_scan";
  if (elems.empty()) throw ShapeError(detail::at(api, loc) + "needs at least one array to scan");
  const std::int64_t rank = static_cast<std::int64_t>(elems[0].shape().size());
  if (axis < -rank || axis >= rank)
    throw ShapeError(
        detail::at(api, loc) + "axis " + std::to_string(axis) + " is out of range for " +
        type_to_string({elems[0].dtype(), elems[0].shape()}) + "; give an axis in [-rank, rank)");
  if (axis < 0) axis += rank;
  for (const Array& e : elems)
    if (static_cast<std::int64_t>(e.shape().size()) <= axis ||
        e.shape()[axis] != elems[0].shape()[axis])
      throw ShapeError(detail::at(api, loc) + "every array must have axis " + std::to_string(axis) +
                       " of length " + std::to_string(elems[0].shape()[axis]) + " (the first is " +
                       type_to_string({elems[0].dtype(), elems[0].shape()}) + "), but one is " +
                       type_to_string({e.dtype(), e.shape()}));
  const Along along{axis, loc};
  std::vector<Array> in = elems;
  if (reverse)
    for (Array& e : in) e = lax::rev(e, {axis}, loc);
  std::vector<Array> out = scan(fn, in, along);
  if (reverse)
    for (Array& e : out) e = lax::rev(e, {axis}, loc);
  return out;
}

}  // namespace weft::lax
