// select(pred, on_true, on_false) and convert.
#include <cmath>

#include "primitives/elementwise_family.h"
#include "weft/ops.h"

namespace weft::prim {

namespace elementwise {

double convert_to_float(DType to, DType from, double f, std::int64_t i) {
  if (is_float(from)) return interp::round_to(to, f);
  // Straight from the integer: going through double first would round an i64 twice. f16 and
  // bf16 go through f32, as XLA converts them.
  if (to == DType::F64) return interp::int_to_double(from, i);
  return interp::round_to(to, interp::int_to_float(from, i));
}

std::int64_t convert_to_int(DType to, DType from, double f, std::int64_t i) {
  if (to == DType::Bool) return is_float(from) ? (f != 0 ? 1 : 0) : (i != 0 ? 1 : 0);
  if (!is_float(from)) return interp::wrap_to(to, i);
  if (std::isnan(f)) return 0;
  const double t = std::trunc(f);
  const std::int64_t lo = interp::int_lowest(to);
  const std::int64_t hi = interp::int_highest(to);
  if (to == DType::U64) {  // saturates to [0, 2^64 - 1], as XLA
    if (t <= 0) return 0;
    if (t >= 18446744073709551616.0) return hi;
    return static_cast<std::int64_t>(static_cast<std::uint64_t>(t));
  }
  if (t <= static_cast<double>(lo)) return lo;
  // (double)hi rounds up to 2^63 for i64; every t below it converts without overflow.
  if (t >= static_cast<double>(hi)) return hi;
  return static_cast<std::int64_t>(t);
}

}  // namespace elementwise

namespace {

using namespace lax;
using namespace elementwise;

namespace select_op {

TensorType type(OpKind op, std::span<const TensorType> operands, const Attrs&, const TensorType&) {
  if (operands[0].dtype != DType::Bool) dtype_error(op, operands, "the predicate must be bool");
  if (operands[0].shape != operands[1].shape || operands[1].shape != operands[2].shape)
    shape_error(op, operands, "predicate and both branches must have one shape");
  if (operands[1].dtype != operands[2].dtype)
    dtype_error(op, operands, "both branches must have the same dtype");
  return operands[1];
}

interp::Value evaluate(const Node& node, interp::Operands operands) {
  const interp::Value& pred = *operands[0];
  const interp::Value& on_true = *operands[1];
  const interp::Value& on_false = *operands[2];
  interp::Value out = interp::make_value(node.dtype, node.shape);
  const std::int64_t n = out.size();
  for (std::int64_t k = 0; k < n; ++k) {
    const interp::Value& chosen = pred.i[k] ? on_true : on_false;
    if (is_float(node.dtype)) {
      out.f[k] = chosen.f[k];
    } else {
      out.i[k] = chosen.i[k];
    }
  }
  return out;
}

Tangent jvp(const Node&, std::span<const Array> primals, std::span<const Tangent> tangents,
            const Array&, const Loc& loc) {
  const Array on_true = or_zeros(tangents[1], primals[1], loc);
  const Array on_false = or_zeros(tangents[2], primals[2], loc);
  return select(primals[0], on_true, on_false, loc);
}

// Linear in the branches; the predicate is a fixed value.
Cotangents transpose(const Node& n, const Array& ct, Values values, Types,
                     const std::vector<bool>& linear, const std::string& api, const Loc& loc) {
  if (linear[0]) not_linear(n, api);
  const Array zero = full(ct, 0, loc);
  Cotangents out(3);
  if (linear[1]) out[1] = select(*values[0], ct, zero, loc);
  if (linear[2]) out[2] = select(*values[0], zero, ct, loc);
  return out;
}

}  // namespace select_op

namespace convert_op {

// The result dtype is the declared one.
TensorType type(OpKind, std::span<const TensorType> operands, const Attrs&,
                const TensorType& declared) {
  return {declared.dtype, operands[0].shape};
}

interp::Value evaluate(const Node& node, interp::Operands operands) {
  const interp::Value& x = *operands[0];
  interp::Value out = interp::make_value(node.dtype, node.shape);
  const std::int64_t n = out.size();
  const bool from_float = is_float(x.dtype);
  for (std::int64_t k = 0; k < n; ++k) {
    const double f = from_float ? x.f[k] : 0.0;
    const std::int64_t i = from_float ? 0 : x.i[k];
    if (is_float(node.dtype)) {
      out.f[k] = convert_to_float(node.dtype, x.dtype, f, i);
    } else {
      out.i[k] = convert_to_int(node.dtype, x.dtype, f, i);
    }
  }
  return out;
}

Tangent jvp(const Node& n, std::span<const Array> primals, std::span<const Tangent> tangents,
            const Array&, const Loc& loc) {
  if (!detail::has_tangent(primals[0].dtype())) return std::nullopt;
  return convert_element_type(*tangents[0], n.dtype, loc);
}

Cotangents transpose(const Node&, const Array& ct, Values, Types types, const std::vector<bool>&,
                     const std::string&, const Loc& loc) {
  return {convert_element_type(ct, types[0].dtype, loc)};
}

}  // namespace convert_op

}  // namespace

void define_select_convert_primitives(Definitions& defs) {
  Primitive select =
      jax_names(free_op(row(OpKind::Select, "select", OpClass::Select, 3)), "select select_n");
  select.type = select_op::type;
  select.evaluate = select_op::evaluate;
  select.jvp.fn = select_op::jvp;
  select.transpose.fn = select_op::transpose;
  select.batch.fn = batch_elementwise;
  defs.add(std::move(select));

  Primitive convert = jax_names(free_op(row(OpKind::Convert, "convert", OpClass::Convert, 1)),
                                "convert_element_type");
  convert.type = convert_op::type;
  convert.evaluate = convert_op::evaluate;
  convert.jvp.fn = convert_op::jvp;
  convert.transpose.fn = convert_op::transpose;
  convert.batch.fn = batch_elementwise;
  defs.add(std::move(convert));
}

}  // namespace weft::prim
