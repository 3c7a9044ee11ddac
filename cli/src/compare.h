// Comparing a device result with the reference interpreter's, for `weft run --check` and the
// demo's correctness lines.
#pragma once

#include <cstdint>
#include <string>

#include "weft/host_array.h"

namespace weft::cli {

struct Tolerance {
  double rtol = 1e-4;  // float elements match when |a - e| <= atol + rtol * |e|
  double atol = 1e-5;  // integers and bools must match exactly
};

struct Comparison {
  double max_abs_error = 0;  // over all elements; infinite when NaNs disagree
  double max_rel_error = 0;  // |a - e| / |e|, infinite where e == 0 and a != e
  std::int64_t mismatches = 0;
  std::string first_mismatch;  // "element 12 [1,4]: got 0.5, expected 0.25"; empty when none
  std::string type_error;      // set when dtype or shape differ (nothing else is compared)
  bool ok() const { return type_error.empty() && mismatches == 0; }
};

Comparison compare(const HostArray& actual, const HostArray& expected, Tolerance tolerance = {});

}  // namespace weft::cli
