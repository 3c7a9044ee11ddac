// Array: the one value type users handle. It is one of three things:
//  - concrete: a device buffer whose data is ready when its event completes (asynchronous);
//  - literal: a host scalar not yet on any device (a staged constant inside a trace);
//  - tracer: an abstract value inside a trace, with a dtype and shape but no data.
#pragma once

#include <cstdint>
#include <memory>
#include <source_location>
#include <string>
#include <vector>

#include "weft/dtype.h"
#include "weft/host_array.h"
#include "weft/shape.h"

namespace weft {

class Device;
class Buffer;
namespace detail {
struct ArrayImpl;
}

class Array {
 public:
  Array() = default;  // an empty handle; most operations on it throw InvalidArgumentError

  // A scalar literal of the given dtype.
  static Array scalar(double value, DType dtype = DType::F32);
  static Array scalar_int(std::int64_t value, DType dtype = DType::I32);
  // Uploads host data to `device` (the default device when null). Asynchronous.
  static Array from_host(const HostArray& host, Device* device = nullptr);
  template <typename T>
  static Array from_vector(Shape shape, const std::vector<T>& values, Device* device = nullptr) {
    return from_host(HostArray::from<T>(std::move(shape), values), device);
  }

  bool valid() const { return impl_ != nullptr; }
  DType dtype() const;
  const Shape& shape() const;
  std::int64_t ndim() const { return static_cast<std::int64_t>(shape().size()); }
  std::int64_t size() const { return num_elements(shape()); }
  bool is_tracer() const;
  bool is_literal() const;
  bool is_concrete() const;  // on a device

  // Waits for the data and copies it to the host. ConcretizationError on a tracer.
  HostArray to_host(std::source_location loc = std::source_location::current()) const;
  template <typename T>
  std::vector<T> to_vector(std::source_location loc = std::source_location::current()) const {
    return to_host(loc).to_vector<T>();
  }
  // The value of a one-element array. ConcretizationError on a tracer.
  template <typename T>
  T item(std::source_location loc = std::source_location::current()) const {
    return static_cast<T>(is_float(dtype()) ? static_cast<T>(item_f64(loc))
                                            : static_cast<T>(item_i64(loc)));
  }
  double item_f64(std::source_location loc = std::source_location::current()) const;
  std::int64_t item_i64(std::source_location loc = std::source_location::current()) const;
  // Truth of a one-element array; ConcretizationError on a tracer.
  explicit operator bool() const;

  // Returns once the data is computed (a no-op for literals). ConcretizationError on a tracer.
  const Array& block_until_ready(std::source_location loc = std::source_location::current()) const;
  // The device that holds the data (literals: the default device).
  Device& device() const;

  // Method forms of common np functions (defined with them in np.cpp).
  Array reshape(Shape shape, std::source_location loc = std::source_location::current()) const;
  Array astype(DType dtype, std::source_location loc = std::source_location::current()) const;
  Array T(std::source_location loc = std::source_location::current()) const;

  std::string to_string() const;  // values for concrete arrays, "Tracer<f32[3]>" for tracers

  const std::shared_ptr<detail::ArrayImpl>& impl() const { return impl_; }
  explicit Array(std::shared_ptr<detail::ArrayImpl> impl) : impl_(std::move(impl)) {}

 private:
  std::shared_ptr<detail::ArrayImpl> impl_;
};

// Copies `array` onto `device` (asynchronous). Tracers are returned unchanged.
Array device_put(const Array& array, Device& device);

}  // namespace weft
