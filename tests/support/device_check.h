// Runs a function under jit on the default device and compares every output with the
// reference interpreter evaluating the same traced graph on the same inputs.
#pragma once

#include <functional>
#include <random>
#include <string>
#include <vector>

#include "weft/array.h"
#include "weft/trace/jit.h"

namespace weft::testing {

using MultiFn = std::function<std::vector<Array>(const std::vector<Array>&)>;

// Empty on agreement, else a description of the first mismatch (with the IR text).
std::string check_against_interpreter(const MultiFn& fn, const std::vector<HostArray>& inputs,
                                      double rtol = 1e-5, double atol = 1e-6);

// Uniform random data: floats in [lo, hi), integers in [lo, hi], bools 50/50.
HostArray random_array(DType dtype, const Shape& shape, double lo, double hi, std::mt19937& rng);

}  // namespace weft::testing
