#include "compare.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

namespace weft::cli {

namespace {

std::string index_of(const Shape& shape, std::int64_t flat) {
  std::string s;
  for (std::size_t axis = shape.size(); axis-- > 0;) {
    s = std::to_string(flat % shape[axis]) + (s.empty() ? "" : ",") + s;
    flat /= shape[axis];
  }
  return "[" + s + "]";
}

std::string value_text(const HostArray& a, std::int64_t i) {
  if (a.dtype() == DType::U64) return std::to_string(static_cast<std::uint64_t>(a.get_i64(i)));
  if (!is_float(a.dtype())) return std::to_string(a.get_i64(i));
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.9g", a.get_f64(i));
  return buf;
}

}  // namespace

Comparison compare(const HostArray& actual, const HostArray& expected, Tolerance tolerance) {
  Comparison c;
  if (actual.dtype() != expected.dtype() || actual.shape() != expected.shape()) {
    c.type_error = "got " + std::string(dtype_name(actual.dtype())) +
                   shape_to_string(actual.shape()) + ", expected " +
                   std::string(dtype_name(expected.dtype())) + shape_to_string(expected.shape());
    return c;
  }
  constexpr double kInf = std::numeric_limits<double>::infinity();
  const bool floats = is_float(expected.dtype());
  for (std::int64_t i = 0; i < expected.size(); ++i) {
    double abs_error = 0, rel_error = 0;
    bool match = true;
    if (floats) {
      const double a = actual.get_f64(i), e = expected.get_f64(i);
      if (std::isnan(a) || std::isnan(e)) {
        match = std::isnan(a) && std::isnan(e);
        abs_error = rel_error = match ? 0 : kInf;
      } else if (a == e) {  // covers equal infinities
      } else {
        abs_error = std::abs(a - e);
        rel_error = e != 0 ? abs_error / std::abs(e) : kInf;
        match = abs_error <= tolerance.atol + tolerance.rtol * std::abs(e);
      }
    } else {
      const std::int64_t a = actual.get_i64(i), e = expected.get_i64(i);
      if (a != e) {
        match = false;
        // u64 elements come as bit patterns; get_f64 gives their unsigned values.
        const double av = actual.get_f64(i), ev = expected.get_f64(i);
        abs_error = std::abs(av - ev);
        rel_error = ev != 0 ? abs_error / std::abs(ev) : kInf;
      }
    }
    c.max_abs_error = std::max(c.max_abs_error, abs_error);
    c.max_rel_error = std::max(c.max_rel_error, rel_error);
    if (!match && c.mismatches++ == 0)
      c.first_mismatch = "element " + std::to_string(i) + " " + index_of(expected.shape(), i) +
                         ": got " + value_text(actual, i) + ", expected " + value_text(expected, i);
  }
  return c;
}

}  // namespace weft::cli
