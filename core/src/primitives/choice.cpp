// Ops that choose, element by element, among operands that are of the result's shape or
// scalars (as JAX allows): clamp(lo, x, hi) and select_n(which, case0, case1, ...). Their
// batching rule gives every operand the result's full shape first.
#include <algorithm>
#include <cmath>
#include <string>

#include "primitives/elementwise_family.h"
#include "weft/ops.h"

namespace weft::prim {

using namespace lax;
using namespace elementwise;

namespace {

// `v` (of `shape` or a scalar) at `shape`.
Array at_shape(const Array& v, const Shape& shape, const Loc& loc) {
  if (v.shape() == shape) return v;
  return broadcast_in_dim(v, shape, {}, loc);
}

// Every operand at [batch] + the result's shape: an unbatched scalar is broadcast first, and a
// batched scalar (one per example) along the result's axes.
detail::Batched batch_at_full_shape(const Node& n, std::span<const detail::Batched> operands,
                                    std::int64_t batch_size, const std::string&, const Loc& loc) {
  Shape shape{batch_size};
  shape.insert(shape.end(), n.shape.begin(), n.shape.end());
  std::vector<Array> full;
  for (const detail::Batched& b : operands) {
    if (!b.batched) {
      full.push_back(detail::with_batch_axis(at_shape(b.value, n.shape, loc), batch_size, loc));
    } else if (b.value.shape() != shape) {
      full.push_back(broadcast_in_dim(b.value, shape, {0}, loc));
    } else {
      full.push_back(b.value);
    }
  }
  return {detail::bind(n.op, full, n.attrs, {n.dtype, shape}, loc), true};
}

// An operand that may be a scalar: its element k.
std::int64_t int_at(const interp::Value& v, std::int64_t k) {
  return v.i[v.size() == 1 ? 0 : k];
}
double float_at(const interp::Value& v, std::int64_t k) {
  return v.f[v.size() == 1 ? 0 : k];
}

// ---- clamp ---------------------------------------------------------------------------------

TensorType clamp_type(OpKind op, std::span<const TensorType> operands, const Attrs&,
                      const TensorType&) {
  const TensorType& x = operands[1];
  for (std::size_t i : {std::size_t{0}, std::size_t{2}}) {
    if (operands[i].dtype != x.dtype)
      dtype_error(op, operands, "lo, x and hi must have one dtype; convert the bounds");
    if (!operands[i].shape.empty() && operands[i].shape != x.shape)
      shape_error(op, operands,
                  std::string(i == 0 ? "lo" : "hi") +
                      " must be a scalar or have x's shape; broadcast it first");
  }
  if (x.dtype == DType::Bool) dtype_error(op, operands, "is not defined for bool operands");
  return x;
}

// min(max(x, lo), hi); NaN in any operand gives NaN, as XLA's on CPUs.
interp::Value evaluate_clamp(const Node& node, interp::Operands operands) {
  const interp::Value& lo = *operands[0];
  const interp::Value& x = *operands[1];
  const interp::Value& hi = *operands[2];
  interp::Value out = interp::make_value(node.dtype, node.shape);
  for (std::int64_t k = 0; k < out.size(); ++k) {
    if (is_float(node.dtype)) {
      const double l = float_at(lo, k), v = x.f[k], h = float_at(hi, k);
      if (std::isnan(l) || std::isnan(v) || std::isnan(h)) {
        out.f[k] = std::isnan(v) ? v : std::isnan(l) ? l : h;
      } else {
        out.f[k] = std::min(std::max(v, l), h);
      }
    } else {
      if (node.dtype == DType::U64) {  // held as int64: values past 2^63 compare unsigned
        using U = std::uint64_t;
        out.i[k] = static_cast<std::int64_t>(
            std::min(std::max(static_cast<U>(x.i[k]), static_cast<U>(int_at(lo, k))),
                     static_cast<U>(int_at(hi, k))));
      } else {
        out.i[k] = std::min(std::max(x.i[k], int_at(lo, k)), int_at(hi, k));
      }
    }
  }
  return out;
}

// As JAX: lo's tangent where lo > x and lo < hi, x's where lo < x < hi, hi's where hi < x.
Tangent clamp_jvp(const Node&, std::span<const Array> primals, std::span<const Tangent> tangents,
                  const Array&, const Loc& loc) {
  const Shape& shape = primals[1].shape();
  const Array lo = at_shape(primals[0], shape, loc), x = primals[1];
  const Array hi = at_shape(primals[2], shape, loc);
  const Array zero = full(x, 0, loc);
  auto where = [&](const Array& pred, const Tangent& t) -> Tangent {
    if (!t) return std::nullopt;
    return select(pred, at_shape(*t, shape, loc), zero, loc);
  };
  Tangent out = where(logical_and(gt(lo, x, loc), lt(lo, hi, loc), loc), tangents[0]);
  out =
      add_tangents(out, where(logical_and(gt(x, lo, loc), lt(x, hi, loc), loc), tangents[1]), loc);
  return add_tangents(out, where(lt(hi, x, loc), tangents[2]), loc);
}

// ---- select_n ------------------------------------------------------------------------------

TensorType select_n_type(OpKind op, std::span<const TensorType> operands, const Attrs&,
                         const TensorType&) {
  if (operands.size() < 2) shape_error(op, operands, "needs `which` and at least one case");
  const TensorType& which = operands[0];
  const TensorType& first = operands[1];
  if (which.dtype != DType::Bool && which.dtype != DType::I32)
    dtype_error(op, operands, "`which` must be bool or i32; convert it");
  if (which.dtype == DType::Bool && operands.size() > 3)
    dtype_error(op, operands, "a bool `which` chooses between at most two cases; use an i32");
  if (!which.shape.empty() && which.shape != first.shape)
    shape_error(op, operands, "`which` must be a scalar or have the cases' shape");
  for (std::size_t i = 2; i < operands.size(); ++i) {
    if (operands[i].shape != first.shape)
      shape_error(op, operands, "the cases must have one shape");
    if (operands[i].dtype != first.dtype)
      dtype_error(op, operands, "the cases must have one dtype");
  }
  return first;
}

// Case `which`; out of range, the nearest case (JAX lowers select_n to a tree of selects that
// splits at `which < middle`).
interp::Value evaluate_select_n(const Node& node, interp::Operands operands) {
  const interp::Value& which = *operands[0];
  const auto cases = static_cast<std::int64_t>(operands.size()) - 1;
  interp::Value out = interp::make_value(node.dtype, node.shape);
  for (std::int64_t k = 0; k < out.size(); ++k) {
    const std::int64_t c = std::clamp<std::int64_t>(int_at(which, k), 0, cases - 1);
    const interp::Value& chosen = *operands[static_cast<std::size_t>(c) + 1];
    if (is_float(node.dtype)) {
      out.f[k] = chosen.f[k];
    } else {
      out.i[k] = chosen.i[k];
    }
  }
  return out;
}

Tangent select_n_jvp(const Node&, std::span<const Array> primals, std::span<const Tangent> tangents,
                     const Array&, const Loc& loc) {
  if (std::none_of(tangents.begin() + 1, tangents.end(), [](const Tangent& t) { return !!t; }))
    return std::nullopt;
  std::vector<Array> cases;
  for (std::size_t i = 1; i < primals.size(); ++i)
    cases.push_back(or_zeros(tangents[i], primals[i], loc));
  return select_n(primals[0], cases, loc);
}

// Linear in the cases; `which` is a fixed value. Case i's cotangent is ct where it was chosen.
Cotangents select_n_transpose(const Node& n, const Array& ct, Values values, Types types,
                              const std::vector<bool>& linear, const std::string& api,
                              const Loc& loc) {
  if (linear[0]) not_linear(n, api);
  const Array zero = full(ct, 0, loc);
  Cotangents out(types.size());
  for (std::size_t i = 1; i < types.size(); ++i) {
    if (!linear[i]) continue;
    std::vector<Array> cases(types.size() - 1, zero);
    cases[i - 1] = ct;
    out[i] = select_n(*values[0], cases, loc);
  }
  return out;
}

}  // namespace

void define_choice_primitives(Definitions& defs) {
  Primitive clamp = row(OpKind::Clamp, "clamp", OpClass::Select, 3);
  clamp.type = clamp_type;
  clamp.evaluate = evaluate_clamp;
  clamp.jvp.fn = clamp_jvp;
  clamp.transpose = no_transpose();
  clamp.batch.fn = batch_at_full_shape;
  defs.add(std::move(clamp));

  Primitive select_n = free_op(row(OpKind::SelectN, "select_n", OpClass::Select, -1));
  select_n.type = select_n_type;
  select_n.evaluate = evaluate_select_n;
  select_n.jvp.fn = select_n_jvp;
  select_n.transpose.fn = select_n_transpose;
  select_n.batch.fn = batch_at_full_shape;
  defs.add(std::move(select_n));
}

}  // namespace weft::prim
