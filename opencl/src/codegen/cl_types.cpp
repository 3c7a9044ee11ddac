#include "codegen/cl_types.h"

#include <cmath>
#include <cstdio>
#include <limits>

namespace weft::opencl {

std::string cl_type(DType t) {
  switch (t) {
    case DType::Bool:
      return "bool";
    case DType::I32:
      return "int";
    case DType::I64:
      return "long";
    case DType::U32:
      return "uint";
    case DType::F32:
      return "float";
    case DType::F64:
      return "double";
    case DType::U8:
      return "uchar";
    case DType::I8:
      return "char";
    case DType::U16:
      return "ushort";
    case DType::I16:
      return "short";
    case DType::U64:
      return "ulong";
    case DType::F16:
    case DType::BF16:
      return "float";
    case DType::Token:  // no kernel reads or writes a token (verify)
      break;
  }
  return "?";
}

std::string cl_storage_type(DType t) {
  switch (t) {
    case DType::Bool:
      return "uchar";
    case DType::F16:
      return "half";
    case DType::BF16:
      return "ushort";
    default:
      return cl_type(t);
  }
}

std::string cl_load(DType t, const std::string& buffer, const std::string& index) {
  switch (t) {
    case DType::Bool:
      return "(" + buffer + "[" + index + "] != 0)";
    case DType::F16:
      return "weft_load_f16(" + index + ", " + buffer + ")";
    case DType::BF16:
      return "weft_bf16_to_float(" + buffer + "[" + index + "])";
    default:
      return buffer + "[" + index + "]";
  }
}

std::string cl_store(DType t, const std::string& buffer, const std::string& index,
                     const std::string& value) {
  switch (t) {
    case DType::Bool:
      return buffer + "[" + index + "] = (uchar)(" + value + ");";
    case DType::F16:
      return "weft_store_f16(" + value + ", " + index + ", " + buffer + ");";
    case DType::BF16:
      return buffer + "[" + index + "] = weft_float_to_bf16(" + value + ");";
    default:
      return buffer + "[" + index + "] = " + value + ";";
  }
}

std::string cl_round_to_dtype(DType t, const std::string& value) {
  if (t == DType::F16) return "weft_round_f16(" + value + ")";
  if (t == DType::BF16) return "weft_round_bf16(" + value + ")";
  return value;
}

// Round to nearest even, as weft/half.h does on the host. vstore_half_rte and vload_half are
// core OpenCL C (no cl_khr_fp16 needed) but only on buffers: OpenCL 1.2 allows no private half
// variable, so weft_round_f16 rounds the float's bits in place, and weft_f16_bits /
// weft_f16_from_bits (bitcast_convert) move an f16 value, held in a float, to its bits and back.
const char* const kHalfFloatHelpers = R"CL(
static inline float weft_bf16_to_float(ushort b) { return as_float((uint)b << 16); }
static inline ushort weft_float_to_bf16(float f) {
  const uint x = as_uint(f);
  if ((x & 0x7FFFFFFFu) > 0x7F800000u) return (ushort)((x >> 16) | 0x40u);
  return (ushort)((x + 0x7FFFu + ((x >> 16) & 1u)) >> 16);
}
static inline float weft_round_bf16(float f) { return weft_bf16_to_float(weft_float_to_bf16(f)); }
static inline float weft_round_f16(float f) {
  const uint x = as_uint(f), magnitude = x & 0x7FFFFFFFu;
  const uint sign = x & 0x80000000u;
  if (magnitude >= 0x7F800000u) return f;
  if (magnitude >= 0x477FF000u) return as_float(sign | 0x7F800000u);
  if (magnitude < 0x38800000u) return copysign(rint(fabs(f) * 16777216.0f) * 0x1.0p-24f, f);
  const uint rounded = (magnitude + 0xFFFu + ((magnitude >> 13) & 1u)) & ~0x1FFFu;
  return as_float(sign | rounded);
}
static inline ushort weft_f16_bits(float f) {
  const uint x = as_uint(f), sign = (x >> 16) & 0x8000u, magnitude = x & 0x7FFFFFFFu;
  if (magnitude > 0x7F800000u) return (ushort)(sign | 0x7E00u | ((magnitude >> 13) & 0x3FFu));
  if (magnitude >= 0x47800000u) return (ushort)(sign | 0x7C00u);
  if (magnitude < 0x38800000u) return (ushort)(sign | (uint)rint(as_float(magnitude) * 16777216.0f));
  return (ushort)(sign | ((magnitude - 0x38000000u) >> 13));
}
static inline float weft_f16_from_bits(ushort h) {
  const uint sign = ((uint)h & 0x8000u) << 16, e = ((uint)h >> 10) & 0x1Fu, m = (uint)h & 0x3FFu;
  if (e == 0u) return as_float(sign | as_uint((float)m * 0x1.0p-24f));
  if (e == 31u) return as_float(sign | 0x7F800000u | (m << 13));
  return as_float(sign | ((e + 112u) << 23) | (m << 13));
}
// f16 NaNs keep their sign and payload, as on the host: NVIDIA's vload_half returns a NaN
// without its sign, which ranked -NaN with the largest values in top_k (vstore_half_rte is
// given the same care). Only NaNs take the slower path.
static inline float weft_load_f16(size_t i, __global const half* p) {
  const float f = vload_half(i, p);
  return isnan(f) ? weft_f16_from_bits(((__global const ushort*)p)[i]) : f;
}
static inline void weft_store_f16(float f, size_t i, __global half* p) {
  if (isnan(f))
    ((__global ushort*)p)[i] = weft_f16_bits(f);
  else
    vstore_half_rte(f, i, p);
}
)CL";

std::string cl_float_literal(double v, DType t) {
  const bool f32 = t != DType::F64;  // f16 and bf16 compute in float
  // The quiet NaN JAX and the host write (OpenCL's NAN is as_float(INT_MAX), another payload).
  if (std::isnan(v)) return f32 ? "as_float(0x7fc00000u)" : "as_double(0x7ff8000000000000ul)";
  if (std::isinf(v)) return std::string(v < 0 ? "-" : "") + (f32 ? "INFINITY" : "(double)INFINITY");
  // f16 and bf16 constants are rounded to their dtype, as the interpreter rounds them.
  if (t == DType::F16) v = float16::to_float(float16::from_float(static_cast<float>(v)));
  if (t == DType::BF16) v = bfloat16::to_float(bfloat16::from_float(static_cast<float>(v)));
  char buf[64];
  // Hex floats are exact, so the device sees the same constant the interpreter does.
  std::snprintf(buf, sizeof buf, "%a", f32 ? static_cast<double>(static_cast<float>(v)) : v);
  return std::string("(") + buf + (f32 ? "f)" : ")");
}

std::string cl_int_literal(std::int64_t v, DType t) {
  switch (t) {
    case DType::Bool:
      return v ? "true" : "false";
    case DType::U32:
      return std::to_string(static_cast<std::uint32_t>(v)) + "u";
    case DType::I32:
      if (v == std::numeric_limits<std::int32_t>::min()) return "INT_MIN";
      return "(" + std::to_string(static_cast<std::int32_t>(v)) + ")";
    case DType::I64:
      if (v == std::numeric_limits<std::int64_t>::min()) return "LONG_MIN";
      return "(" + std::to_string(v) + "L)";
    case DType::U8:
    case DType::U16:
      return "((" + cl_type(t) + ")" + std::to_string(v) + "u)";
    case DType::I8:
    case DType::I16:
      return "((" + cl_type(t) + ")(" + std::to_string(v) + "))";
    case DType::U64:
      return std::to_string(static_cast<std::uint64_t>(v)) + "UL";
    case DType::F16:
    case DType::BF16:
    case DType::F32:
    case DType::F64:
      return cl_float_literal(static_cast<double>(v), t);
    case DType::Token:
      break;
  }
  return "0";
}

std::string cl_lowest(DType t) {
  switch (t) {
    case DType::Bool:
      return "false";
    case DType::I32:
      return "INT_MIN";
    case DType::I64:
      return "LONG_MIN";
    case DType::U32:
      return "0u";
    case DType::U8:
    case DType::U16:
      return "((" + cl_type(t) + ")0)";
    case DType::U64:
      return "0UL";
    case DType::I8:
      return "CHAR_MIN";
    case DType::I16:
      return "SHRT_MIN";
    case DType::F16:
    case DType::BF16:
    case DType::F32:
      return "(-INFINITY)";
    case DType::F64:
      return "(-(double)INFINITY)";
    case DType::Token:
      break;
  }
  return "0";
}

std::string cl_highest(DType t) {
  switch (t) {
    case DType::Bool:
      return "true";
    case DType::I32:
      return "INT_MAX";
    case DType::I64:
      return "LONG_MAX";
    case DType::U32:
      return "UINT_MAX";
    case DType::U8:
      return "UCHAR_MAX";
    case DType::U16:
      return "USHRT_MAX";
    case DType::U64:
      return "ULONG_MAX";
    case DType::I8:
      return "CHAR_MAX";
    case DType::I16:
      return "SHRT_MAX";
    case DType::F16:
    case DType::BF16:
    case DType::F32:
      return "INFINITY";
    case DType::F64:
      return "((double)INFINITY)";
    case DType::Token:
      break;
  }
  return "0";
}

}  // namespace weft::opencl
