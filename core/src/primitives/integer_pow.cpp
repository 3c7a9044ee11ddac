// integer_pow(x, y): x to a fixed integer power (attribute y), computed as JAX lowers it: by
// squaring and multiplying, each product rounded to x's dtype (integers wrap), and for a
// negative y (floats only) the reciprocal of the positive power. Its derivative is
// y x^(y-1), written as JAX writes it.
#include <cstdint>
#include <optional>
#include <string>

#include "primitives/elementwise_family.h"
#include "weft/ir/op_attrs.h"
#include "weft/ops.h"

namespace weft::prim {

using namespace lax;
using namespace elementwise;

namespace {

TensorType integer_pow_type(OpKind op, std::span<const TensorType> operands, const Attrs& attrs,
                            const TensorType&) {
  check_domain(op, operands, Domain::Numeric);
  const std::int64_t y = IntegerPowAttrs::read(attrs).y;
  if (y < 0 && !is_float(operands[0].dtype))
    dtype_error(op, operands,
                "cannot raise integers to the negative power " + std::to_string(y) +
                    "; convert them to a float dtype first");
  return operands[0];
}

// JAX's _integer_pow: square-and-multiply from the lowest bit of |y|, then 1 / acc for y < 0.
template <typename Multiply>
auto power_by_squaring(auto x, std::int64_t y, auto one, Multiply multiply) {
  if (y == 0) return one;
  std::uint64_t n = y < 0 ? -static_cast<std::uint64_t>(y) : static_cast<std::uint64_t>(y);
  std::optional<decltype(x)> acc;
  while (n > 0) {
    if (n & 1) acc = acc ? multiply(*acc, x) : x;
    n >>= 1;
    if (n > 0) x = multiply(x, x);
  }
  return *acc;
}

interp::Value evaluate_integer_pow(const Node& node, interp::Operands operands) {
  const interp::Value& x = *operands[0];
  const std::int64_t y = IntegerPowAttrs::read(node.attrs).y;
  const DType t = node.dtype;
  interp::Value out = interp::make_value(t, node.shape);
  for (std::int64_t k = 0; k < out.size(); ++k) {
    if (is_float(t)) {
      const double p = power_by_squaring(
          x.f[k], y, 1.0, [t](double a, double b) { return interp::round_to(t, a * b); });
      out.f[k] = y < 0 ? interp::round_to(t, 1.0 / p) : p;
    } else {
      out.i[k] = power_by_squaring(x.i[k], y, std::int64_t{1}, [t](std::int64_t a, std::int64_t b) {
        return interp::wrap_to(t, static_cast<std::uint64_t>(a) * static_cast<std::uint64_t>(b));
      });
    }
  }
  return out;
}

Tangent integer_pow_jvp(const Node& n, std::span<const Array> primals,
                        std::span<const Tangent> tangents, const Array&, const Loc& loc) {
  if (!detail::has_tangent(primals[0].dtype())) return std::nullopt;
  const std::int64_t y = IntegerPowAttrs::read(n.attrs).y;
  const Array& x = primals[0];
  const Array& t = *tangents[0];
  if (y == 0) return std::nullopt;
  if (y == 1) return t;
  const Array y_times = full(x, static_cast<double>(y), loc);
  if (y == 2) return mul(t, mul(y_times, x, loc), loc);
  return mul(t, mul(y_times, integer_pow(x, y - 1, loc), loc), loc);
}

}  // namespace

void define_integer_pow_primitive(Definitions& defs) {
  Primitive p = row(OpKind::IntegerPow, "integer_pow", OpClass::Unary, 1);
  p.type = integer_pow_type;
  p.evaluate = evaluate_integer_pow;
  p.jvp.fn = integer_pow_jvp;
  p.transpose = no_transpose();
  p.batch.fn = batch_elementwise;
  defs.add(std::move(p));
}

}  // namespace weft::prim
