#include "value.h"

#include <limits>

namespace weft::interp {

Value make_value(DType dtype, Shape shape) {
  Value v{dtype, std::move(shape), {}, {}};
  if (dtype == DType::Token) return v;  // orders effects, holds nothing
  const auto n = static_cast<std::size_t>(v.size());
  if (is_float(dtype)) {
    v.f.assign(n, 0.0);
  } else {
    v.i.assign(n, 0);
  }
  return v;
}

Value from_host(const HostArray& host) {
  Value v = make_value(host.dtype(), host.shape());
  if (host.dtype() == DType::Token) return v;
  const std::int64_t n = v.size();
  // The common dtypes through typed views: get_f64/get_i64 check every index.
  if (host.dtype() == DType::F32) {
    const auto src = host.view<float>();
    for (std::int64_t k = 0; k < n; ++k) v.f[k] = src[k];
  } else if (host.dtype() == DType::F64) {
    const auto src = host.view<double>();
    for (std::int64_t k = 0; k < n; ++k) v.f[k] = src[k];
  } else if (host.dtype() == DType::I32) {
    const auto src = host.view<std::int32_t>();
    for (std::int64_t k = 0; k < n; ++k) v.i[k] = src[k];
  } else if (is_float(host.dtype())) {
    for (std::int64_t k = 0; k < n; ++k) v.f[k] = host.get_f64(k);
  } else {
    for (std::int64_t k = 0; k < n; ++k) v.i[k] = host.get_i64(k);
  }
  return v;
}

HostArray to_host(const Value& value) {
  HostArray host(value.dtype, value.shape);
  if (value.dtype == DType::Token) return host;
  const std::int64_t n = value.size();
  if (value.dtype == DType::F32) {
    const auto dst = host.view<float>();
    for (std::int64_t k = 0; k < n; ++k) dst[k] = static_cast<float>(value.f[k]);
  } else if (value.dtype == DType::F64) {
    const auto dst = host.view<double>();
    for (std::int64_t k = 0; k < n; ++k) dst[k] = value.f[k];
  } else if (value.dtype == DType::I32) {
    const auto dst = host.view<std::int32_t>();
    for (std::int64_t k = 0; k < n; ++k) dst[k] = static_cast<std::int32_t>(value.i[k]);
  } else if (is_float(value.dtype)) {
    for (std::int64_t k = 0; k < n; ++k) host.set_f64(k, value.f[k]);
  } else {
    for (std::int64_t k = 0; k < n; ++k) host.set_i64(k, value.i[k]);
  }
  return host;
}

std::int64_t int_lowest(DType t) {
  switch (t) {
    case DType::I32:
      return std::numeric_limits<std::int32_t>::min();
    case DType::I64:
      return std::numeric_limits<std::int64_t>::min();
    case DType::I8:
      return std::numeric_limits<std::int8_t>::min();
    case DType::I16:
      return std::numeric_limits<std::int16_t>::min();
    default:
      return 0;  // bool and the unsigned integers
  }
}

std::int64_t int_highest(DType t) {
  switch (t) {
    case DType::Bool:
      return 1;
    case DType::I32:
      return std::numeric_limits<std::int32_t>::max();
    case DType::U32:
      return std::numeric_limits<std::uint32_t>::max();
    case DType::I8:
      return std::numeric_limits<std::int8_t>::max();
    case DType::U8:
      return std::numeric_limits<std::uint8_t>::max();
    case DType::I16:
      return std::numeric_limits<std::int16_t>::max();
    case DType::U16:
      return std::numeric_limits<std::uint16_t>::max();
    case DType::U64:
      return -1;  // all ones
    default:
      return std::numeric_limits<std::int64_t>::max();
  }
}

}  // namespace weft::interp
