// Unary elementwise primitives: each states its scalar semantics (on_float, on_int) and its
// derivative (jvp: from the operand x, its tangent t and the result z); the unary family
// (elementwise_family.h) gives the rest.
#include <cmath>
#include <cstdint>
#include <numbers>
#include <string>

#include "primitives/elementwise_family.h"
#include "weft/error.h"
#include "weft/ir/op_attrs.h"
#include "weft/ops.h"

namespace weft::prim {

using namespace lax;
using namespace elementwise;
using U64 = std::uint64_t;

void define_unary_primitives(Definitions& defs) {
  struct Neg {
    static double on_float(double x) { return -x; }
    static std::int64_t on_int(DType t, std::int64_t x) {
      return interp::wrap_to(t, U64{0} - static_cast<U64>(x));
    }
    static Tangent jvp(const Array&, const Array& t, const Array&, const Loc& loc) {
      return neg(t, loc);
    }
    static Cotangents transpose(const Node&, const Array& ct, Values, Types,
                                const std::vector<bool>&, const std::string&, const Loc& loc) {
      return {neg(ct, loc)};
    }
  };
  defs.add(numeric_unary<Neg>(OpKind::Neg, "neg"));

  struct Abs {
    static double on_float(double x) { return std::fabs(x); }
    // Canonical u32 values are never negative, so u32 abs is the identity; u64 values past 2^63
    // are held as negative int64s and are their own abs too.
    static std::int64_t on_int(DType t, std::int64_t x) {
      return x < 0 && t != DType::U64 ? interp::wrap_to(t, U64{0} - static_cast<U64>(x)) : x;
    }
    // JAX's rule: the tangent where x >= 0 (zero included), its negation elsewhere (NaN too).
    static Tangent jvp(const Array& x, const Array& t, const Array&, const Loc& loc) {
      return select(ge(x, full(x, 0, loc), loc), t, neg(t, loc), loc);
    }
  };
  defs.add(numeric_unary<Abs>(OpKind::Abs, "abs"));

  struct Sign : PiecewiseConstant {
    // Zeros and NaN return themselves, so sign(-0) is -0.
    static double on_float(double x) {
      if (x > 0) return 1.0;
      if (x < 0) return -1.0;
      return x;
    }
    static std::int64_t on_int(DType t, std::int64_t x) {
      if (t == DType::U64) return x != 0;  // held as int64: past 2^63 reads negative
      return (x > 0) - (x < 0);
    }
  };
  defs.add(expensive(numeric_unary<Sign>(OpKind::Sign, "sign")));

  struct Floor : PiecewiseConstant {
    static double on_float(double x) { return std::floor(x); }
  };
  defs.add(expensive(float_unary<Floor>(OpKind::Floor, "floor")));

  struct Ceil : PiecewiseConstant {
    static double on_float(double x) { return std::ceil(x); }
  };
  defs.add(expensive(float_unary<Ceil>(OpKind::Ceil, "ceil")));

  struct Round : PiecewiseConstant {
    static double on_float(double x) { return std::round(x); }
  };
  Primitive round = expensive(float_unary<Round>(OpKind::Round, "round"));
  round.type = [](OpKind op, std::span<const TensorType> operands, const Attrs& attrs,
                  const TensorType& declared) {
    const std::int64_t method = RoundAttrs::read(attrs).rounding_method;
    if (method != RoundAttrs::kAwayFromZero && method != RoundAttrs::kToNearestEven)
      throw InvalidGraphError("weft: round's rounding_method is " + std::to_string(method) +
                              "; it is 0 (halves away from zero) or 1 (halves to even), as "
                              "jax.lax.RoundingMethod");
    return unary_type<Domain::Float>(op, operands, attrs, declared);
  };
  round.evaluate = [](const Node& node, interp::Operands operands) {
    if (RoundAttrs::read(node.attrs).rounding_method == RoundAttrs::kAwayFromZero)
      return evaluate_unary<Round>(node, operands);
    const interp::Value& x = *operands[0];
    interp::Value out = interp::make_value(node.dtype, node.shape);
    // nearbyint in the default rounding mode: halves to even, the sign of zero kept.
    for (std::int64_t k = 0; k < out.size(); ++k)
      out.f[k] = interp::round_to(node.dtype, std::nearbyint(x.f[k]));
    return out;
  };
  defs.add(round);

  struct Exp {
    static double on_float(double x) { return std::exp(x); }
    static Tangent jvp(const Array&, const Array& t, const Array& z, const Loc& loc) {
      return mul(t, z, loc);
    }
  };
  defs.add(math_call(float_unary<Exp>(OpKind::Exp, "exp")));

  struct Exp2 {
    static double on_float(double x) { return std::exp2(x); }
    static Tangent jvp(const Array&, const Array& t, const Array& z, const Loc& loc) {
      return mul(t, mul(z, full(z, std::numbers::ln2, loc), loc), loc);
    }
  };
  defs.add(math_call(float_unary<Exp2>(OpKind::Exp2, "exp2")));

  struct Log {
    static double on_float(double x) { return std::log(x); }
    static Tangent jvp(const Array& x, const Array& t, const Array&, const Loc& loc) {
      return div(t, x, loc);
    }
  };
  defs.add(math_call(float_unary<Log>(OpKind::Log, "log")));

  struct Log1p {
    static double on_float(double x) { return std::log1p(x); }
    static Tangent jvp(const Array& x, const Array& t, const Array&, const Loc& loc) {
      return div(t, add(x, full(x, 1, loc), loc), loc);
    }
  };
  defs.add(math_call(float_unary<Log1p>(OpKind::Log1p, "log1p")));

  struct Expm1 {
    static double on_float(double x) { return std::expm1(x); }
    static Tangent jvp(const Array&, const Array& t, const Array& z, const Loc& loc) {
      return mul(t, add(z, full(z, 1, loc), loc), loc);
    }
  };
  defs.add(math_call(float_unary<Expm1>(OpKind::Expm1, "expm1")));

  struct Sqrt {
    static double on_float(double x) { return std::sqrt(x); }
    static Tangent jvp(const Array&, const Array& t, const Array& z, const Loc& loc) {
      return div(t, mul(z, full(z, 2, loc), loc), loc);
    }
  };
  defs.add(expensive(float_unary<Sqrt>(OpKind::Sqrt, "sqrt")));

  struct Rsqrt {
    static double on_float(double x) { return 1.0 / std::sqrt(x); }
    // d/dx x^-1/2 = -1/2 x^-3/2 = -1/2 z / x
    static Tangent jvp(const Array& x, const Array& t, const Array& z, const Loc& loc) {
      return mul(t, div(mul(z, full(z, -0.5, loc), loc), x, loc), loc);
    }
  };
  defs.add(expensive(float_unary<Rsqrt>(OpKind::Rsqrt, "rsqrt")));

  struct Sin {
    static double on_float(double x) { return std::sin(x); }
    static Tangent jvp(const Array& x, const Array& t, const Array&, const Loc& loc) {
      return mul(t, cos(x, loc), loc);
    }
  };
  defs.add(math_call(float_unary<Sin>(OpKind::Sin, "sin")));

  struct Cos {
    static double on_float(double x) { return std::cos(x); }
    static Tangent jvp(const Array& x, const Array& t, const Array&, const Loc& loc) {
      return neg(mul(t, sin(x, loc), loc), loc);
    }
  };
  defs.add(math_call(float_unary<Cos>(OpKind::Cos, "cos")));

  struct Tan {
    static double on_float(double x) { return std::tan(x); }
    static Tangent jvp(const Array&, const Array& t, const Array& z, const Loc& loc) {
      return mul(t, add(full(z, 1, loc), mul(z, z, loc), loc), loc);
    }
  };
  defs.add(math_call(float_unary<Tan>(OpKind::Tan, "tan")));

  struct Tanh {
    static double on_float(double x) { return std::tanh(x); }
    static Tangent jvp(const Array&, const Array& t, const Array& z, const Loc& loc) {
      return mul(t, sub(full(z, 1, loc), mul(z, z, loc), loc), loc);
    }
  };
  defs.add(math_call(float_unary<Tanh>(OpKind::Tanh, "tanh")));

  struct Logistic {
    static double on_float(double x) { return 1.0 / (1.0 + std::exp(-x)); }
    static Tangent jvp(const Array&, const Array& t, const Array& z, const Loc& loc) {
      return mul(t, mul(z, sub(full(z, 1, loc), z, loc), loc), loc);
    }
  };
  defs.add(math_call(float_unary<Logistic>(OpKind::Logistic, "logistic")));

  struct Erf {
    static double on_float(double x) { return std::erf(x); }
    // 2/sqrt(pi) exp(-x^2)
    static Tangent jvp(const Array& x, const Array& t, const Array&, const Loc& loc) {
      return mul(t,
                 mul(full(x, 2.0 * std::numbers::inv_sqrtpi, loc),
                     exp(neg(mul(x, x, loc), loc), loc), loc),
                 loc);
    }
  };
  defs.add(math_call(float_unary<Erf>(OpKind::Erf, "erf")));

  struct Not {
    static std::int64_t on_int(DType t, std::int64_t x) {
      return t == DType::Bool ? (x == 0 ? 1 : 0) : interp::wrap_to(t, ~static_cast<U64>(x));
    }
  };
  defs.add(logical_unary<Not>(OpKind::Not, "not"));
}

}  // namespace weft::prim
