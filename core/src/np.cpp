#include "weft/np.h"

#include <algorithm>
#include <cmath>

#include "weft/error.h"
#include "weft/trace/trace.h"

namespace weft {
namespace np {
namespace {

int type_rank(DType t) {
  switch (t) {
    case DType::Bool:
      return 0;
    case DType::U32:
      return 1;
    case DType::I32:
      return 1;
    case DType::I64:
      return 2;
    case DType::F32:
      return 3;
    case DType::F64:
      return 4;
  }
  return 0;
}

std::string loc_str(const std::source_location& loc) {
  return std::string(loc.file_name()) + ":" + std::to_string(loc.line());
}

Array cast(const Array& x, DType t, const std::source_location& loc) {
  if (x.dtype() == t) return x;
  if (x.is_literal()) {
    // Literals convert on the host so scalars stay constants rather than convert ops.
    HostArray h = x.to_host(loc);
    return is_float(t)
               ? Array::scalar(h.get_f64(0), t)
               : Array::scalar_int(
                     is_float(h.dtype()) ? static_cast<std::int64_t>(h.get_f64(0)) : h.get_i64(0),
                     t);
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

Shape kept_shape(const Shape& in, const Axes& axes) {
  Shape s = in;
  for (auto a : axes) s[a] = 1;
  return s;
}

// Promotes and broadcasts two operands of a binary numpy function.
std::pair<Array, Array> align(const Array& x, const Array& y, const char* op,
                              const std::source_location& loc) {
  DType t = promote_types(x.dtype(), y.dtype());
  Shape s = broadcast_shapes(x.shape(), y.shape(), op);
  return {bcast(cast(x, t, loc), s, loc), bcast(cast(y, t, loc), s, loc)};
}

template <typename LaxFn>
Array binary(LaxFn fn, const Array& x, const Array& y, const char* op,
             const std::source_location& loc) {
  try {
    return detail::run_fused_eagerly(
        [&] {
          auto [a, b] = align(x, y, op, loc);
          return fn(a, b, loc);
        },
        op, loc);
  } catch (const ShapeError& e) {
    std::string msg = e.what();
    if (msg.find(" at ") == std::string::npos) msg += " at " + loc_str(loc);
    throw ShapeError(msg);
  }
}

Array reduce_with(Array (*fn)(const Array&, const lax::Axes&, std::source_location), const Array& x,
                  Axes axes, bool keepdims, const char* op, const std::source_location& loc) {
  Axes norm = normalize_axes(std::move(axes), x.shape().size(), op, loc);
  Array in = x.dtype() == DType::Bool ? cast(x, DType::I32, loc) : x;
  Array r = fn(in, norm, loc);
  return keepdims ? lax::reshape(r, kept_shape(x.shape(), norm), loc) : r;
}

}  // namespace

DType promote_types(DType a, DType b) {
  if (a == b) return a;
  if ((a == DType::I32 && b == DType::U32) || (a == DType::U32 && b == DType::I32))
    return DType::I64;
  return type_rank(a) >= type_rank(b) ? a : b;
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

Array scalar_like(double value, const Array& like, std::source_location) {
  DType t = like.dtype();
  const bool integral = std::floor(value) == value && std::isfinite(value);
  if (t == DType::Bool) t = integral ? DType::I32 : DType::F32;
  if (!is_float(t) && !integral) t = DType::F32;
  return is_float(t) ? Array::scalar(value, t)
                     : Array::scalar_int(static_cast<std::int64_t>(value), t);
}

Array array(const HostArray& host, Device* device) {
  return Array::from_host(host, device);
}

Array full(const Shape& shape, double value, DType dtype, std::source_location loc) {
  return bcast(lax::constant(value, dtype, loc), shape, loc);
}
Array zeros(const Shape& shape, DType dtype, std::source_location loc) {
  return full(shape, 0, dtype, loc);
}
Array ones(const Shape& shape, DType dtype, std::source_location loc) {
  return full(shape, 1, dtype, loc);
}
Array zeros_like(const Array& x, std::source_location loc) {
  return full(x.shape(), 0, x.dtype(), loc);
}
Array ones_like(const Array& x, std::source_location loc) {
  return full(x.shape(), 1, x.dtype(), loc);
}
Array full_like(const Array& x, double value, std::source_location loc) {
  return full(x.shape(), value, x.dtype(), loc);
}

Array arange(std::int64_t stop, DType dtype, std::source_location loc) {
  return lax::iota(dtype, {std::max<std::int64_t>(stop, 0)}, 0, loc);
}

Array arange(double start, double stop, double step, DType dtype, std::source_location loc) {
  if (step == 0) throw InvalidArgumentError("arange: step must not be zero at " + loc_str(loc));
  auto n = static_cast<std::int64_t>(std::ceil((stop - start) / step));
  n = std::max<std::int64_t>(n, 0);
  DType work = is_float(dtype) ? dtype : DType::F64;
  Array i = lax::iota(work, {n}, 0, loc);
  Array r = add(multiply(i, scalar_like(step, i, loc), loc), scalar_like(start, i, loc), loc);
  return cast(r, dtype, loc);
}

Array eye(std::int64_t n, DType dtype, std::source_location loc) {
  Array rows = lax::iota(DType::I32, {n, n}, 0, loc);
  Array cols = lax::iota(DType::I32, {n, n}, 1, loc);
  return cast(lax::eq(rows, cols, loc), dtype, loc);
}

Array add(const Array& x, const Array& y, std::source_location loc) {
  return binary(lax::add, x, y, "add", loc);
}
Array subtract(const Array& x, const Array& y, std::source_location loc) {
  return binary(lax::sub, x, y, "subtract", loc);
}
Array multiply(const Array& x, const Array& y, std::source_location loc) {
  return binary(lax::mul, x, y, "multiply", loc);
}
Array remainder(const Array& x, const Array& y, std::source_location loc) {
  return binary(lax::rem, x, y, "remainder", loc);
}
Array power(const Array& x, const Array& y, std::source_location loc) {
  return binary(lax::pow, x, y, "power", loc);
}
Array maximum(const Array& x, const Array& y, std::source_location loc) {
  return binary(lax::max, x, y, "maximum", loc);
}
Array minimum(const Array& x, const Array& y, std::source_location loc) {
  return binary(lax::min, x, y, "minimum", loc);
}
Array equal(const Array& x, const Array& y, std::source_location loc) {
  return binary(lax::eq, x, y, "equal", loc);
}
Array not_equal(const Array& x, const Array& y, std::source_location loc) {
  return binary(lax::ne, x, y, "not_equal", loc);
}
Array less(const Array& x, const Array& y, std::source_location loc) {
  return binary(lax::lt, x, y, "less", loc);
}
Array less_equal(const Array& x, const Array& y, std::source_location loc) {
  return binary(lax::le, x, y, "less_equal", loc);
}
Array greater(const Array& x, const Array& y, std::source_location loc) {
  return binary(lax::gt, x, y, "greater", loc);
}
Array greater_equal(const Array& x, const Array& y, std::source_location loc) {
  return binary(lax::ge, x, y, "greater_equal", loc);
}

Array divide(const Array& x, const Array& y, std::source_location loc) {
  // True division, as numpy: integer operands divide as f32.
  if (!is_float(promote_types(x.dtype(), y.dtype())))
    return binary(lax::div, cast(x, DType::F32, loc), cast(y, DType::F32, loc), "divide", loc);
  return binary(lax::div, x, y, "divide", loc);
}

Array where(const Array& cond, const Array& x, const Array& y, std::source_location loc) {
  return detail::run_fused_eagerly(
      [&] {
        Array c =
            cond.dtype() == DType::Bool ? cond : lax::ne(cond, scalar_like(0, cond, loc), loc);
        DType t = promote_types(x.dtype(), y.dtype());
        Shape s =
            broadcast_shapes(broadcast_shapes(c.shape(), x.shape(), "where"), y.shape(), "where");
        return lax::select(bcast(c, s, loc), bcast(cast(x, t, loc), s, loc),
                           bcast(cast(y, t, loc), s, loc), loc);
      },
      "where", loc);
}

Array exp(const Array& x, std::source_location loc) {
  return lax::exp(x, loc);
}
Array log(const Array& x, std::source_location loc) {
  return lax::log(x, loc);
}
Array sqrt(const Array& x, std::source_location loc) {
  return lax::sqrt(x, loc);
}
Array tanh(const Array& x, std::source_location loc) {
  return lax::tanh(x, loc);
}
Array abs(const Array& x, std::source_location loc) {
  return lax::abs(x, loc);
}
Array sigmoid(const Array& x, std::source_location loc) {
  return lax::logistic(x, loc);
}
Array sin(const Array& x, std::source_location loc) {
  return lax::sin(x, loc);
}
Array cos(const Array& x, std::source_location loc) {
  return lax::cos(x, loc);
}
Array tan(const Array& x, std::source_location loc) {
  return lax::tan(x, loc);
}
Array floor(const Array& x, std::source_location loc) {
  return lax::floor(x, loc);
}
Array ceil(const Array& x, std::source_location loc) {
  return lax::ceil(x, loc);
}
Array round(const Array& x, std::source_location loc) {
  return lax::round(x, loc);
}
Array sign(const Array& x, std::source_location loc) {
  return lax::sign(x, loc);
}
Array negative(const Array& x, std::source_location loc) {
  return lax::neg(x, loc);
}
Array exp2(const Array& x, std::source_location loc) {
  return lax::exp2(x, loc);
}
Array log1p(const Array& x, std::source_location loc) {
  return lax::log1p(x, loc);
}
Array expm1(const Array& x, std::source_location loc) {
  return lax::expm1(x, loc);
}
Array rsqrt(const Array& x, std::source_location loc) {
  return lax::rsqrt(x, loc);
}
Array erf(const Array& x, std::source_location loc) {
  return lax::erf(x, loc);
}
Array arctan2(const Array& y, const Array& x, std::source_location loc) {
  return binary(lax::atan2, y, x, "arctan2", loc);
}
Array clip(const Array& x, double lo, double hi, std::source_location loc) {
  return minimum(maximum(x, scalar_like(lo, x, loc), loc), scalar_like(hi, x, loc), loc);
}
Array relu(const Array& x, std::source_location loc) {
  return lax::max(x, bcast(scalar_like(0, x, loc), x.shape(), loc), loc);
}
Array astype(const Array& x, DType dtype, std::source_location loc) {
  return cast(x, dtype, loc);
}

Array reshape(const Array& x, Shape shape, std::source_location loc) {
  std::int64_t known = 1;
  int inferred = -1;
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == -1) {
      if (inferred >= 0)
        throw ShapeError("reshape: only one -1 entry is allowed in " + shape_to_string(shape) +
                         " at " + loc_str(loc));
      inferred = static_cast<int>(i);
    } else {
      known *= shape[i];
    }
  }
  if (inferred >= 0) {
    if (known == 0 || x.size() % known != 0)
      throw ShapeError("reshape: cannot reshape " + shape_to_string(x.shape()) + " to " +
                       shape_to_string(shape) + " at " + loc_str(loc));
    shape[inferred] = x.size() / known;
  }
  if (shape == x.shape()) return x;
  return lax::reshape(x, shape, loc);
}

Array reshape(const Array& x, const Array& shape, std::source_location loc) {
  HostArray dims = shape.to_host(loc);  // ConcretizationError for tracers names the culprit
  Shape s;
  for (std::int64_t i = 0; i < dims.size(); ++i) s.push_back(dims.get_i64(i));
  return reshape(x, s, loc);
}

Array transpose(const Array& x, Axes axes, std::source_location loc) {
  if (axes.empty())
    for (std::int64_t i = x.ndim() - 1; i >= 0; --i) axes.push_back(i);
  for (auto& a : axes) a = normalize_axis(a, x.shape().size(), "transpose", loc);
  return lax::transpose(x, axes, loc);
}

Array expand_dims(const Array& x, std::int64_t axis, std::source_location loc) {
  axis = normalize_axis(axis, x.shape().size() + 1, "expand_dims", loc);
  Shape s = x.shape();
  s.insert(s.begin() + axis, 1);
  return lax::reshape(x, s, loc);
}

Array broadcast_to(const Array& x, const Shape& shape, std::source_location loc) {
  Shape s = broadcast_shapes(x.shape(), shape, "broadcast_to");
  if (s != shape)
    throw ShapeError("broadcast_to: cannot broadcast " + shape_to_string(x.shape()) + " to " +
                     shape_to_string(shape) + " at " + loc_str(loc));
  return bcast(x, shape, loc);
}

Array concatenate(const std::vector<Array>& xs, std::int64_t axis, std::source_location loc) {
  if (xs.empty())
    throw InvalidArgumentError("concatenate: needs at least one array at " + loc_str(loc));
  DType t = xs[0].dtype();
  for (const auto& a : xs) t = promote_types(t, a.dtype());
  std::vector<Array> cast_xs;
  for (const auto& a : xs) cast_xs.push_back(cast(a, t, loc));
  return lax::concatenate(cast_xs, normalize_axis(axis, xs[0].shape().size(), "concatenate", loc),
                          loc);
}

Array sum(const Array& x, Axes axes, bool keepdims, std::source_location loc) {
  return reduce_with(lax::reduce_sum, x, std::move(axes), keepdims, "sum", loc);
}
Array prod(const Array& x, Axes axes, bool keepdims, std::source_location loc) {
  return reduce_with(lax::reduce_prod, x, std::move(axes), keepdims, "prod", loc);
}
Array max(const Array& x, Axes axes, bool keepdims, std::source_location loc) {
  return reduce_with(lax::reduce_max, x, std::move(axes), keepdims, "max", loc);
}
Array min(const Array& x, Axes axes, bool keepdims, std::source_location loc) {
  return reduce_with(lax::reduce_min, x, std::move(axes), keepdims, "min", loc);
}

Array mean(const Array& x, Axes axes, bool keepdims, std::source_location loc) {
  Axes norm = normalize_axes(std::move(axes), x.shape().size(), "mean", loc);
  std::int64_t count = 1;
  for (auto a : norm) count *= x.shape()[a];
  Array in = is_float(x.dtype()) ? x : cast(x, DType::F32, loc);
  Array s = sum(in, norm, keepdims, loc);
  return divide(s, scalar_like(static_cast<double>(count), s, loc), loc);
}

Array argmax(const Array& x, std::int64_t axis, std::source_location loc) {
  return lax::argmax(x, {normalize_axis(axis, x.shape().size(), "argmax", loc)}, DType::I32, loc);
}
Array argmin(const Array& x, std::int64_t axis, std::source_location loc) {
  return lax::argmin(x, {normalize_axis(axis, x.shape().size(), "argmin", loc)}, DType::I32, loc);
}

Array matmul(const Array& x, const Array& y, std::source_location loc) {
  if (x.ndim() == 0 || y.ndim() == 0)
    throw ShapeError("matmul: operands must have at least one axis, got " +
                     shape_to_string(x.shape()) + " and " + shape_to_string(y.shape()) + " at " +
                     loc_str(loc));
  DType t = promote_types(x.dtype(), y.dtype());
  Array a = cast(x, t, loc), b = cast(y, t, loc);
  const bool vec_a = a.ndim() == 1, vec_b = b.ndim() == 1;
  if (vec_a) a = lax::reshape(a, {1, a.shape()[0]}, loc);
  if (vec_b) b = lax::reshape(b, {b.shape()[0], 1}, loc);
  const Shape& sa = a.shape();
  const Shape& sb = b.shape();
  if (sa.back() != sb[sb.size() - 2])
    throw ShapeError("matmul: inner dimensions differ: " + shape_to_string(x.shape()) + " @ " +
                     shape_to_string(y.shape()) + " at " + loc_str(loc));
  Shape batch_a(sa.begin(), sa.end() - 2), batch_b(sb.begin(), sb.end() - 2);
  Shape batch = broadcast_shapes(batch_a, batch_b, "matmul");
  auto with_batch = [&](const Array& v, const Shape& s) {
    Shape full = batch;
    full.insert(full.end(), s.end() - 2, s.end());
    return bcast(v, full, loc);
  };
  a = with_batch(a, sa);
  b = with_batch(b, sb);
  const auto nb = static_cast<std::int64_t>(batch.size());
  lax::DotDims dims;
  for (std::int64_t i = 0; i < nb; ++i) {
    dims.lhs_batch.push_back(i);
    dims.rhs_batch.push_back(i);
  }
  dims.lhs_contracting = {nb + 1};
  dims.rhs_contracting = {nb};
  Array r = lax::dot_general(a, b, dims, loc);
  if (vec_a || vec_b) {
    Shape s = batch;
    if (!vec_a) s.push_back(sa[sa.size() - 2]);
    if (!vec_b) s.push_back(sb.back());
    r = lax::reshape(r, s, loc);
  }
  return r;
}

Array softmax(const Array& x, std::int64_t axis, std::source_location loc) {
  Array m = max(x, {axis}, true, loc);
  Array e = exp(subtract(x, m, loc), loc);
  return divide(e, sum(e, {axis}, true, loc), loc);
}

Array logsumexp(const Array& x, std::int64_t axis, std::source_location loc) {
  Array m = max(x, {axis}, true, loc);
  Array s = log(sum(exp(subtract(x, m, loc), loc), {axis}, true, loc), loc);
  Array r = add(s, m, loc);
  Shape out = x.shape();
  out.erase(out.begin() + normalize_axis(axis, x.shape().size(), "logsumexp", loc));
  return lax::reshape(r, out, loc);
}

Array tril(const Array& x, std::int64_t k, std::source_location loc) {
  if (x.ndim() < 2)
    throw ShapeError("tril: needs at least 2 axes, got " + shape_to_string(x.shape()) + " at " +
                     loc_str(loc));
  const std::int64_t rows = x.shape()[x.ndim() - 2], cols = x.shape()[x.ndim() - 1];
  Array r = lax::iota(DType::I32, {rows, cols}, 0, loc);
  Array c = lax::iota(DType::I32, {rows, cols}, 1, loc);
  Array mask = greater_equal(add(r, Array::scalar_int(k, DType::I32), loc), c, loc);
  return where(mask, x, zeros_like(x, loc), loc);
}

}  // namespace np

Array Array::reshape(Shape shape, std::source_location loc) const {
  return np::reshape(*this, std::move(shape), loc);
}
Array Array::astype(DType dtype, std::source_location loc) const {
  return np::astype(*this, dtype, loc);
}
Array Array::T(std::source_location loc) const {
  return np::transpose(*this, {}, loc);
}

Array operator+(Located x, const Array& y) {
  return np::add(x.array, y, x.loc);
}
Array operator-(Located x, const Array& y) {
  return np::subtract(x.array, y, x.loc);
}
Array operator*(Located x, const Array& y) {
  return np::multiply(x.array, y, x.loc);
}
Array operator/(Located x, const Array& y) {
  return np::divide(x.array, y, x.loc);
}
Array operator%(Located x, const Array& y) {
  return np::remainder(x.array, y, x.loc);
}
Array operator==(Located x, const Array& y) {
  return np::equal(x.array, y, x.loc);
}
Array operator!=(Located x, const Array& y) {
  return np::not_equal(x.array, y, x.loc);
}
Array operator<(Located x, const Array& y) {
  return np::less(x.array, y, x.loc);
}
Array operator<=(Located x, const Array& y) {
  return np::less_equal(x.array, y, x.loc);
}
Array operator>(Located x, const Array& y) {
  return np::greater(x.array, y, x.loc);
}
Array operator>=(Located x, const Array& y) {
  return np::greater_equal(x.array, y, x.loc);
}
Array operator&(Located x, const Array& y) {
  return lax::logical_and(x.array, y, x.loc);
}
Array operator|(Located x, const Array& y) {
  return lax::logical_or(x.array, y, x.loc);
}
Array operator^(Located x, const Array& y) {
  return lax::logical_xor(x.array, y, x.loc);
}
Array operator-(Located x) {
  return lax::neg(x.array, x.loc);
}
Array operator!(Located x) {
  return lax::logical_not(x.array, x.loc);
}
Array operator~(Located x) {
  return lax::logical_not(x.array, x.loc);
}

}  // namespace weft
