// Shared by the transformation tests: the widest float dtype the default device has (f64 for
// finite differences where it can), random arrays of it, and the seed's power3.
#pragma once

#include <random>

#include "support/device_check.h"
#include "weft/hcb.h"
#include "weft/weft.h"

namespace weft::testing {

inline DType widest_float() {
  return default_device().supports(DType::F64) ? DType::F64 : DType::F32;
}

inline Array random_float(const Shape& shape, double lo, double hi, std::mt19937& rng) {
  return Array::from_host(random_array(widest_float(), shape, lo, hi, rng));
}

// The host-callback seed's example: prints "what: x,x² : (x, x²)" and returns x³.
inline Array power3(const Array& x) {
  const Array y = x * x;
  hcb::id_print({x, y}, {.what = "x,x²"});
  return y * x;
}

}  // namespace weft::testing
