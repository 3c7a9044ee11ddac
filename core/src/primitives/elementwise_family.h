// Defaults of the elementwise families (unary and binary ops, comparisons), as JAX's
// unop/naryop give them. A definition states its scalar semantics and its derivative (and its
// transpose where it is linear) in a small struct; the family helper turns it into a
// Primitive with the family's dtype and shape rule, element-by-element evaluator and batching
// rule. Leaves, select and convert use the shared pieces below directly.
#pragma once

#include <concepts>
#include <cstdint>
#include <optional>
#include <source_location>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "primitives/families.h"

namespace weft::prim::elementwise {

using Loc = std::source_location;
using detail::Tangent;
using Cotangents = std::vector<Tangent>;               // a transpose rule's result
using Values = std::span<const std::optional<Array>>;  // a transpose rule's non-linear operands
using Types = std::span<const TensorType>;

// The operand dtypes a unary or binary op accepts (its dtype rule).
enum class Domain {
  Float,    // f32 and f64: the transcendental and rounding ops, atan2
  Numeric,  // integers and floats, not bool: arithmetic
  Logical,  // bool and integers: not, and, or, xor
};

// ---- Type rules ----------------------------------------------------------------------------

// Errors naming the op and its operand types (callers add where).
[[noreturn]] void shape_error(OpKind op, std::span<const TensorType> operands,
                              const std::string& what);
[[noreturn]] void dtype_error(OpKind op, std::span<const TensorType> operands,
                              const std::string& what);

// Throws DTypeError when `operands[0]`'s dtype is outside `domain`.
void check_domain(OpKind op, std::span<const TensorType> operands, Domain domain);
// Binary ops and comparisons: one shape and one dtype for both operands.
void check_same_type(OpKind op, std::span<const TensorType> operands);
// Comparisons: one shape and one dtype; ordering comparisons reject bool.
void check_comparable(OpKind op, std::span<const TensorType> operands, bool ordering);

template <Domain D>
TensorType unary_type(OpKind op, std::span<const TensorType> operands, const Attrs&,
                      const TensorType&) {
  check_domain(op, operands, D);
  return operands[0];
}

template <Domain D>
TensorType binary_type(OpKind op, std::span<const TensorType> operands, const Attrs&,
                       const TensorType&) {
  check_same_type(op, operands);
  check_domain(op, operands, D);
  return operands[0];
}

template <bool Ordering>
TensorType compare_type(OpKind op, std::span<const TensorType> operands, const Attrs&,
                        const TensorType&) {
  check_comparable(op, operands, Ordering);
  return {DType::Bool, operands[0].shape};
}

// ---- Scalar semantics ----------------------------------------------------------------------
// Floats compute in double and round to the result dtype; integers and bool compute in two's
// complement and wrap to the canonical form of the dtype (interp/value.h).

template <typename Op>
concept UnaryOnFloats = requires(double x) {
  { Op::on_float(x) } -> std::same_as<double>;
};
template <typename Op>
concept UnaryOnIntegers = requires(DType t, std::int64_t x) {
  { Op::on_int(t, x) } -> std::same_as<std::int64_t>;
};
template <typename Op>
concept BinaryOnFloats = requires(double a, double b) {
  { Op::on_float(a, b) } -> std::same_as<double>;
};
template <typename Op>
concept BinaryOnIntegers = requires(DType t, std::int64_t a, std::int64_t b) {
  { Op::on_int(t, a, b) } -> std::same_as<std::int64_t>;
};

// Convert's semantics for one element of every pair of dtypes, saturating from float to
// integer (select_convert.cpp); iota converts its indices with it too.
double convert_to_float(DType to, DType from, double f, std::int64_t i);
std::int64_t convert_to_int(DType to, DType from, double f, std::int64_t i);

// The evaluator met a dtype the op has no semantics for (the type rule rejects it first).
[[noreturn]] void undefined_for(OpKind op, DType dtype);

template <typename Op>
interp::Value evaluate_unary(const Node& node, interp::Operands operands) {
  const interp::Value& x = *operands[0];
  interp::Value out = interp::make_value(node.dtype, node.shape);
  const std::int64_t n = out.size();
  if (is_float(node.dtype)) {
    if constexpr (UnaryOnFloats<Op>) {
      for (std::int64_t k = 0; k < n; ++k)
        out.f[k] = interp::round_to(node.dtype, Op::on_float(x.f[k]));
    } else {
      undefined_for(node.op, node.dtype);
    }
  } else {
    if constexpr (UnaryOnIntegers<Op>) {
      for (std::int64_t k = 0; k < n; ++k) out.i[k] = Op::on_int(node.dtype, x.i[k]);
    } else {
      undefined_for(node.op, node.dtype);
    }
  }
  return out;
}

template <typename Op>
interp::Value evaluate_binary(const Node& node, interp::Operands operands) {
  const interp::Value& a = *operands[0];
  const interp::Value& b = *operands[1];
  interp::Value out = interp::make_value(node.dtype, node.shape);
  const std::int64_t n = out.size();
  if (is_float(node.dtype)) {
    if constexpr (BinaryOnFloats<Op>) {
      for (std::int64_t k = 0; k < n; ++k)
        out.f[k] = interp::round_to(node.dtype, Op::on_float(a.f[k], b.f[k]));
    } else {
      undefined_for(node.op, node.dtype);
    }
  } else {
    if constexpr (BinaryOnIntegers<Op>) {
      for (std::int64_t k = 0; k < n; ++k) out.i[k] = Op::on_int(node.dtype, a.i[k], b.i[k]);
    } else {
      undefined_for(node.op, node.dtype);
    }
  }
  return out;
}

// `Compare` is a comparison function object (std::less<> and the like).
template <typename Compare>
interp::Value evaluate_compare(const Node& node, interp::Operands operands) {
  const interp::Value& a = *operands[0];
  const interp::Value& b = *operands[1];
  interp::Value out = interp::make_value(node.dtype, node.shape);
  const std::int64_t n = out.size();
  const Compare compare;
  if (is_float(a.dtype)) {
    for (std::int64_t k = 0; k < n; ++k) out.i[k] = compare(a.f[k], b.f[k]);
  } else if (a.dtype == DType::U64) {  // bit patterns: compare unsigned
    for (std::int64_t k = 0; k < n; ++k)
      out.i[k] = compare(static_cast<std::uint64_t>(a.i[k]), static_cast<std::uint64_t>(b.i[k]));
  } else {
    for (std::int64_t k = 0; k < n; ++k) out.i[k] = compare(a.i[k], b.i[k]);
  }
  return out;
}

// ---- Transformation rules ------------------------------------------------------------------

// A constant of `like`'s dtype and shape.
Array full(const Array& like, double value, const Loc& loc);
// The sum of two tangents, either of which may be a symbolic zero.
Tangent add_tangents(Tangent a, Tangent b, const Loc& loc);
// A tangent made concrete: zeros of the primal's dtype and shape where it is a symbolic zero.
Array or_zeros(const Tangent& t, const Array& primal, const Loc& loc);

// The jvp of an op whose result carries no tangent: bool and integer results (comparisons,
// the logical ops), and leaves.
Tangent zero_tangent(const Node& n, std::span<const Array> primals,
                     std::span<const Tangent> tangents, const Array& result, const Loc& loc);
// A unary definition derives from this when it is constant wherever it is differentiable.
struct PiecewiseConstant {
  static Tangent jvp(const Array&, const Array&, const Array&, const Loc&) { return std::nullopt; }
};

// A definition's derivative: from the primal operands, their tangents (unary: set; binary:
// either may be a symbolic zero) and the primal result `z`.
template <typename Op>
concept UnaryJvp = requires(const Array& x, const Array& t, const Array& z, const Loc& loc) {
  { Op::jvp(x, t, z, loc) } -> std::convertible_to<Tangent>;
};
template <typename Op>
concept BinaryJvp = requires(const Array& x, const Array& y, const Tangent& tx, const Tangent& ty,
                             const Array& z, const Loc& loc) {
  { Op::jvp(x, y, tx, ty, z, loc) } -> std::convertible_to<Tangent>;
};

template <typename Op>
Tangent unary_jvp(const Node&, std::span<const Array> primals, std::span<const Tangent> tangents,
                  const Array& result, const Loc& loc) {
  return Op::jvp(primals[0], *tangents[0], result, loc);
}
template <typename Op>
Tangent binary_jvp(const Node&, std::span<const Array> primals, std::span<const Tangent> tangents,
                   const Array& result, const Loc& loc) {
  return Op::jvp(primals[0], primals[1], tangents[0], tangents[1], result, loc);
}

// A linear definition's transpose (transforms/transpose_rules.h): cotangents for the operands
// marked linear, nullopt for the others.
template <typename Op>
concept Transposable = requires {
  { &Op::transpose } -> std::convertible_to<TransposeRule>;
};
// `n` multiplies two linear values: a bug in the rules that built the linear part.
[[noreturn]] void not_linear(const Node& n, const std::string& api);

// Every elementwise op batches by giving each operand the leading batch axis (broadcasting the
// unbatched ones) and applying the op again.
detail::Batched batch_elementwise(const Node& n, std::span<const detail::Batched> operands,
                                  std::int64_t batch_size, const std::string& api, const Loc& loc);

// ---- Family helpers ------------------------------------------------------------------------

template <typename Op, Domain D>
Primitive unary(OpKind kind, std::string_view name) {
  Primitive p = row(kind, name, OpClass::Unary, 1);
  p.type = unary_type<D>;
  p.evaluate = evaluate_unary<Op>;
  if constexpr (UnaryJvp<Op>)
    p.jvp.fn = unary_jvp<Op>;
  else
    p.jvp.fn = zero_tangent;
  if constexpr (Transposable<Op>)
    p.transpose.fn = &Op::transpose;
  else
    p.transpose = no_transpose();
  p.batch.fn = batch_elementwise;
  return p;
}

template <typename Op, Domain D>
Primitive binary(OpKind kind, std::string_view name) {
  Primitive p = row(kind, name, OpClass::Binary, 2);
  p.type = binary_type<D>;
  p.evaluate = evaluate_binary<Op>;
  if constexpr (BinaryJvp<Op>)
    p.jvp.fn = binary_jvp<Op>;
  else
    p.jvp.fn = zero_tangent;
  if constexpr (Transposable<Op>)
    p.transpose.fn = &Op::transpose;
  else
    p.transpose = no_transpose();
  p.batch.fn = batch_elementwise;
  return p;
}

// Defined on floats only, and differentiable.
template <typename Op>
Primitive float_unary(OpKind kind, std::string_view name) {
  static_assert(UnaryOnFloats<Op> && UnaryJvp<Op>, "needs on_float(x) and jvp");
  return unary<Op, Domain::Float>(kind, name);
}
// Defined on integers and floats, differentiable on floats.
template <typename Op>
Primitive numeric_unary(OpKind kind, std::string_view name) {
  static_assert(UnaryOnFloats<Op> && UnaryOnIntegers<Op> && UnaryJvp<Op>,
                "needs on_float(x), on_int(t, x) and jvp");
  return unary<Op, Domain::Numeric>(kind, name);
}
// Defined on bool and integers: no tangents.
template <typename Op>
Primitive logical_unary(OpKind kind, std::string_view name) {
  static_assert(UnaryOnIntegers<Op> && !UnaryOnFloats<Op>, "needs on_int(t, x) only");
  return unary<Op, Domain::Logical>(kind, name);
}

template <typename Op>
Primitive float_binary(OpKind kind, std::string_view name) {
  static_assert(BinaryOnFloats<Op> && BinaryJvp<Op>, "needs on_float(a, b) and jvp");
  return binary<Op, Domain::Float>(kind, name);
}
template <typename Op>
Primitive numeric_binary(OpKind kind, std::string_view name) {
  static_assert(BinaryOnFloats<Op> && BinaryOnIntegers<Op> && BinaryJvp<Op>,
                "needs on_float(a, b), on_int(t, a, b) and jvp");
  return binary<Op, Domain::Numeric>(kind, name);
}
template <typename Op>
Primitive logical_binary(OpKind kind, std::string_view name) {
  static_assert(BinaryOnIntegers<Op> && !BinaryOnFloats<Op>, "needs on_int(t, a, b) only");
  return binary<Op, Domain::Logical>(kind, name);
}

template <typename Compare, bool Ordering>
Primitive comparison(OpKind kind, std::string_view name) {
  Primitive p = row(kind, name, OpClass::Compare, 2);
  p.type = compare_type<Ordering>;
  p.evaluate = evaluate_compare<Compare>;
  p.jvp.fn = zero_tangent;  // a bool result
  p.transpose = no_transpose();
  p.batch.fn = batch_elementwise;
  return p;
}
// eq and ne: defined for every dtype, bool included.
template <typename Compare>
Primitive equality(OpKind kind, std::string_view name) {
  return comparison<Compare, false>(kind, name);
}
// lt, le, gt, ge: defined for integers and floats.
template <typename Compare>
Primitive ordering(OpKind kind, std::string_view name) {
  return comparison<Compare, true>(kind, name);
}

}  // namespace weft::prim::elementwise
