// Type promotion, weakly typed scalars and the broadcasting helpers of the numpy layer.
#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>

#include "np_internal.h"

namespace weft {

std::string WeakScalar::to_string() const {
  switch (kind_) {
    case Kind::Bool:
      return int_value_ ? "true" : "false";
    case Kind::Int:
      return exceeds_i64_ ? std::to_string(static_cast<std::uint64_t>(int_value_))
                          : std::to_string(int_value_);
    case Kind::Float:
      break;
  }
  std::ostringstream out;
  out.precision(17);
  out << float_value_;
  return out.str();
}

namespace np {
namespace {

// A signed integer dtype of `bytes` bytes (1, 2, 4 or 8).
DType signed_of_size(std::size_t bytes) {
  switch (bytes) {
    case 1:
      return DType::I8;
    case 2:
      return DType::I16;
    case 4:
      return DType::I32;
    default:
      return DType::I64;
  }
}

// Whether an integer scalar can become a value of dtype t. u32 also takes the negative i32
// range, which wraps, as JAX converts Python ints through its default int type.
bool integer_fits(const WeakScalar& value, DType t) {
  if (value.exceeds_i64()) return t == DType::U64;  // [2^63, 2^64): only u64 holds it
  const std::int64_t v = value.int_value();
  switch (t) {
    case DType::I8:
      return v >= std::numeric_limits<std::int8_t>::min() &&
             v <= std::numeric_limits<std::int8_t>::max();
    case DType::U8:
      return v >= 0 && v <= std::numeric_limits<std::uint8_t>::max();
    case DType::I16:
      return v >= std::numeric_limits<std::int16_t>::min() &&
             v <= std::numeric_limits<std::int16_t>::max();
    case DType::U16:
      return v >= 0 && v <= std::numeric_limits<std::uint16_t>::max();
    case DType::U64:
      return v >= 0;
    case DType::I32:
      return v >= std::numeric_limits<std::int32_t>::min() &&
             v <= std::numeric_limits<std::int32_t>::max();
    case DType::U32:
      return v >= std::numeric_limits<std::int32_t>::min() &&
             v <= std::numeric_limits<std::uint32_t>::max();
    default:
      return true;
  }
}

}  // namespace

// JAX's promotion lattice (jnp.promote_types with x64): bool below everything; integers of one
// signedness widen; a signed and an unsigned integer meet at the signed type wide enough for
// both, or f64 where that would need more than 64 bits (u64 with any signed type); integers
// meet a float at the float; f16 and bf16 meet at f32.
DType promote_types(DType a, DType b) {
  if (a == b) return a;
  if (a == DType::Bool) return b;
  if (b == DType::Bool) return a;
  if (is_float(a) && is_float(b)) {
    if (is_half_float(a) && is_half_float(b)) return DType::F32;
    return dtype_size(a) >= dtype_size(b) ? a : b;
  }
  if (is_float(a)) return a;
  if (is_float(b)) return b;
  if (is_signed_integer(a) == is_signed_integer(b)) return dtype_size(a) >= dtype_size(b) ? a : b;
  const DType u = is_signed_integer(a) ? b : a;
  const DType s = is_signed_integer(a) ? a : b;
  if (dtype_size(s) > dtype_size(u)) return s;
  if (u == DType::U64) return DType::F64;
  return signed_of_size(2 * dtype_size(u));
}

DType weak_result_type(WeakScalar value, DType other) {
  switch (value.kind()) {
    case WeakScalar::Kind::Bool:
      return promote_types(DType::Bool, other);
    case WeakScalar::Kind::Int:
      return other == DType::Bool ? DType::I32 : other;
    case WeakScalar::Kind::Float:
      break;
  }
  return is_float(other) ? other : DType::F32;
}

Shape broadcast_shapes(const Shape& a, const Shape& b, const char* op) {
  const std::size_t rank = std::max(a.size(), b.size());
  Shape out(rank);
  for (std::size_t i = 0; i < rank; ++i) {
    std::int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    std::int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da != db && da != 1 && db != 1)
      throw ShapeError(std::string(op) + ": shapes " + shape_to_string(a) + " and " +
                       shape_to_string(b) + " do not broadcast (axis " + std::to_string(i) + ": " +
                       std::to_string(da) + " vs " + std::to_string(db) + ")");
    out[i] = da == 1 ? db : da;
  }
  return out;
}

Array scalar_like(WeakScalar value, const Array& like, std::source_location loc) {
  const DType t = weak_result_type(value, like.dtype());
  if (value.kind() == WeakScalar::Kind::Int && !integer_fits(value, t))
    throw InvalidArgumentError(
        "the integer scalar " + value.to_string() + " does not fit " + std::string(dtype_name(t)) +
        ", the dtype of the array it is combined with (" + std::string(dtype_name(like.dtype())) +
        shape_to_string(like.shape()) + "), at " + internal::loc_str(loc) +
        "; convert the array to a wider dtype (astype) or pass a floating value");
  return internal::scalar_of(value, t, loc);
}

namespace internal {

std::string loc_str(const std::source_location& loc) {
  return std::string(loc.file_name()) + ":" + std::to_string(loc.line());
}

Array scalar_of(WeakScalar value, DType t, const std::source_location& loc) {
  if (value.kind() == WeakScalar::Kind::Float || is_float(t))
    return Array::scalar(value.float_value(), t);
  if (!integer_fits(value, t))
    throw InvalidArgumentError("the integer " + value.to_string() + " does not fit " +
                               std::string(dtype_name(t)) + " at " + loc_str(loc) +
                               "; pick a wider dtype");
  return Array::scalar_int(value.int_value(), t);
}

Array cast(const Array& x, DType t, const std::source_location& loc) {
  if (x.dtype() == t) return x;
  if (x.is_literal()) {
    HostArray h = x.to_host(loc);
    return is_float(h.dtype()) ? Array::scalar(h.get_f64(0), t)
                               : Array::scalar_int(h.get_i64(0), t);
  }
  return lax::convert_element_type(x, t, loc);
}

Array bcast(const Array& x, const Shape& shape, const std::source_location& loc) {
  if (x.shape() == shape) return x;
  const std::size_t rank = x.shape().size();
  if (rank > shape.size())
    throw ShapeError("broadcast_to: cannot broadcast " + shape_to_string(x.shape()) + " to " +
                     shape_to_string(shape) + " at " + loc_str(loc));
  lax::Axes dims(rank);
  for (std::size_t i = 0; i < rank; ++i)
    dims[i] = static_cast<std::int64_t>(shape.size() - rank + i);
  return lax::broadcast_in_dim(x, shape, dims, loc);
}

Array full_of(double value, const Array& like, const std::source_location& loc) {
  return bcast(lax::constant(value, like.dtype(), loc), like.shape(), loc);
}

std::pair<Array, Array> align(const Array& x, const Array& y, const char* op,
                              const std::source_location& loc) {
  DType t = promote_types(x.dtype(), y.dtype());
  Shape s = broadcast_shapes(x.shape(), y.shape(), op);
  return {bcast(cast(x, t, loc), s, loc), bcast(cast(y, t, loc), s, loc)};
}

DType inexact_type(DType t) {
  return is_float(t) ? t : DType::F32;
}

std::int64_t normalize_axis(std::int64_t axis, std::size_t rank, const char* op,
                            const std::source_location& loc) {
  const auto r = static_cast<std::int64_t>(rank);
  if (axis < -r || axis >= r)
    throw ShapeError(std::string(op) + ": axis " + std::to_string(axis) +
                     " is out of range for rank " + std::to_string(rank) + " at " + loc_str(loc));
  return axis < 0 ? axis + r : axis;
}

Axes normalize_axes(Axes axes, std::size_t rank, const char* op, const std::source_location& loc) {
  if (axes.empty()) {
    for (std::size_t i = 0; i < rank; ++i) axes.push_back(static_cast<std::int64_t>(i));
    return axes;
  }
  for (auto& a : axes) a = normalize_axis(a, rank, op, loc);
  std::sort(axes.begin(), axes.end());
  if (std::adjacent_find(axes.begin(), axes.end()) != axes.end())
    throw ShapeError(std::string(op) + ": repeated axis at " + loc_str(loc));
  return axes;
}

}  // namespace internal
}  // namespace np
}  // namespace weft
