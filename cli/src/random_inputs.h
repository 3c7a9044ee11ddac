// Seeded pseudo-random inputs for `weft run` and the demo: floats uniform in [-1, 1], signed
// integers in [-10, 10], unsigned integers in [0, 10], bools 50/50 (f16 and bf16 rounded to
// nearest even). The generator is std::mt19937_64, whose
// output the C++ standard fixes, and the mapping to values is ours, so a seed gives the same
// data with every compiler and standard library.
#pragma once

#include <cstddef>
#include <cstdint>

#include "weft/host_array.h"

namespace weft::cli {

// `stream` separates the arrays drawn for one seed (the parameter index, say).
HostArray random_array(DType dtype, const Shape& shape, std::uint64_t seed, std::uint64_t stream);

}  // namespace weft::cli
