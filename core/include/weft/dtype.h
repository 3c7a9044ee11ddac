// Element types. Every device supports all but f64, which needs cl_khr_fp64. f16 and bf16 are
// stored in 16 bits (weft/half.h) and computed in f32, rounded to the dtype after every op. `token`
// is not an element type of arrays users see: it orders effects (see weft/ir/effects.h), holds no
// data (0 bytes) and only host ops, after_all, control ops and function boundaries pass it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include "weft/half.h"

namespace weft {

// The narrow and half-precision dtypes follow Token so the older enumerators keep their values.
enum class DType : std::uint8_t {
  Bool,
  I32,
  I64,
  U32,
  F32,
  F64,
  Token,
  U8,
  I8,
  U16,
  I16,
  U64,
  F16,
  BF16
};

// The array element types (every dtype but token).
inline constexpr DType kAllDTypes[] = {DType::Bool, DType::I32, DType::I64, DType::U32, DType::F32,
                                       DType::F64,  DType::U8,  DType::I8,  DType::U16, DType::I16,
                                       DType::U64,  DType::F16, DType::BF16};

// "bool", "i32", "i64", "u32", "f32", "f64", "u8", "i8", "u16", "i16", "u64", "f16", "bf16",
// "token": the spelling used in the IR text.
std::string_view dtype_name(DType t);
std::optional<DType> dtype_from_name(std::string_view name);
std::size_t dtype_size(DType t);  // bytes per element in device and host buffers (token: 0)

inline bool is_float(DType t) {
  return t == DType::F32 || t == DType::F64 || t == DType::F16 || t == DType::BF16;
}
// f16 and bf16: stored in 16 bits, computed in f32.
inline bool is_half_float(DType t) {
  return t == DType::F16 || t == DType::BF16;
}
inline bool is_signed_integer(DType t) {
  return t == DType::I8 || t == DType::I16 || t == DType::I32 || t == DType::I64;
}
inline bool is_unsigned_integer(DType t) {
  return t == DType::U8 || t == DType::U16 || t == DType::U32 || t == DType::U64;
}
inline bool is_integer(DType t) {
  return is_signed_integer(t) || is_unsigned_integer(t);
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
template <>
struct dtype_of<std::uint8_t> {
  static constexpr DType value = DType::U8;
};
template <>
struct dtype_of<std::int8_t> {
  static constexpr DType value = DType::I8;
};
template <>
struct dtype_of<std::uint16_t> {
  static constexpr DType value = DType::U16;
};
template <>
struct dtype_of<std::int16_t> {
  static constexpr DType value = DType::I16;
};
template <>
struct dtype_of<std::uint64_t> {
  static constexpr DType value = DType::U64;
};
template <>
struct dtype_of<float16> {
  static constexpr DType value = DType::F16;
};
template <>
struct dtype_of<bfloat16> {
  static constexpr DType value = DType::BF16;
};
template <typename T>
inline constexpr DType dtype_v = dtype_of<T>::value;

}  // namespace weft
