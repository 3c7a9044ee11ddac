#include "weft/array.h"

#include <cmath>
#include <limits>
#include <sstream>

#include "interp/value.h"
#include "trace/array_impl.h"
#include "trace/effect_tokens.h"
#include "weft/backend.h"
#include "weft/error.h"
#include "weft/telemetry/host_span.h"

namespace weft {

using detail::ArrayImpl;

namespace detail {

Array make_concrete(std::shared_ptr<Buffer> buffer, DType dtype, Shape shape) {
  auto impl = std::make_shared<ArrayImpl>();
  impl->kind = ArrayImpl::Kind::Concrete;
  impl->dtype = dtype;
  impl->shape = std::move(shape);
  impl->buffer = std::move(buffer);
  return Array(std::move(impl));
}

Array make_tracer(std::shared_ptr<TraceState> trace, ValueId id) {
  auto impl = std::make_shared<ArrayImpl>();
  impl->kind = ArrayImpl::Kind::Tracer;
  const Node& n = trace->graph.node(id);
  impl->dtype = n.dtype;
  impl->shape = n.shape;
  impl->trace = std::move(trace);
  impl->id = id;
  return Array(std::move(impl));
}

HostArray literal_to_host(const ArrayImpl& impl) {
  HostArray h(impl.dtype, {});
  if (is_float(impl.dtype)) {
    h.set_f64(0, impl.float_value);
  } else {
    h.set_i64(0, impl.int_value);
  }
  return h;
}

}  // namespace detail

namespace {

Array make_literal(DType dtype, double f, std::int64_t i) {
  auto impl = std::make_shared<ArrayImpl>();
  impl->kind = ArrayImpl::Kind::Literal;
  impl->dtype = dtype;
  if (is_float(dtype)) {
    impl->float_value = interp::round_to(dtype, f);
  } else {
    impl->int_value = interp::wrap_to(dtype, i);  // u64 keeps its bit pattern
  }
  return Array(std::move(impl));
}

const ArrayImpl& concrete_or_throw(const Array& a, const char* what,
                                   const std::source_location& loc) {
  const ArrayImpl& impl = detail::impl_of(a, what);
  if (impl.kind == ArrayImpl::Kind::Tracer) {
    detail::check_not_escaped(impl, loc);
    detail::throw_concretization_error(impl, what, loc);
  }
  return impl;
}

// A float as an integer or bool of dtype t, by the rules of convert: truncation toward zero,
// saturation at t's range, NaN to 0; to bool, any nonzero value (NaN too) is true.
std::int64_t converted_to_integer(double value, DType t) {
  if (t == DType::Bool) return value != 0 ? 1 : 0;
  if (std::isnan(value)) return 0;
  if (t == DType::U64) {
    if (value <= 0) return 0;
    if (value >= 18446744073709551616.0) return -1;  // all ones: 2^64 - 1
    return static_cast<std::int64_t>(static_cast<std::uint64_t>(value));
  }
  double lo = -9223372036854775808.0, hi = 9223372036854775807.0;
  if (t != DType::I64) {
    lo = static_cast<double>(interp::int_lowest(t));
    hi = static_cast<double>(interp::int_highest(t));
  }
  if (value <= lo) return static_cast<std::int64_t>(lo);
  if (value >= hi)
    return t == DType::I64 ? std::numeric_limits<std::int64_t>::max()
                           : static_cast<std::int64_t>(hi);
  return static_cast<std::int64_t>(value);
}

}  // namespace

Array Array::scalar(double value, DType dtype) {
  return make_literal(dtype, value, is_float(dtype) ? 0 : converted_to_integer(value, dtype));
}

Array Array::scalar_int(std::int64_t value, DType dtype) {
  return make_literal(dtype, static_cast<double>(value), value);
}

Array Array::from_host(const HostArray& host, Device* device) {
  Device& dev = device ? *device : default_device();
  if (!dev.supports(host.dtype()))
    throw DTypeError("Array::from_host: device " + dev.name() + " (" + dev.description() +
                     ") does not support " + std::string(dtype_name(host.dtype())) +
                     "; convert the data to f32 or pick a device with cl_khr_fp64");
  return detail::make_concrete(dev.upload(host.raw(), host.nbytes()), host.dtype(), host.shape());
}

DType Array::dtype() const {
  return detail::impl_of(*this, "dtype()").dtype;
}
const Shape& Array::shape() const {
  return detail::impl_of(*this, "shape()").shape;
}
bool Array::is_tracer() const {
  return valid() && impl_->kind == ArrayImpl::Kind::Tracer;
}
bool Array::is_literal() const {
  return valid() && impl_->kind == ArrayImpl::Kind::Literal;
}
bool Array::is_concrete() const {
  return valid() && impl_->kind == ArrayImpl::Kind::Concrete;
}

namespace {

// What a wait's span says: the array and the line that waited.
telemetry::Args wait_args(const ArrayImpl& impl, const std::source_location& loc) {
  if (!telemetry::enabled()) return {};
  std::string file = loc.file_name();
  if (auto slash = file.find_last_of('/'); slash != std::string::npos) file.erase(0, slash + 1);
  return {{"array", std::string(dtype_name(impl.dtype)) + shape_to_string(impl.shape)},
          {"device", impl.buffer->device().name()},
          {"location", file + ":" + std::to_string(loc.line())}};
}

}  // namespace

HostArray Array::to_host(std::source_location loc) const {
  const ArrayImpl& impl = concrete_or_throw(*this, "to_host()", loc);
  if (impl.kind == ArrayImpl::Kind::Literal) return detail::literal_to_host(impl);
  HostArray h(impl.dtype, impl.shape);
  telemetry::HostSpan wait(telemetry::SpanKind::array_wait, "to_host", wait_args(impl, loc));
  try {
    impl.buffer->device().download(*impl.buffer, h.raw(), h.nbytes());
  } catch (const CallbackException&) {
    detail::note_callback_failure_raised(std::current_exception());
    throw;
  }
  return h;
}

namespace {
HostArray one_element(const Array& a, const char* what, const std::source_location& loc) {
  const ArrayImpl& impl = concrete_or_throw(a, what, loc);
  if (num_elements(impl.shape) != 1)
    throw InvalidArgumentError(
        std::string(what) +
        (loc.line() ? std::string(" at ") + loc.file_name() + ":" + std::to_string(loc.line())
                    : std::string()) +
        ": needs a one-element array, got " + std::string(dtype_name(impl.dtype)) +
        shape_to_string(impl.shape) + "; reduce it first (np::sum, np::max, ...)");
  return a.to_host(loc);
}
}  // namespace

double Array::item_f64(std::source_location loc) const {
  return one_element(*this, "item()", loc).get_f64(0);
}

std::int64_t Array::item_i64(std::source_location loc) const {
  return one_element(*this, "item()", loc).get_i64(0);
}

Array::operator bool() const {
  // A conversion operator cannot take a source_location. An empty one tells the
  // ConcretizationError to name the line that computed the value instead, which is where
  // `if (x > y)` tests it (item<bool>() names the exact line).
  HostArray h = one_element(*this, "explicit operator bool", std::source_location{});
  return is_float(h.dtype()) ? h.get_f64(0) != 0 : h.get_i64(0) != 0;
}

const Array& Array::block_until_ready(std::source_location loc) const {
  const ArrayImpl& impl = concrete_or_throw(*this, "block_until_ready()", loc);
  if (impl.kind == ArrayImpl::Kind::Concrete) {
    telemetry::HostSpan wait(telemetry::SpanKind::array_wait, "block_until_ready",
                             wait_args(impl, loc));
    try {
      impl.buffer->device().wait(*impl.buffer);
    } catch (const CallbackException&) {
      detail::note_callback_failure_raised(std::current_exception());
      throw;
    }
  }
  return *this;
}

Device& Array::device() const {
  const ArrayImpl& impl = detail::impl_of(*this, "device()");
  if (impl.kind == ArrayImpl::Kind::Concrete) return impl.buffer->device();
  return default_device();
}

std::string Array::to_string() const {
  if (!valid()) return "Array(empty)";
  if (is_tracer())
    return "Tracer<" + std::string(dtype_name(dtype())) + shape_to_string(shape()) + ">";
  return to_host().to_string();
}

Array device_put(const Array& array, Device& device) {
  const ArrayImpl& impl = detail::impl_of(array, "device_put");
  if (impl.kind == ArrayImpl::Kind::Tracer) return array;
  if (impl.kind == ArrayImpl::Kind::Literal)
    return Array::from_host(detail::literal_to_host(impl), &device);
  if (&impl.buffer->device() == &device) return array;
  if (!device.supports(impl.dtype))
    throw DTypeError("device_put: " + device.name() + " does not support " +
                     std::string(dtype_name(impl.dtype)));
  return detail::make_concrete(device.copy_from(*impl.buffer), impl.dtype, impl.shape);
}

}  // namespace weft
