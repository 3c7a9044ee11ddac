#include "value.h"

#include <iterator>
#include <limits>
#include <vector>

namespace weft::interp {

namespace {

// Smaller blocks come from malloc's own free lists cheaply.
constexpr std::size_t kRecycledMinElements = std::size_t{1} << 16;
// At most this many blocks of each kind, and this many bytes in all: a run never holds more
// than that beyond what it would hold without recycling. The least recently released go first.
constexpr std::size_t kRecycledBlocks = 16;
constexpr std::size_t kRecycledBytes = std::size_t{256} << 20;

struct Recycler {
  int depth = 0;
  std::size_t bytes = 0;
  std::vector<std::vector<double>> floats;
  std::vector<std::vector<std::int64_t>> ints;
};
thread_local Recycler recycler;

template <typename T>
std::size_t block_bytes(const std::vector<T>& block) {
  return block.capacity() * sizeof(T);
}

template <typename T>
void keep(std::vector<std::vector<T>>& kept, std::vector<T>&& storage) {
  if (recycler.depth == 0 || storage.capacity() < kRecycledMinElements ||
      block_bytes(storage) > kRecycledBytes / 2)
    return;
  recycler.bytes += block_bytes(storage);
  kept.push_back(std::move(storage));
  while (kept.size() > kRecycledBlocks || recycler.bytes > kRecycledBytes) {
    recycler.bytes -= block_bytes(kept.front());
    kept.erase(kept.begin());
  }
}

// A kept block of at least n elements and not more than twice that, zero-filled to n.
template <typename T>
std::vector<T> take(std::vector<std::vector<T>>& kept, std::size_t n) {
  if (n >= kRecycledMinElements)
    for (auto it = kept.rbegin(); it != kept.rend(); ++it)
      if (it->capacity() >= n && it->capacity() <= 2 * n) {
        std::vector<T> block = std::move(*it);
        recycler.bytes -= block_bytes(block);
        kept.erase(std::next(it).base());
        block.assign(n, T{});
        return block;
      }
  return std::vector<T>(n, T{});
}

}  // namespace

void recycle(Value&& value) {
  keep(recycler.floats, std::move(value.f));
  keep(recycler.ints, std::move(value.i));
}

RecyclingScope::RecyclingScope() {
  ++recycler.depth;
}

RecyclingScope::~RecyclingScope() {
  if (--recycler.depth > 0) return;
  recycler.floats.clear();
  recycler.ints.clear();
  recycler.bytes = 0;
}

Value make_value(DType dtype, Shape shape) {
  Value v{dtype, std::move(shape), {}, {}};
  if (dtype == DType::Token) return v;  // orders effects, holds nothing
  const auto n = static_cast<std::size_t>(v.size());
  if (is_float(dtype)) {
    v.f = take(recycler.floats, n);
  } else {
    v.i = take(recycler.ints, n);
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
