// Binary elementwise primitives (operands of one shape and dtype): each states its scalar
// semantics (on_float, on_int), its derivative (jvp: from the operands x, y, their tangents tx,
// ty, either possibly a symbolic zero, and the result z) and, where it is linear, its
// transpose; the binary family (elementwise_family.h) gives the rest.
#include <cmath>
#include <cstdint>

#include "primitives/elementwise_family.h"
#include "weft/ops.h"

namespace weft::prim {

using namespace lax;
using namespace elementwise;
using U64 = std::uint64_t;

namespace {

// IEEE 754-2019 maximum/minimum: NaN if either operand is, and +0 > -0.
double float_max(double a, double b) {
  if (std::isnan(a)) return a;
  if (std::isnan(b)) return b;
  if (a == b) return std::signbit(a) ? b : a;
  return a > b ? a : b;
}
double float_min(double a, double b) {
  if (std::isnan(a)) return a;
  if (std::isnan(b)) return b;
  if (a == b) return std::signbit(a) ? a : b;
  return a < b ? a : b;
}

// The tangent of the operand that wins; half of each on a tie (as JAX).
Tangent extremum_jvp(const Array& x_wins, const Array& x, const Array& y, const Tangent& tx,
                     const Tangent& ty, const Loc& loc) {
  const Array weight_x =
      add(convert_element_type(x_wins, x.dtype(), loc),
          mul(full(x, 0.5, loc), convert_element_type(eq(x, y, loc), x.dtype(), loc), loc), loc);
  return add_tangents(
      tx ? Tangent(mul(*tx, weight_x, loc)) : std::nullopt,
      ty ? Tangent(mul(*ty, sub(full(x, 1, loc), weight_x, loc), loc)) : std::nullopt, loc);
}

}  // namespace

void define_binary_primitives(Definitions& defs) {
  struct Add {
    static double on_float(double a, double b) { return a + b; }
    static std::int64_t on_int(DType t, std::int64_t a, std::int64_t b) {
      return interp::wrap_to(t, static_cast<U64>(a) + static_cast<U64>(b));
    }
    static Tangent jvp(const Array&, const Array&, const Tangent& tx, const Tangent& ty,
                       const Array&, const Loc& loc) {
      return add_tangents(tx, ty, loc);
    }
    static Cotangents transpose(const Node&, const Array& ct, Values, Types,
                                const std::vector<bool>& linear, const std::string&, const Loc&) {
      Cotangents out(2);
      for (std::size_t i = 0; i < 2; ++i)
        if (linear[i]) out[i] = ct;
      return out;
    }
  };
  defs.add(numeric_binary<Add>(OpKind::Add, "add"));

  struct Sub {
    static double on_float(double a, double b) { return a - b; }
    static std::int64_t on_int(DType t, std::int64_t a, std::int64_t b) {
      return interp::wrap_to(t, static_cast<U64>(a) - static_cast<U64>(b));
    }
    static Tangent jvp(const Array&, const Array&, const Tangent& tx, const Tangent& ty,
                       const Array&, const Loc& loc) {
      return add_tangents(tx, ty ? Tangent(neg(*ty, loc)) : std::nullopt, loc);
    }
    static Cotangents transpose(const Node&, const Array& ct, Values, Types,
                                const std::vector<bool>& linear, const std::string&,
                                const Loc& loc) {
      Cotangents out(2);
      if (linear[0]) out[0] = ct;
      if (linear[1]) out[1] = neg(ct, loc);
      return out;
    }
  };
  defs.add(numeric_binary<Sub>(OpKind::Sub, "sub"));

  struct Mul {
    static double on_float(double a, double b) { return a * b; }
    static std::int64_t on_int(DType t, std::int64_t a, std::int64_t b) {
      return interp::wrap_to(t, static_cast<U64>(a) * static_cast<U64>(b));
    }
    static Tangent jvp(const Array& x, const Array& y, const Tangent& tx, const Tangent& ty,
                       const Array&, const Loc& loc) {
      return add_tangents(tx ? Tangent(mul(*tx, y, loc)) : std::nullopt,
                          ty ? Tangent(mul(x, *ty, loc)) : std::nullopt, loc);
    }
    // Linear in each operand while the other is fixed.
    static Cotangents transpose(const Node& n, const Array& ct, Values values, Types,
                                const std::vector<bool>& linear, const std::string& api,
                                const Loc& loc) {
      if (linear[0] && linear[1]) not_linear(n, api);
      Cotangents out(2);
      if (linear[0]) out[0] = mul(ct, *values[1], loc);
      if (linear[1]) out[1] = mul(*values[0], ct, loc);
      return out;
    }
  };
  defs.add(numeric_binary<Mul>(OpKind::Mul, "mul"));

  struct Div {
    static double on_float(double a, double b) { return a / b; }
    // Defined results where C++ has none, matching the generated OpenCL code.
    static std::int64_t on_int(DType t, std::int64_t a, std::int64_t b) {
      const bool is_signed = is_signed_integer(t);
      if (b == 0) return is_signed ? -1 : interp::int_highest(t);
      if (is_signed && a == interp::int_lowest(t) && b == -1) return a;
      return interp::int_div(t, a, b);
    }
    // tx / y - ty x / y^2 = (tx - ty z) / y
    static Tangent jvp(const Array&, const Array& y, const Tangent& tx, const Tangent& ty,
                       const Array& z, const Loc& loc) {
      return add_tangents(tx ? Tangent(div(*tx, y, loc)) : std::nullopt,
                          ty ? Tangent(neg(div(mul(*ty, z, loc), y, loc), loc)) : std::nullopt,
                          loc);
    }
    // Linear in the numerator only.
    static Cotangents transpose(const Node& n, const Array& ct, Values values, Types,
                                const std::vector<bool>& linear, const std::string& api,
                                const Loc& loc) {
      if (linear[1]) not_linear(n, api);
      return {div(ct, *values[1], loc), std::nullopt};
    }
  };
  defs.add(division(numeric_binary<Div>(OpKind::Div, "div")));

  struct Rem {
    static double on_float(double a, double b) { return std::fmod(a, b); }
    static std::int64_t on_int(DType t, std::int64_t a, std::int64_t b) {
      if (b == 0) return a;
      if (is_signed_integer(t) && a == interp::int_lowest(t) && b == -1) return 0;
      return interp::int_rem(t, a, b);
    }
    // x - y trunc(x / y)
    static Tangent jvp(const Array& x, const Array& y, const Tangent& tx, const Tangent& ty,
                       const Array&, const Loc& loc) {
      Tangent from_y;
      if (ty) {
        const Array q = div(x, y, loc);
        const Array trunc = select(lt(q, full(q, 0, loc), loc), ceil(q, loc), floor(q, loc), loc);
        from_y = neg(mul(*ty, trunc, loc), loc);
      }
      return add_tangents(tx, from_y, loc);
    }
  };
  defs.add(division(numeric_binary<Rem>(OpKind::Rem, "rem")));

  struct Pow {
    static double on_float(double a, double b) { return std::pow(a, b); }
    static std::int64_t on_int(DType t, std::int64_t base, std::int64_t exponent) {
      if (exponent < 0) {
        if (base == 1) return 1;
        if (base == -1) return (exponent & 1) ? -1 : 1;
        return 0;
      }
      U64 result = 1;
      U64 square = static_cast<U64>(base);
      for (U64 e = static_cast<U64>(exponent); e != 0; e >>= 1) {
        if (e & 1) result *= square;
        square *= square;
      }
      return interp::wrap_to(t, result);
    }
    static Tangent jvp(const Array& x, const Array& y, const Tangent& tx, const Tangent& ty,
                       const Array& z, const Loc& loc) {
      Tangent from_x, from_y;
      if (tx) {  // y x^(y-1), and 0 where y == 0 (not 0 * inf at x == 0)
        const Array d = mul(y, pow(x, sub(y, full(y, 1, loc), loc), loc), loc);
        from_x = mul(*tx, select(eq(y, full(y, 0, loc), loc), full(y, 0, loc), d, loc), loc);
      }
      if (ty) {  // log(x) z, and 0 where x == 0 (JAX's convention)
        const Array d = mul(log(x, loc), z, loc);
        from_y = mul(*ty, select(eq(x, full(x, 0, loc), loc), full(x, 0, loc), d, loc), loc);
      }
      return add_tangents(from_x, from_y, loc);
    }
  };
  defs.add(math_call(numeric_binary<Pow>(OpKind::Pow, "pow")));

  struct Max {
    static double on_float(double a, double b) { return float_max(a, b); }
    static std::int64_t on_int(DType t, std::int64_t a, std::int64_t b) {
      return interp::int_max(t, a, b);
    }
    static Tangent jvp(const Array& x, const Array& y, const Tangent& tx, const Tangent& ty,
                       const Array&, const Loc& loc) {
      return extremum_jvp(gt(x, y, loc), x, y, tx, ty, loc);
    }
  };
  defs.add(numeric_binary<Max>(OpKind::Max, "max"));

  struct Min {
    static double on_float(double a, double b) { return float_min(a, b); }
    static std::int64_t on_int(DType t, std::int64_t a, std::int64_t b) {
      return interp::int_min(t, a, b);
    }
    static Tangent jvp(const Array& x, const Array& y, const Tangent& tx, const Tangent& ty,
                       const Array&, const Loc& loc) {
      return extremum_jvp(lt(x, y, loc), x, y, tx, ty, loc);
    }
  };
  defs.add(numeric_binary<Min>(OpKind::Min, "min"));

  struct Atan2 {
    static double on_float(double a, double b) { return std::atan2(a, b); }
    // (tx y - ty x) / (x^2 + y^2)
    static Tangent jvp(const Array& x, const Array& y, const Tangent& tx, const Tangent& ty,
                       const Array&, const Loc& loc) {
      const Array denominator = add(mul(x, x, loc), mul(y, y, loc), loc);
      return add_tangents(
          tx ? Tangent(div(mul(*tx, y, loc), denominator, loc)) : std::nullopt,
          ty ? Tangent(neg(div(mul(*ty, x, loc), denominator, loc), loc)) : std::nullopt, loc);
    }
  };
  defs.add(math_call(float_binary<Atan2>(OpKind::Atan2, "atan2")));

  struct And {
    static std::int64_t on_int(DType t, std::int64_t a, std::int64_t b) {
      return interp::wrap_to(t, static_cast<U64>(a) & static_cast<U64>(b));
    }
  };
  defs.add(logical_binary<And>(OpKind::And, "and"));

  struct Or {
    static std::int64_t on_int(DType t, std::int64_t a, std::int64_t b) {
      return interp::wrap_to(t, static_cast<U64>(a) | static_cast<U64>(b));
    }
  };
  defs.add(logical_binary<Or>(OpKind::Or, "or"));

  struct Xor {
    static std::int64_t on_int(DType t, std::int64_t a, std::int64_t b) {
      return interp::wrap_to(t, static_cast<U64>(a) ^ static_cast<U64>(b));
    }
  };
  defs.add(logical_binary<Xor>(OpKind::Xor, "xor"));
}

}  // namespace weft::prim
