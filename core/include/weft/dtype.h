// Element types. Every device supports all but f64, which needs cl_khr_fp64. `token` is not an
// element type of arrays users see: it orders effects (see weft/ir/effects.h), holds no data
// (0 bytes) and only host ops, after_all, control ops and function boundaries pass it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace weft {

enum class DType : std::uint8_t { Bool, I32, I64, U32, F32, F64, Token };

// The array element types (every dtype but token).
inline constexpr DType kAllDTypes[] = {DType::Bool, DType::I32, DType::I64,
                                       DType::U32,  DType::F32, DType::F64};

// "bool", "i32", "i64", "u32", "f32", "f64", "token": the spelling used in the IR text.
std::string_view dtype_name(DType t);
std::optional<DType> dtype_from_name(std::string_view name);
std::size_t dtype_size(DType t);  // bytes per element in device and host buffers (token: 0)

inline bool is_float(DType t) {
  return t == DType::F32 || t == DType::F64;
}
inline bool is_integer(DType t) {
  return t == DType::I32 || t == DType::I64 || t == DType::U32;
}
inline bool is_signed_integer(DType t) {
  return t == DType::I32 || t == DType::I64;
}

// The C++ type that maps to each dtype; bool is stored as one byte.
template <typename T>
struct dtype_of;
template <>
struct dtype_of<bool> {
  static constexpr DType value = DType::Bool;
};
template <>
struct dtype_of<std::int32_t> {
  static constexpr DType value = DType::I32;
};
template <>
struct dtype_of<std::int64_t> {
  static constexpr DType value = DType::I64;
};
template <>
struct dtype_of<std::uint32_t> {
  static constexpr DType value = DType::U32;
};
template <>
struct dtype_of<float> {
  static constexpr DType value = DType::F32;
};
template <>
struct dtype_of<double> {
  static constexpr DType value = DType::F64;
};
template <typename T>
inline constexpr DType dtype_v = dtype_of<T>::value;

}  // namespace weft
