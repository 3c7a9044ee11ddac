// The convert op: every pair of dtypes, with saturating float-to-int conversion.
#include <cmath>

#include "value.h"

namespace weft::interp {

double convert_to_float(DType to, DType from, double f, std::int64_t i) {
  if (is_float(from)) return round_to(to, f);
  // Straight from the integer: going through double first would round an i64 twice.
  if (to == DType::F32) return static_cast<float>(i);
  return static_cast<double>(i);
}

std::int64_t convert_to_int(DType to, DType from, double f, std::int64_t i) {
  if (to == DType::Bool) return is_float(from) ? (f != 0 ? 1 : 0) : (i != 0 ? 1 : 0);
  if (!is_float(from)) return wrap_to(to, i);
  if (std::isnan(f)) return 0;
  const double t = std::trunc(f);
  const std::int64_t lo = int_lowest(to);
  const std::int64_t hi = int_highest(to);
  if (t <= static_cast<double>(lo)) return lo;
  // (double)hi rounds up to 2^63 for i64; every t below it converts without overflow.
  if (t >= static_cast<double>(hi)) return hi;
  return static_cast<std::int64_t>(t);
}

Value eval_convert(const Node& node, Operands operands) {
  const Value& x = *operands[0];
  Value out = make_value(node.dtype, node.shape);
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

}  // namespace weft::interp
