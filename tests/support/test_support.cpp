#include "support/test_support.h"

#include <cmath>
#include <sstream>

namespace weft::testing {

std::string compare_arrays(const HostArray& actual, const HostArray& expected, double rtol,
                           double atol) {
  std::ostringstream out;
  if (actual.dtype() != expected.dtype() || actual.shape() != expected.shape()) {
    out << "type mismatch: got " << dtype_name(actual.dtype()) << shape_to_string(actual.shape())
        << ", expected " << dtype_name(expected.dtype()) << shape_to_string(expected.shape());
    return out.str();
  }
  for (std::int64_t i = 0; i < actual.size(); ++i) {
    if (is_float(actual.dtype())) {
      double a = actual.get_f64(i), e = expected.get_f64(i);
      if (std::isnan(a) && std::isnan(e)) continue;
      if (std::isinf(e) && a == e) continue;
      if (std::isnan(a) || std::isnan(e) || std::fabs(a - e) > atol + rtol * std::fabs(e)) {
        out.precision(9);
        out << "element " << i << ": got " << a << ", expected " << e;
        return out.str();
      }
    } else if (actual.get_i64(i) != expected.get_i64(i)) {
      out << "element " << i << ": got " << actual.get_i64(i) << ", expected "
          << expected.get_i64(i);
      return out.str();
    }
  }
  return {};
}

}  // namespace weft::testing
