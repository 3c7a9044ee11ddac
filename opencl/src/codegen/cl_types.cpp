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
    case DType::Token:  // no kernel reads or writes a token (verify)
      break;
  }
  return "?";
}

std::string cl_storage_type(DType t) {
  return t == DType::Bool ? "uchar" : cl_type(t);
}

std::string cl_float_literal(double v, DType t) {
  const bool f32 = t == DType::F32;
  if (std::isnan(v)) return f32 ? "NAN" : "(double)NAN";
  if (std::isinf(v)) return std::string(v < 0 ? "-" : "") + (f32 ? "INFINITY" : "(double)INFINITY");
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
