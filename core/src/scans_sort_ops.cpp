// weft::lax's cumulative ops, rev and sorting (their primitives: primitives/cumulative.cpp,
// rev.cpp, sort.cpp).
#include "weft/ir/op_attrs.h"
#include "weft/ops.h"
#include "weft/trace/trace.h"

namespace weft::lax {

namespace {

Array cumulative(OpKind op, const Array& x, std::int64_t axis, bool reverse,
                 const std::source_location& loc) {
  const Array operands[] = {x};
  return detail::bind(op, operands, CumulativeAttrs{axis, reverse}.write(), {}, loc);
}

}  // namespace

Array cumsum(const Array& x, std::int64_t axis, bool reverse, std::source_location loc) {
  return cumulative(OpKind::Cumsum, x, axis, reverse, loc);
}
Array cumprod(const Array& x, std::int64_t axis, bool reverse, std::source_location loc) {
  return cumulative(OpKind::Cumprod, x, axis, reverse, loc);
}
Array cummax(const Array& x, std::int64_t axis, bool reverse, std::source_location loc) {
  return cumulative(OpKind::Cummax, x, axis, reverse, loc);
}
Array cummin(const Array& x, std::int64_t axis, bool reverse, std::source_location loc) {
  return cumulative(OpKind::Cummin, x, axis, reverse, loc);
}
Array cumlogsumexp(const Array& x, std::int64_t axis, bool reverse, std::source_location loc) {
  return cumulative(OpKind::Cumlogsumexp, x, axis, reverse, loc);
}

Array rev(const Array& x, const Axes& dimensions, std::source_location loc) {
  const Array operands[] = {x};
  return detail::bind(OpKind::Rev, operands, RevAttrs{dimensions}.write(), {}, loc);
}

namespace {

std::int64_t sort_axis(std::int64_t dimension, const Array& x) {
  return dimension < 0 ? dimension + static_cast<std::int64_t>(x.shape().size()) : dimension;
}

}  // namespace

Array sort(const Array& x, std::int64_t dimension, std::source_location loc) {
  const Array operands[] = {x};
  return detail::bind(OpKind::Sort, operands, SortAttrs{sort_axis(dimension, x), true}.write(), {},
                      loc);
}

Array argsort(const std::vector<Array>& keys, std::int64_t dimension, std::source_location loc) {
  const std::int64_t axis = keys.empty() ? dimension : sort_axis(dimension, keys[0]);
  return detail::bind(OpKind::Argsort, keys, SortAttrs{axis, true}.write(), {}, loc);
}

std::pair<Array, Array> top_k(const Array& x, std::int64_t k, std::source_location loc) {
  const Array operands[] = {x};
  const Attrs attrs = TopKAttrs{k}.write();
  return {detail::bind(OpKind::TopK, operands, attrs, {}, loc),
          detail::bind(OpKind::TopKIndices, operands, attrs, {}, loc)};
}

}  // namespace weft::lax
