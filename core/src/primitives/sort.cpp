// Sorting along one axis, as jax.lax: stable and ascending, NaN last, -0.0 equal to 0.0.
// weft's value ops have one result, so lax.sort's several operands are two primitives: `sort`
// (the sorted values of one operand) and `argsort` (the stable sorting permutation of one or
// more keys, compared lexicographically, as i32 positions). top_k along the last axis likewise:
// `top_k` (the k largest values) and `top_k_indices` (their positions, ties lower first); NaN
// counts as largest, -NaN as smallest, as lax.top_k. Each runs in a kernel of its own
// (opencl/src/codegen/sort_kernel.cpp).
#include <algorithm>
#include <cmath>
#include <numeric>

#include "primitives/families.h"
#include "primitives/pick_along_axis.h"
#include "primitives/structural_rules.h"
#include "primitives/type_rule_checks.h"
#include "weft/ir/op_attrs.h"
#include "weft/ops.h"
#include "weft/trace/trace.h"

namespace weft::prim {

namespace {

using interp::Operands;
using interp::Value;

void check_axis(OpKind op, std::span<const TensorType> operands, std::int64_t axis) {
  if (axis < 0 || axis >= static_cast<std::int64_t>(operands[0].shape.size()))
    shape_fail(op, operands,
               "dimension=" + std::to_string(axis) + " is not an axis of a rank-" +
                   std::to_string(operands[0].shape.size()) + " operand; pass one in [0, rank)");
}

TensorType sort_type(OpKind op, std::span<const TensorType> operands, const Attrs& attrs,
                     const TensorType&) {
  check_axis(op, operands, SortAttrs::read(attrs).dimension);
  return operands[0];
}

TensorType argsort_type(OpKind op, std::span<const TensorType> operands, const Attrs& attrs,
                        const TensorType&) {
  if (operands.empty()) shape_fail(op, operands, "needs at least one key");
  for (const TensorType& key : operands)
    if (key.shape != operands[0].shape) shape_fail(op, operands, "keys must all have one shape");
  check_axis(op, operands, SortAttrs::read(attrs).dimension);
  return {DType::I32, operands[0].shape};
}

Shape top_k_shape(OpKind op, std::span<const TensorType> operands, const Attrs& attrs) {
  const Shape& in = operands[0].shape;
  const std::int64_t k = TopKAttrs::read(attrs).k;
  if (in.empty()) shape_fail(op, operands, "needs an operand of rank >= 1");
  if (k < 0 || k > in.back())
    shape_fail(op, operands,
               "k=" + std::to_string(k) + " must be in [0, " + std::to_string(in.back()) +
                   "], the size of the last axis");
  Shape out = in;
  out.back() = k;
  return out;
}

TensorType top_k_type(OpKind op, std::span<const TensorType> operands, const Attrs& attrs,
                      const TensorType&) {
  return {operands[0].dtype, top_k_shape(op, operands, attrs)};
}
TensorType top_k_indices_type(OpKind op, std::span<const TensorType> operands, const Attrs& attrs,
                              const TensorType&) {
  return {DType::I32, top_k_shape(op, operands, attrs)};
}

// ---- Evaluators ----------------------------------------------------------------------------

// Whether x comes before y: ascending with NaN last, or (top_k) descending with NaN first and
// -NaN last.
bool before(double x, double y, bool descending) {
  if (!descending) return std::isnan(y) ? !std::isnan(x) : x < y;
  auto rank = [](double v) { return std::isnan(v) ? (std::signbit(v) ? 0 : 2) : 1; };
  return rank(x) != rank(y) ? rank(x) > rank(y) : x > y;
}

// Whether element a of `key` comes before element b: integers compare exactly (u64 unsigned),
// not through a double, which would merge neighbouring 64-bit values.
bool key_before(const Value& key, std::int64_t a, std::int64_t b, bool descending) {
  if (is_float(key.dtype)) return before(key.f[a], key.f[b], descending);
  if (key.dtype == DType::U64) {
    const auto x = static_cast<std::uint64_t>(key.i[a]), y = static_cast<std::uint64_t>(key.i[b]);
    return descending ? x > y : x < y;
  }
  return descending ? key.i[a] > key.i[b] : key.i[a] < key.i[b];
}

// The stable order of each line of the keys along `axis`: calls `take(line_positions, order)`
// with the flat index of each position of a line and the sorted positions.
template <typename F>
void sort_lines(std::span<const Value* const> keys, std::int64_t axis, bool descending, F&& take) {
  const Shape& shape = keys[0]->shape;
  std::int64_t outer = 1, n = shape[axis], inner = 1;
  for (std::int64_t d = 0; d < static_cast<std::int64_t>(shape.size()); ++d) {
    if (d < axis) outer *= shape[d];
    if (d > axis) inner *= shape[d];
  }
  std::vector<std::int64_t> at(n), order(n);
  for (std::int64_t o = 0; o < outer; ++o)
    for (std::int64_t i = 0; i < inner; ++i) {
      for (std::int64_t p = 0; p < n; ++p) at[p] = (o * n + p) * inner + i;
      std::iota(order.begin(), order.end(), std::int64_t{0});
      std::stable_sort(order.begin(), order.end(), [&](std::int64_t a, std::int64_t b) {
        for (const Value* key : keys) {
          if (key_before(*key, at[a], at[b], descending)) return true;
          if (key_before(*key, at[b], at[a], descending)) return false;
        }
        return false;
      });
      take(at, order);
    }
}

void copy_element(const Value& from, std::int64_t i, Value& to, std::int64_t j) {
  if (is_float(from.dtype))
    to.f[j] = from.f[i];
  else
    to.i[j] = from.i[i];
}

Value evaluate_sort(const Node& node, Operands operands) {
  const Value& x = *operands[0];
  Value out = interp::make_value(node.dtype, node.shape);
  const Value* keys[] = {&x};
  sort_lines(keys, SortAttrs::read(node.attrs).dimension, false,
             [&](const std::vector<std::int64_t>& at, const std::vector<std::int64_t>& order) {
               for (std::size_t p = 0; p < at.size(); ++p)
                 copy_element(x, at[order[p]], out, at[p]);
             });
  return out;
}

Value evaluate_argsort(const Node& node, Operands operands) {
  Value out = interp::make_value(node.dtype, node.shape);
  std::vector<const Value*> keys;
  for (const auto& key : operands) keys.push_back(&*key);
  sort_lines(keys, SortAttrs::read(node.attrs).dimension, false,
             [&](const std::vector<std::int64_t>& at, const std::vector<std::int64_t>& order) {
               for (std::size_t p = 0; p < at.size(); ++p) out.i[at[p]] = order[p];
             });
  return out;
}

template <bool indices>
Value evaluate_top_k(const Node& node, Operands operands) {
  const Value& x = *operands[0];
  Value out = interp::make_value(node.dtype, node.shape);
  const std::int64_t k = TopKAttrs::read(node.attrs).k;
  const Value* keys[] = {&x};
  std::int64_t line = 0;
  sort_lines(keys, static_cast<std::int64_t>(x.shape.size()) - 1, true,
             [&](const std::vector<std::int64_t>& at, const std::vector<std::int64_t>& order) {
               for (std::int64_t p = 0; p < k; ++p) {
                 if (indices)
                   out.i[line * k + p] = order[p];
                 else
                   copy_element(x, at[order[p]], out, line * k + p);
               }
               ++line;
             });
  return out;
}

// ---- Rules ---------------------------------------------------------------------------------

Array argsort_of(const Array& x, std::int64_t axis, const std::source_location& loc) {
  const Array operands[] = {x};
  return detail::bind(OpKind::Argsort, operands, SortAttrs{axis, true}.write(),
                      {DType::I32, x.shape()}, loc);
}

// The tangent moves with its element.
Tangent jvp_sort(const Node& n, std::span<const Array> primals, std::span<const Tangent> tangents,
                 const Array&, const std::source_location& loc) {
  const std::int64_t axis = SortAttrs::read(n.attrs).dimension;
  return pick_along_axis(*tangents[0], argsort_of(primals[0], axis, loc), axis, loc);
}

Tangent jvp_top_k(const Node& n, std::span<const Array> primals, std::span<const Tangent> tangents,
                  const Array&, const std::source_location& loc) {
  const Array operands[] = {primals[0]};
  const Array at = detail::bind(OpKind::TopKIndices, operands, n.attrs, {}, loc);
  return pick_along_axis(*tangents[0], at, static_cast<std::int64_t>(primals[0].shape().size()) - 1,
                         loc);
}

// Positions are integers: no tangent.
Tangent jvp_positions(const Node&, std::span<const Array>, std::span<const Tangent>, const Array&,
                      const std::source_location&) {
  return std::nullopt;
}

Batched batch_sort(const Node& n, std::span<const Batched> operands, std::int64_t batch_size,
                   const std::string&, const std::source_location& loc) {
  SortAttrs a = SortAttrs::read(n.attrs);
  a.dimension += 1;
  return rebind_batched(n, operands, batch_size, updated_attrs(n.attrs, a.write()), loc);
}

// top_k works on the last axis, which a leading batch axis leaves last.
Batched batch_top_k(const Node& n, std::span<const Batched> operands, std::int64_t batch_size,
                    const std::string&, const std::source_location& loc) {
  return rebind_batched(n, operands, batch_size, n.attrs, loc);
}

Primitive sorting(OpKind kind, std::string_view name, int arity) {
  Primitive p = row(kind, name, OpClass::Sort, arity);
  p.info.own_kernel = true;
  p.transpose = no_transpose();
  return p;
}

}  // namespace

void define_sort_primitives(Definitions& defs) {
  Primitive sort = sorting(OpKind::Sort, "sort", 1);
  sort.type = sort_type;
  sort.evaluate = evaluate_sort;
  sort.jvp = rule_from(jvp_sort);
  sort.batch = rule_from(batch_sort);
  defs.add(std::move(sort));

  Primitive argsort = sorting(OpKind::Argsort, "argsort", -1);
  argsort.type = argsort_type;
  argsort.evaluate = evaluate_argsort;
  argsort.jvp = rule_from(jvp_positions);
  argsort.batch = rule_from(batch_sort);
  defs.add(std::move(argsort));

  Primitive top_k = sorting(OpKind::TopK, "top_k", 1);
  top_k.type = top_k_type;
  top_k.evaluate = evaluate_top_k<false>;
  top_k.jvp = rule_from(jvp_top_k);
  top_k.batch = rule_from(batch_top_k);
  defs.add(std::move(top_k));

  Primitive top_k_indices = sorting(OpKind::TopKIndices, "top_k_indices", 1);
  top_k_indices.type = top_k_indices_type;
  top_k_indices.evaluate = evaluate_top_k<true>;
  top_k_indices.jvp = rule_from(jvp_positions);
  top_k_indices.batch = rule_from(batch_top_k);
  defs.add(std::move(top_k_indices));
}

}  // namespace weft::prim
