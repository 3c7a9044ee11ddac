// A host-side array: bytes plus dtype and shape. The result of to_host() and the currency of
// the reference interpreter and of .npy files.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <vector>

#include "weft/dtype.h"
#include "weft/error.h"
#include "weft/shape.h"

namespace weft {

class HostArray {
 public:
  HostArray() = default;
  HostArray(DType dtype, Shape shape);  // zero-filled

  template <typename T>
  static HostArray from(Shape shape, const std::vector<T>& values) {
    HostArray a(dtype_v<T>, std::move(shape));
    if (static_cast<std::int64_t>(values.size()) != a.size())
      throw ShapeError("HostArray::from: " + std::to_string(values.size()) +
                       " values do not fill shape " + shape_to_string(a.shape()));
    if constexpr (std::is_same_v<T, bool>) {
      for (std::size_t i = 0; i < values.size(); ++i) a.bytes_[i] = std::byte(values[i] ? 1 : 0);
    } else {
      std::memcpy(a.bytes_.data(), values.data(), a.bytes_.size());
    }
    return a;
  }

  DType dtype() const { return dtype_; }
  const Shape& shape() const { return shape_; }
  std::int64_t size() const { return num_elements(shape_); }
  std::size_t nbytes() const { return bytes_.size(); }
  std::byte* raw() { return bytes_.data(); }
  const std::byte* raw() const { return bytes_.data(); }

  // Typed view; throws DTypeError if T does not match the dtype (bool reads as uint8_t).
  template <typename T>
  std::span<const T> view() const {
    check_view(dtype_v<T>);
    return {reinterpret_cast<const T*>(bytes_.data()), static_cast<std::size_t>(size())};
  }
  template <typename T>
  std::span<T> view() {
    check_view(dtype_v<T>);
    return {reinterpret_cast<T*>(bytes_.data()), static_cast<std::size_t>(size())};
  }
  template <typename T>
  std::vector<T> to_vector() const {
    auto v = view<T>();
    return {v.begin(), v.end()};
  }

  // Element i (row-major) converted to double / int64, whatever the dtype. u64 elements go
  // through int64 as their bit pattern (get_i64 of 2^64 - 1 is -1); f16 and bf16 round to
  // nearest even on set.
  double get_f64(std::int64_t i) const;
  std::int64_t get_i64(std::int64_t i) const;
  void set_f64(std::int64_t i, double v);  // converts to the dtype (ints truncate)
  void set_i64(std::int64_t i, std::int64_t v);

  std::string to_string(int max_elements = 64) const;  // numpy-like, elided when large

 private:
  void check_view(DType requested) const;
  DType dtype_ = DType::F32;
  Shape shape_;
  std::vector<std::byte> bytes_;
};

// bool views read one byte per element.
template <>
inline std::span<const bool> HostArray::view<bool>() const {
  check_view(DType::Bool);
  return {reinterpret_cast<const bool*>(bytes_.data()), static_cast<std::size_t>(size())};
}

}  // namespace weft
