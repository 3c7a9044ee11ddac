#include "random_inputs.h"

#include <random>

namespace weft::cli {

HostArray random_array(DType dtype, const Shape& shape, std::uint64_t seed, std::uint64_t stream) {
  // Odd multipliers keep (seed, stream) pairs from colliding for small values of either.
  std::mt19937_64 gen(seed * 0x9E3779B97F4A7C15ULL + (stream + 1) * 0xBF58476D1CE4E5B9ULL);
  HostArray a(dtype, shape);
  for (std::int64_t i = 0; i < a.size(); ++i) {
    const std::uint64_t r = gen();
    switch (dtype) {
      case DType::F16:
      case DType::BF16:
      case DType::F32:
      case DType::F64:
        // The top 53 bits give a uniform double in [0, 1).
        a.set_f64(i, static_cast<double>(r >> 11) * 0x1.0p-53 * 2.0 - 1.0);
        break;
      case DType::Bool:
        a.set_i64(i, static_cast<std::int64_t>(r >> 63));
        break;
      case DType::U8:
      case DType::U16:
      case DType::U32:
      case DType::U64:
        a.set_i64(i, static_cast<std::int64_t>(r % 11));
        break;
      case DType::I8:
      case DType::I16:
      case DType::I32:
      case DType::I64:
        a.set_i64(i, static_cast<std::int64_t>(r % 21) - 10);
        break;
      case DType::Token:  // holds nothing
        return a;
    }
  }
  return a;
}

}  // namespace weft::cli
