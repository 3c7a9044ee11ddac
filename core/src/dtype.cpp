#include "weft/dtype.h"

#include "weft/error.h"
#include "weft/shape.h"

namespace weft {

std::string_view dtype_name(DType t) {
  switch (t) {
    case DType::Bool:
      return "bool";
    case DType::I32:
      return "i32";
    case DType::I64:
      return "i64";
    case DType::U32:
      return "u32";
    case DType::F32:
      return "f32";
    case DType::F64:
      return "f64";
    case DType::Token:
      return "token";
    case DType::U8:
      return "u8";
    case DType::I8:
      return "i8";
    case DType::U16:
      return "u16";
    case DType::I16:
      return "i16";
    case DType::U64:
      return "u64";
    case DType::F16:
      return "f16";
    case DType::BF16:
      return "bf16";
  }
  return "?";
}

std::optional<DType> dtype_from_name(std::string_view name) {
  for (DType t : kAllDTypes)
    if (dtype_name(t) == name) return t;
  if (name == dtype_name(DType::Token)) return DType::Token;
  return std::nullopt;
}

std::size_t dtype_size(DType t) {
  switch (t) {
    case DType::Bool:
    case DType::U8:
    case DType::I8:
      return 1;
    case DType::U16:
    case DType::I16:
    case DType::F16:
    case DType::BF16:
      return 2;
    case DType::I32:
    case DType::U32:
    case DType::F32:
      return 4;
    case DType::I64:
    case DType::U64:
    case DType::F64:
      return 8;
    case DType::Token:
      return 0;
  }
  return 0;
}

std::int64_t num_elements(const Shape& shape) {
  std::int64_t n = 1;
  for (auto d : shape)
    if (__builtin_mul_overflow(n, d, &n))
      throw ShapeError("shape " + shape_to_string(shape) +
                       " has more elements than a 64-bit count can hold; use smaller dimensions");
  return n;
}

std::string shape_to_string(const Shape& shape) {
  std::string s = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ",";
    s += std::to_string(shape[i]);
  }
  return s + "]";
}

std::vector<std::int64_t> row_major_strides(const Shape& shape) {
  std::vector<std::int64_t> strides(shape.size(), 1);
  for (std::size_t i = shape.size(); i-- > 1;) strides[i - 1] = strides[i] * shape[i];
  return strides;
}

}  // namespace weft
