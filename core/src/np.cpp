// The numpy layer's creation, layout, reduction and linear-algebra functions (elementwise
// functions and operators are in np_elementwise.cpp, promotion in np_promotion.cpp).
#include "weft/np.h"

#include <algorithm>
#include <cmath>

#include "np_internal.h"

namespace weft {
namespace np {

using internal::bcast;
using internal::cast;
using internal::full_of;
using internal::fused;
using internal::loc_str;
using internal::normalize_axes;
using internal::normalize_axis;

namespace {

Shape kept_shape(const Shape& in, const Axes& axes) {
  Shape s = in;
  for (auto a : axes) s[a] = 1;
  return s;
}

using LaxReduce = Array (*)(const Array&, const lax::Axes&, std::source_location);

Array reduce_with(LaxReduce fn, const Array& x, Axes axes, bool keepdims, const char* op,
                  const std::source_location& loc) {
  Axes norm = normalize_axes(std::move(axes), x.shape().size(), op, loc);
  const bool extremum = fn == lax::reduce_max || fn == lax::reduce_min;
  if (extremum) {
    std::int64_t count = 1;
    for (auto a : norm) count *= x.shape()[a];
    if (count == 0)
      throw ShapeError(std::string(op) + ": " + shape_to_string(x.shape()) +
                       " has no elements along axes " + shape_to_string(norm) + ", so it has no " +
                       (fn == lax::reduce_max ? "maximum" : "minimum") +
                       " (numpy and JAX raise too), at " + loc_str(loc) +
                       "; check the shape before reducing");
  }
  return fused(op, loc, [&] {
    // Bools reduce as i32: sums and products count, max and min convert back to bool. As in
    // jax.numpy, sums and products of integers narrower than 32 bits give i32 or u32, and
    // f16 and bf16 ones accumulate in f32 and round once to their dtype.
    const DType t = x.dtype();
    DType work = t == DType::Bool ? DType::I32 : t;
    if (!extremum && is_integer(t) && dtype_size(t) < 4)
      work = is_signed_integer(t) ? DType::I32 : DType::U32;
    if (!extremum && is_half_float(t)) work = DType::F32;
    Array r = fn(cast(x, work, loc), norm, loc);
    if ((extremum && t == DType::Bool) || is_half_float(t)) r = cast(r, t, loc);
    return keepdims ? lax::reshape(r, kept_shape(x.shape(), norm), loc) : r;
  });
}

DType default_type(std::initializer_list<WeakScalar> values) {
  DType t = DType::Bool;
  for (const auto& v : values) {
    if (v.kind() == WeakScalar::Kind::Float) return DType::F32;
    if (v.kind() == WeakScalar::Kind::Int) t = DType::I32;
  }
  return t;
}

bool integral(const WeakScalar& v) {
  return v.kind() != WeakScalar::Kind::Float;
}

}  // namespace

Array array(const HostArray& host, Device* device) {
  return Array::from_host(host, device);
}

Array full(const Shape& shape, WeakScalar value, std::optional<DType> dtype,
           std::source_location loc) {
  return bcast(internal::scalar_of(value, dtype.value_or(default_type({value})), loc), shape, loc);
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
Array full_like(const Array& x, WeakScalar value, std::source_location loc) {
  return full(x.shape(), value, x.dtype(), loc);
}

Array arange(WeakScalar stop, std::optional<DType> dtype, std::source_location loc) {
  return arange(0, stop, 1, dtype.value_or(default_type({stop})), loc);
}

Array arange(WeakScalar start, WeakScalar stop, WeakScalar step, std::optional<DType> dtype,
             std::source_location loc) {
  const DType t = dtype.value_or(default_type({start, stop, step}));
  if (step.float_value() == 0)
    throw InvalidArgumentError("arange: step must not be zero at " + loc_str(loc));
  const double span = (stop.float_value() - start.float_value()) / step.float_value();
  const auto n = std::max<std::int64_t>(static_cast<std::int64_t>(std::ceil(span)), 0);
  // Integer results from integer arguments are exact integer arithmetic; everything else
  // computes start + i * step in floating point (f32 unless the result is f64).
  const bool exact = is_integer(t) && integral(start) && integral(step);
  const DType work = exact ? t : (t == DType::F64 ? DType::F64 : DType::F32);
  return fused("arange", loc, [&] {
    Array r = lax::iota(work, {n}, 0, loc);
    if (!(integral(step) && step.int_value() == 1))
      r = lax::mul(r, bcast(internal::scalar_of(step, work, loc), r.shape(), loc), loc);
    if (!(integral(start) && start.int_value() == 0))
      r = lax::add(r, bcast(internal::scalar_of(start, work, loc), r.shape(), loc), loc);
    return cast(r, t, loc);
  });
}

Array eye(std::int64_t n, DType dtype, std::source_location loc) {
  return fused("eye", loc, [&] {
    Array rows = lax::iota(DType::I32, {n, n}, 0, loc);
    Array cols = lax::iota(DType::I32, {n, n}, 1, loc);
    return cast(lax::eq(rows, cols, loc), dtype, loc);
  });
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
  return fused("mean", loc, [&] {
    // f16 and bf16 means compute in f32 and round once, as jax.numpy's.
    const DType t = internal::inexact_type(x.dtype());
    const DType work = is_half_float(t) ? DType::F32 : t;
    Array s = sum(cast(x, work, loc), norm, keepdims, loc);
    return cast(divide(s, scalar_like(static_cast<double>(count), s, loc), loc), t, loc);
  });
}

namespace {

using LaxArgReduce = Array (*)(const Array&, const lax::Axes&, DType, std::source_location);

Array arg_reduce(LaxArgReduce fn, const Array& x, std::optional<std::int64_t> axis, bool keepdims,
                 const char* op, const std::source_location& loc) {
  const std::int64_t a = axis ? normalize_axis(*axis, x.shape().size(), op, loc) : 0;
  return fused(op, loc, [&] {
    Array in = x.dtype() == DType::Bool ? cast(x, DType::I32, loc) : x;
    if (!axis) in = reshape(in, Shape{in.size()}, loc);  // no axis: the flattened array
    Array r = fn(in, {a}, DType::I32, loc);
    if (!keepdims) return r;
    return lax::reshape(r, axis ? kept_shape(x.shape(), {a}) : Shape(x.shape().size(), 1), loc);
  });
}

}  // namespace

Array argmax(const Array& x, std::optional<std::int64_t> axis, bool keepdims,
             std::source_location loc) {
  return arg_reduce(lax::argmax, x, axis, keepdims, "argmax", loc);
}
Array argmin(const Array& x, std::optional<std::int64_t> axis, bool keepdims,
             std::source_location loc) {
  return arg_reduce(lax::argmin, x, axis, keepdims, "argmin", loc);
}

namespace {

// A batch dim one matmul operand lacks (the other has more dims).
constexpr std::int64_t kAbsent = -1;

// matmul of operands that already share a dtype, staged as jnp.matmul stages it: a batch dim
// only one operand has (or where the other's is 1) becomes a free dim of the dot rather than a
// broadcast batch dim, so x[..., K] @ W[K, N] is one [prod(...), K] x [K, N] product that reads
// W once (and its gradient contracts over the leading dims) instead of a batch of copies of W.
Array matmul_as(const Array& x, const Array& y, const std::source_location& loc) {
  const bool a_is_mat = x.ndim() > 1, b_is_mat = y.ndim() > 1;
  const Shape& sa = x.shape();
  const Shape& sb = y.shape();
  const std::int64_t b_inner = b_is_mat ? sb[sb.size() - 2] : sb[0];
  if (sa.back() != b_inner)
    throw ShapeError("matmul: inner dimensions differ: " + shape_to_string(x.shape()) + " @ " +
                     shape_to_string(y.shape()) + " at " + loc_str(loc));
  const Shape batch_a = a_is_mat ? Shape(sa.begin(), sa.end() - 2) : Shape{};
  const Shape batch_b = b_is_mat ? Shape(sb.begin(), sb.end() - 2) : Shape{};
  broadcast_shapes(batch_a, batch_b, "matmul");  // names incompatible batch dims
  const std::size_t nb = std::max(batch_a.size(), batch_b.size());
  auto padded = [nb](const Shape& s) {
    Shape p(nb - s.size(), kAbsent);
    p.insert(p.end(), s.begin(), s.end());
    return p;
  };
  const Shape pa = padded(batch_a), pb = padded(batch_b);
  // Where each dim of the dot's result (batch, then x's free, then y's free) goes in matmul's.
  std::vector<std::int64_t> idx_batch, idx_a_other, idx_b_other;
  Shape a_kept, b_kept;  // the operands' shapes with squeezed batch dims of size 1 removed
  lax::DotDims dims;
  std::size_t a_pos = 0, b_pos = 0;  // dims of each operand seen so far, after squeezing
  for (std::size_t i = 0; i < nb; ++i) {
    const auto at = static_cast<std::int64_t>(i);
    const std::int64_t ba = pa[i], bb = pb[i];
    if (ba == kAbsent) {
      idx_b_other.push_back(at);
      b_kept.push_back(bb), ++b_pos;
    } else if (bb == kAbsent) {
      idx_a_other.push_back(at);
      a_kept.push_back(ba), ++a_pos;
    } else if (ba == 1) {
      idx_b_other.push_back(at);
      b_kept.push_back(bb), ++b_pos;
    } else if (bb == 1) {
      idx_a_other.push_back(at);
      a_kept.push_back(ba), ++a_pos;
    } else {  // equal, as broadcast_shapes checked
      dims.lhs_batch.push_back(static_cast<std::int64_t>(a_pos++));
      dims.rhs_batch.push_back(static_cast<std::int64_t>(b_pos++));
      a_kept.push_back(ba);
      b_kept.push_back(bb);
      idx_batch.push_back(at);
    }
  }
  if (a_is_mat) {
    idx_a_other.push_back(static_cast<std::int64_t>(nb));
    a_kept.push_back(sa[sa.size() - 2]);
  }
  a_kept.push_back(sa.back());
  if (b_is_mat) {
    idx_b_other.push_back(static_cast<std::int64_t>(nb) + (a_is_mat ? 1 : 0));
    b_kept.push_back(sb[sb.size() - 2]);
  }
  b_kept.push_back(sb.back());
  const Array a = a_kept == sa ? x : lax::reshape(x, a_kept, loc);
  const Array b = b_kept == sb ? y : lax::reshape(y, b_kept, loc);
  dims.lhs_contracting = {static_cast<std::int64_t>(a_kept.size()) - 1};
  dims.rhs_contracting = {static_cast<std::int64_t>(b_kept.size()) - 1 - (b_is_mat ? 1 : 0)};
  const Array r = lax::dot_general(a, b, dims, loc);
  std::vector<std::int64_t> order = idx_batch;
  order.insert(order.end(), idx_a_other.begin(), idx_a_other.end());
  order.insert(order.end(), idx_b_other.begin(), idx_b_other.end());
  Axes perm(order.size());  // argsort of order
  for (std::size_t i = 0; i < order.size(); ++i)
    perm[static_cast<std::size_t>(order[i])] = static_cast<std::int64_t>(i);
  bool identity = true;
  for (std::size_t i = 0; i < perm.size(); ++i)
    identity = identity && perm[i] == static_cast<std::int64_t>(i);
  return identity ? r : lax::transpose(r, perm, loc);
}

}  // namespace

Array matmul(const Array& x, const Array& y, std::source_location loc) {
  if (x.ndim() == 0 || y.ndim() == 0)
    throw ShapeError("matmul: operands must have at least one axis, got " +
                     shape_to_string(x.shape()) + " and " + shape_to_string(y.shape()) + " at " +
                     loc_str(loc));
  return fused("matmul", loc, [&] {
    // bool @ bool is bool, as in jax.numpy: any of the products, counted in i32.
    const DType t = promote_types(x.dtype(), y.dtype());
    const DType work = t == DType::Bool ? DType::I32 : t;
    Array r = matmul_as(cast(x, work, loc), cast(y, work, loc), loc);
    return t == DType::Bool ? lax::ne(r, full_of(0, r, loc), loc) : r;
  });
}

Array softmax(const Array& x, std::int64_t axis, std::source_location loc) {
  const std::int64_t a = normalize_axis(axis, x.shape().size(), "softmax", loc);
  return fused("softmax", loc, [&] {
    Array xf = cast(x, internal::inexact_type(x.dtype()), loc);
    // lax's max over no elements is -inf, the identity jax.nn.softmax starts from.
    Array m = lax::reshape(lax::reduce_max(xf, {a}, loc), kept_shape(xf.shape(), {a}), loc);
    Array e = exp(subtract(xf, m, loc), loc);
    return divide(e, sum(e, {a}, true, loc), loc);
  });
}

Array logsumexp(const Array& x, std::int64_t axis, std::source_location loc) {
  const std::int64_t a = normalize_axis(axis, x.shape().size(), "logsumexp", loc);
  return fused("logsumexp", loc, [&] {
    Array xf = cast(x, internal::inexact_type(x.dtype()), loc);
    // Shift by the maximum only where it is finite (as jax.scipy.special.logsumexp), so rows
    // of -inf give -inf and rows holding +inf give +inf rather than NaN.
    Array m = lax::reduce_max(xf, {a}, loc);
    Array shift = lax::select(isfinite(m, loc), m, full_of(0, m, loc), loc);
    Array kept = lax::reshape(shift, kept_shape(xf.shape(), {a}), loc);
    Array total = sum(exp(subtract(xf, kept, loc), loc), {a}, false, loc);
    return add(log(total, loc), shift, loc);
  });
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

}  // namespace weft
