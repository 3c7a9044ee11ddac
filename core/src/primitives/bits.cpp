// Bit operations on integers (operands of one integer dtype and shape): the shifts, with XLA's
// meaning for shift amounts outside [0, width) (an amount is read as unsigned, so a negative
// one is as large as any), population_count and clz. Integer results carry no tangent, as in
// JAX; the binary and unary families (elementwise_family.h) give the rest.
#include <bit>
#include <cstdint>
#include <string>

#include "primitives/elementwise_family.h"

namespace weft::prim {

using namespace elementwise;
using U64 = std::uint64_t;

namespace {

int bit_width_of(DType t) {
  return static_cast<int>(8 * dtype_size(t));
}

// The low `width` bits of a canonical integer, as unsigned.
U64 bits_of(DType t, std::int64_t x) {
  const int width = bit_width_of(t);
  const U64 u = static_cast<U64>(x);
  return width >= 64 ? u : u & ((U64{1} << width) - 1);
}

// The value of those bits read as a two's-complement number of the dtype's width.
std::int64_t signed_value_of(DType t, std::int64_t x) {
  const int width = bit_width_of(t);
  if (width >= 64) return x;
  const U64 u = bits_of(t, x);
  const U64 sign = U64{1} << (width - 1);
  return static_cast<std::int64_t>((u ^ sign) - sign);
}

TensorType integer_binary_type(OpKind op, std::span<const TensorType> operands, const Attrs&,
                               const TensorType&) {
  check_same_type(op, operands);
  const DType t = operands[0].dtype;
  if (!is_integer(t))
    dtype_error(op, operands,
                "needs integer operands, got " + std::string(dtype_name(t)) +
                    (t == DType::Bool ? "; convert to an integer type first"
                                      : "; bitcast_convert the floats to an integer type first"));
  return operands[0];
}

// A shift: integers only (the binary family's logical domain, without bool).
template <typename Op>
Primitive shift(OpKind kind, std::string_view name) {
  Primitive p = logical_binary<Op>(kind, name);
  p.type = integer_binary_type;
  return p;
}

}  // namespace

void define_bit_primitives(Definitions& defs) {
  struct ShiftLeft {
    static std::int64_t on_int(DType t, std::int64_t x, std::int64_t amount) {
      const U64 n = bits_of(t, amount);
      if (n >= static_cast<U64>(bit_width_of(t))) return 0;
      return interp::wrap_to(t, static_cast<U64>(x) << n);
    }
  };
  defs.add(shift<ShiftLeft>(OpKind::ShiftLeft, "shift_left"));

  struct ShiftRightLogical {
    static std::int64_t on_int(DType t, std::int64_t x, std::int64_t amount) {
      const U64 n = bits_of(t, amount);
      if (n >= static_cast<U64>(bit_width_of(t))) return 0;
      return interp::wrap_to(t, bits_of(t, x) >> n);
    }
  };
  defs.add(shift<ShiftRightLogical>(OpKind::ShiftRightLogical, "shift_right_logical"));

  // The bits read as signed (for u32 too, as XLA), the sign bit copied in from the left.
  struct ShiftRightArithmetic {
    static std::int64_t on_int(DType t, std::int64_t x, std::int64_t amount) {
      const U64 n = bits_of(t, amount);
      const std::int64_t v = signed_value_of(t, x);
      if (n >= static_cast<U64>(bit_width_of(t)))
        return interp::wrap_to(t, std::int64_t{v < 0 ? -1 : 0});
      return interp::wrap_to(t, v >> n);
    }
  };
  defs.add(shift<ShiftRightArithmetic>(OpKind::ShiftRightArithmetic, "shift_right_arithmetic"));
}

}  // namespace weft::prim
