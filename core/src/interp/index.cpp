#include "index.h"

namespace weft::interp {

std::vector<std::int64_t> strided_map(const Shape& shape, std::span<const std::int64_t> strides,
                                      std::int64_t offset) {
  std::vector<std::int64_t> src(static_cast<std::size_t>(num_elements(shape)));
  for_each_index(shape, [&](std::int64_t k, const std::vector<std::int64_t>& index) {
    std::int64_t at = offset;
    for (std::size_t d = 0; d < index.size(); ++d) at += index[d] * strides[d];
    src[k] = at;
  });
  return src;
}

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
  const Value* sources[] = {&x};
  return gather(x.dtype, shape, sources, strided_map(shape, strides, 0));
}

}  // namespace weft::interp
