// Helpers shared by the tests: comparing device results with the reference interpreter.
#pragma once

#include <string>

#include "weft/host_array.h"

namespace weft::testing {

// Empty when a and b agree within rtol/atol elementwise (NaNs must match); otherwise a
// message naming the first mismatching element.
std::string compare_arrays(const HostArray& actual, const HostArray& expected, double rtol = 1e-5,
                           double atol = 1e-6);

}  // namespace weft::testing
