#include "weft/host_array.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

namespace weft {

namespace {

template <typename T>
T load(const std::byte* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}

template <typename T>
void store(std::byte* p, T v) {
  std::memcpy(p, &v, sizeof(T));
}

// Saturating float-to-int conversion: NaN becomes 0, so no value reaches undefined behaviour.
std::int64_t saturate_to_i64(double v, double lo, double hi_exclusive, std::int64_t lo_int,
                             std::int64_t hi_int) {
  if (std::isnan(v)) return 0;
  if (v < lo) return lo_int;
  if (v >= hi_exclusive) return hi_int;
  return static_cast<std::int64_t>(std::trunc(v));
}

std::string format_element(const HostArray& a, std::int64_t i) {
  switch (a.dtype()) {
    case DType::Bool:
      return a.get_i64(i) ? "true" : "false";
    case DType::U64:
      return std::to_string(static_cast<std::uint64_t>(a.get_i64(i)));
    case DType::F16:
    case DType::BF16:
    case DType::F32:
    case DType::F64: {
      char buf[32];
      std::snprintf(buf, sizeof buf, "%.6g", a.get_f64(i));
      return buf;
    }
    default:
      return std::to_string(a.get_i64(i));
  }
}

// Prints the sub-array at `offset` spanning axes [axis, rank); `edge` > 0 elides the middle of
// every axis longer than 2 * edge, as numpy does.
void format_axis(const HostArray& a, const std::vector<std::int64_t>& strides, std::size_t axis,
                 std::int64_t offset, std::int64_t edge, std::string& out) {
  const std::int64_t n = a.shape()[axis];
  const bool elide = edge > 0 && n > 2 * edge;
  out += '[';
  for (std::int64_t k = 0; k < n; ++k) {
    if (elide && k == edge) {
      out += "..., ";
      k = n - edge;
    }
    if (axis + 1 == a.shape().size()) {
      out += format_element(a, offset + k * strides[axis]);
    } else {
      format_axis(a, strides, axis + 1, offset + k * strides[axis], edge, out);
    }
    if (k + 1 < n) out += ", ";
  }
  out += ']';
}

}  // namespace

HostArray::HostArray(DType dtype, Shape shape) : dtype_(dtype), shape_(std::move(shape)) {
  for (auto d : shape_)
    if (d < 0)
      throw ShapeError("HostArray: shape " + shape_to_string(shape_) + " has a negative dimension");
  bytes_.assign(dtype_size(dtype_) * static_cast<std::size_t>(num_elements(shape_)), std::byte{0});
}

void HostArray::check_view(DType requested) const {
  if (requested != dtype_)
    throw DTypeError("HostArray holds " + std::string(dtype_name(dtype_)) + " but was viewed as " +
                     std::string(dtype_name(requested)));
}

namespace {

void check_index(const HostArray& a, std::int64_t i) {
  if (i < 0 || i >= a.size())
    throw InvalidArgumentError("HostArray: element " + std::to_string(i) + " is out of range for " +
                               std::string(dtype_name(a.dtype())) + shape_to_string(a.shape()));
}

[[noreturn]] void throw_token_has_no_elements() {
  throw DTypeError("a token orders effects and holds no elements; it cannot be read or written");
}

}  // namespace

double HostArray::get_f64(std::int64_t i) const {
  check_index(*this, i);
  const std::byte* p = bytes_.data() + static_cast<std::size_t>(i) * dtype_size(dtype_);
  switch (dtype_) {
    case DType::Token:
      throw_token_has_no_elements();
    case DType::Bool:
      return load<std::uint8_t>(p) ? 1.0 : 0.0;
    case DType::I32:
      return load<std::int32_t>(p);
    case DType::I64:
      return static_cast<double>(load<std::int64_t>(p));
    case DType::U32:
      return load<std::uint32_t>(p);
    case DType::F32:
      return load<float>(p);
    case DType::F64:
      return load<double>(p);
    case DType::U8:
      return load<std::uint8_t>(p);
    case DType::I8:
      return load<std::int8_t>(p);
    case DType::U16:
      return load<std::uint16_t>(p);
    case DType::I16:
      return load<std::int16_t>(p);
    case DType::U64:
      return static_cast<double>(load<std::uint64_t>(p));
    case DType::F16:
      return float16::to_float(load<std::uint16_t>(p));
    case DType::BF16:
      return bfloat16::to_float(load<std::uint16_t>(p));
  }
  return 0;
}

std::int64_t HostArray::get_i64(std::int64_t i) const {
  check_index(*this, i);
  const std::byte* p = bytes_.data() + static_cast<std::size_t>(i) * dtype_size(dtype_);
  switch (dtype_) {
    case DType::Token:
      throw_token_has_no_elements();
    case DType::Bool:
      return load<std::uint8_t>(p) ? 1 : 0;
    case DType::I32:
      return load<std::int32_t>(p);
    case DType::I64:
      return load<std::int64_t>(p);
    case DType::U32:
      return load<std::uint32_t>(p);
    case DType::U8:
      return load<std::uint8_t>(p);
    case DType::I8:
      return load<std::int8_t>(p);
    case DType::U16:
      return load<std::uint16_t>(p);
    case DType::I16:
      return load<std::int16_t>(p);
    case DType::U64:  // the bit pattern, as the interpreter keeps it
      return static_cast<std::int64_t>(load<std::uint64_t>(p));
    case DType::F16:
    case DType::BF16:
    case DType::F32:
    case DType::F64: {
      constexpr double kTwo63 = 9223372036854775808.0;
      return saturate_to_i64(get_f64(i), -kTwo63, kTwo63, std::numeric_limits<std::int64_t>::min(),
                             std::numeric_limits<std::int64_t>::max());
    }
  }
  return 0;
}

void HostArray::set_f64(std::int64_t i, double v) {
  check_index(*this, i);
  std::byte* p = bytes_.data() + static_cast<std::size_t>(i) * dtype_size(dtype_);
  switch (dtype_) {
    case DType::Token:
      throw_token_has_no_elements();
    case DType::Bool:
      store<std::uint8_t>(p, v != 0 ? 1 : 0);
      break;
    case DType::I32:
      store(p, static_cast<std::int32_t>(saturate_to_i64(
                   v, -2147483648.0, 2147483648.0, std::numeric_limits<std::int32_t>::min(),
                   std::numeric_limits<std::int32_t>::max())));
      break;
    case DType::U32:
      store(p, static_cast<std::uint32_t>(saturate_to_i64(v, 0.0, 4294967296.0, 0, 4294967295LL)));
      break;
    case DType::I64: {
      constexpr double kTwo63 = 9223372036854775808.0;
      store(p, saturate_to_i64(v, -kTwo63, kTwo63, std::numeric_limits<std::int64_t>::min(),
                               std::numeric_limits<std::int64_t>::max()));
      break;
    }
    case DType::F32:
      store(p, static_cast<float>(v));
      break;
    case DType::F64:
      store(p, v);
      break;
    case DType::U8:
      store(p, static_cast<std::uint8_t>(saturate_to_i64(v, 0.0, 256.0, 0, 255)));
      break;
    case DType::I8:
      store(p, static_cast<std::int8_t>(saturate_to_i64(v, -128.0, 128.0, -128, 127)));
      break;
    case DType::U16:
      store(p, static_cast<std::uint16_t>(saturate_to_i64(v, 0.0, 65536.0, 0, 65535)));
      break;
    case DType::I16:
      store(p, static_cast<std::int16_t>(saturate_to_i64(v, -32768.0, 32768.0, -32768, 32767)));
      break;
    case DType::U64: {
      constexpr double kTwo64 = 18446744073709551616.0;
      std::uint64_t u = 0;
      if (std::isnan(v) || v <= 0) {
        u = 0;
      } else if (v >= kTwo64) {
        u = std::numeric_limits<std::uint64_t>::max();
      } else {
        u = static_cast<std::uint64_t>(std::trunc(v));
      }
      store(p, u);
      break;
    }
    case DType::F16:
      store(p, float16::from_float(static_cast<float>(v)));
      break;
    case DType::BF16:
      store(p, bfloat16::from_float(static_cast<float>(v)));
      break;
  }
}

void HostArray::set_i64(std::int64_t i, std::int64_t v) {
  check_index(*this, i);
  std::byte* p = bytes_.data() + static_cast<std::size_t>(i) * dtype_size(dtype_);
  switch (dtype_) {
    case DType::Token:
      throw_token_has_no_elements();
    case DType::Bool:
      store<std::uint8_t>(p, v != 0 ? 1 : 0);
      break;
    // Integers wrap modulo 2^bits, like a convert between integer dtypes.
    case DType::I32:
      store(p, static_cast<std::int32_t>(static_cast<std::uint32_t>(v)));
      break;
    case DType::U32:
      store(p, static_cast<std::uint32_t>(v));
      break;
    case DType::I64:
      store(p, v);
      break;
    case DType::F32:
      store(p, static_cast<float>(v));
      break;
    case DType::F64:
      store(p, static_cast<double>(v));
      break;
    case DType::U8:
      store(p, static_cast<std::uint8_t>(v));
      break;
    case DType::I8:
      store(p, static_cast<std::int8_t>(static_cast<std::uint8_t>(v)));
      break;
    case DType::U16:
      store(p, static_cast<std::uint16_t>(v));
      break;
    case DType::I16:
      store(p, static_cast<std::int16_t>(static_cast<std::uint16_t>(v)));
      break;
    case DType::U64:  // a bit pattern
      store(p, static_cast<std::uint64_t>(v));
      break;
    case DType::F16:
      store(p, float16::from_float(static_cast<float>(v)));
      break;
    case DType::BF16:
      store(p, bfloat16::from_float(static_cast<float>(v)));
      break;
  }
}

std::string HostArray::to_string(int max_elements) const {
  if (dtype_ == DType::Token) return "token";
  if (shape_.empty()) return format_element(*this, 0);
  const std::int64_t edge = size() > max_elements ? std::clamp(max_elements / 2, 1, 3) : 0;
  std::string out;
  format_axis(*this, row_major_strides(shape_), 0, 0, edge, out);
  return out;
}

}  // namespace weft
