#include "index.h"

#include <algorithm>

namespace weft::interp {

namespace {

template <typename T>
void gather_into(std::vector<T>& out, const std::vector<const std::vector<T>*>& parts,
                 const std::vector<std::int64_t>& src) {
  if (parts.size() == 1) {
    const std::vector<T>& only = *parts[0];
    for (std::size_t k = 0; k < src.size(); ++k) out[k] = only[src[k]];
    return;
  }
  std::vector<T> all;
  for (const auto* p : parts) all.insert(all.end(), p->begin(), p->end());
  for (std::size_t k = 0; k < src.size(); ++k) out[k] = all[src[k]];
}

}  // namespace

namespace {

template <typename T>
void copy_strided(std::vector<T>& out, const std::vector<T>& x, const Shape& shape,
                  std::span<const std::int64_t> strides, std::int64_t offset) {
  for_each_strided_row(
      shape, strides, offset,
      [&](std::int64_t to, std::int64_t from, std::int64_t count, std::int64_t step) {
        T* o = out.data() + to;
        const T* in = x.data() + from;
        if (step == 1) {
          std::copy(in, in + count, o);
        } else if (step == 0) {
          std::fill(o, o + count, *in);
        } else {
          for (std::int64_t j = 0; j < count; ++j) o[j] = in[j * step];
        }
      });
}

}  // namespace

Value strided_copy(DType dtype, Shape shape, const Value& x, std::span<const std::int64_t> strides,
                   std::int64_t offset) {
  Value out = make_value(dtype, std::move(shape));
  if (is_float(dtype))
    copy_strided(out.f, x.f, out.shape, strides, offset);
  else
    copy_strided(out.i, x.i, out.shape, strides, offset);
  return out;
}

Value gather(DType dtype, Shape shape, std::span<const Value* const> sources,
             const std::vector<std::int64_t>& src) {
  Value out = make_value(dtype, std::move(shape));
  if (is_float(dtype)) {
    std::vector<const std::vector<double>*> parts;
    for (const Value* s : sources) parts.push_back(&s->f);
    gather_into(out.f, parts, src);
  } else {
    std::vector<const std::vector<std::int64_t>*> parts;
    for (const Value* s : sources) parts.push_back(&s->i);
    gather_into(out.i, parts, src);
  }
  return out;
}

Value transposed(const Value& x, std::span<const std::int64_t> perm) {
  const auto in_strides = row_major_strides(x.shape);
  Shape shape(perm.size());
  std::vector<std::int64_t> strides(perm.size());
  for (std::size_t k = 0; k < perm.size(); ++k) {
    shape[k] = x.shape[perm[k]];
    strides[k] = in_strides[perm[k]];
  }
  return strided_copy(x.dtype, shape, x, strides, 0);
}

}  // namespace weft::interp
