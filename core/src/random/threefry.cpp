// Keys, the threefry2x32 cipher, split, fold_in and bits, as JAX's threefry implementation
// with jax_threefry_partitionable on: each element's counter is its flat index as a 64-bit
// count (high word, low word), so an element's bits do not depend on the array's size.
#include <string>

#include "random_internal.h"
#include "weft/backend.h"
#include "weft/error.h"
#include "weft/transforms/vmap.h"

namespace weft::random {

namespace detail {

Array full(double value, DType dtype, const Shape& shape, std::source_location loc) {
  return lax::broadcast_in_dim(lax::constant(value, dtype, loc), shape, {}, loc);
}

namespace {

void check_key(const Array& key, const char* api, std::source_location loc) {
  const std::string where = std::string("random::") + api + " at " + loc.file_name() + ":" +
                            std::to_string(loc.line()) + ": ";
  if (key.dtype() != DType::U32)
    throw DTypeError(where + "a key is u32[..., 2] key data (random::key(seed)), got " +
                     std::string(dtype_name(key.dtype())) + shape_to_string(key.shape()));
  if (key.ndim() == 0 || key.shape().back() != 2)
    throw ShapeError(where + "a key is u32[..., 2] key data (random::key(seed)), got u32" +
                     shape_to_string(key.shape()));
}

}  // namespace

Array map_keys(const Array& key, const std::vector<Array>& shared, const KeyFn& f, const char* api,
               std::source_location loc) {
  check_key(key, api, loc);
  if (key.ndim() == 1) return f(key, shared);
  ArrayFunction one_row = [&](const std::vector<Array>& xs) {
    const std::vector<Array> rest(xs.begin() + 1, xs.end());
    return std::vector<Array>{map_keys(xs[0], rest, f, api, loc)};
  };
  VmapOptions options;
  options.in_axes.push_back(0);
  options.in_axes.insert(options.in_axes.end(), shared.size(), std::nullopt);
  std::vector<Array> args{key};
  args.insert(args.end(), shared.begin(), shared.end());
  return vmap(one_row, options, loc)(args).at(0);
}

namespace {

// a * b + c for f64 with one rounding in all but rare double-rounding cases: a * b = p + e
// exactly (Dekker's product of Veltkamp halves), p + c = s + f exactly (Knuth's two-sum), and
// the result is s + (e + f). There is no wider float to compute in, and no fma primitive.
Array fused_multiply_add_f64(const Array& a, const Array& b, const Array& c,
                             std::source_location loc) {
  const Shape& shape = a.shape();
  auto f64 = [&](double v) { return full(v, DType::F64, shape, loc); };
  using lax::add, lax::mul, lax::sub;
  // x = hi + lo, each half of 26 bits, so that products of halves are exact.
  auto split = [&](const Array& x) {
    const Array t = mul(f64(134217729.0), x, loc);  // 2^27 + 1
    const Array hi = sub(t, sub(t, x, loc), loc);
    return std::pair<Array, Array>{hi, sub(x, hi, loc)};
  };
  const Array p = mul(a, b, loc);
  const auto [ah, al] = split(a);
  const auto [bh, bl] = split(b);
  const Array e =
      add(add(add(sub(mul(ah, bh, loc), p, loc), mul(ah, bl, loc), loc), mul(al, bh, loc), loc),
          mul(al, bl, loc), loc);
  const Array s = add(p, c, loc);
  const Array v = sub(s, p, loc);
  const Array f = add(sub(p, sub(s, v, loc), loc), sub(c, v, loc), loc);
  return add(s, add(e, f, loc), loc);
}

}  // namespace

Array fused_multiply_add(const Array& a, const Array& b, const Array& c, std::source_location loc) {
  if (a.dtype() == DType::F64) return fused_multiply_add_f64(a, b, c, loc);
  if (!default_device().supports(DType::F64)) return lax::add(lax::mul(a, b, loc), c, loc);
  auto wide = [&](const Array& x) { return lax::convert_element_type(x, DType::F64, loc); };
  return lax::convert_element_type(lax::add(lax::mul(wide(a), wide(b), loc), wide(c), loc),
                                   DType::F32, loc);
}

void require_f32(DType dtype, const char* api, std::source_location loc) {
  if (dtype == DType::F32) return;
  throw DTypeError(
      std::string("random::") + api + " at " + loc.file_name() + ":" + std::to_string(loc.line()) +
      ": samples f32 only, got " + std::string(dtype_name(dtype)) +
      (dtype == DType::F64 ? " (its f64 form is not written yet; uniform, normal, truncated_normal,"
                             " gumbel and categorical take f64)"
                           : "; convert an f32 sample"));
}

}  // namespace detail

namespace {

using detail::full;

// One key word as a scalar, broadcast to `shape`.
Array key_word(const Array& key, std::int64_t word, const Shape& shape, std::source_location loc) {
  const Array scalar = lax::reshape(lax::slice(key, {word}, {word + 1}, {}, loc), {}, loc);
  return lax::broadcast_in_dim(scalar, shape, {}, loc);
}

Array rotate_left(const Array& x, std::uint32_t distance, std::source_location loc) {
  return lax::logical_or(
      lax::shift_left(x, full(distance, DType::U32, x.shape(), loc), loc),
      lax::shift_right_logical(x, full(32 - distance, DType::U32, x.shape(), loc), loc), loc);
}

// The low words of the counters of an array of `shape`: its flat indices (the high words are
// 0 below 2^32 elements).
Array flat_index(const Shape& shape, std::source_location loc) {
  const std::int64_t n = num_elements(shape);
  return lax::reshape(lax::iota(DType::U32, {n}, 0, loc), shape, loc);
}

// The two words of threefry2x32(key, (0, counter)) for counters of `shape`.
std::pair<Array, Array> hash_counters(const Array& key, const Array& low_counter,
                                      std::source_location loc) {
  const Shape& shape = low_counter.shape();
  return threefry2x32(key_word(key, 0, shape, loc), key_word(key, 1, shape, loc),
                      full(0, DType::U32, shape, loc), low_counter, loc);
}

// The two words as the last axis: u32[shape..., 2].
Array stack_words(const Array& a, const Array& b, std::source_location loc) {
  Shape with_word = a.shape();
  with_word.push_back(1);
  return lax::concatenate({lax::reshape(a, with_word, loc), lax::reshape(b, with_word, loc)},
                          static_cast<std::int64_t>(with_word.size()) - 1, loc);
}

}  // namespace

Array PRNGKey(std::int64_t seed, std::source_location loc) {
  const auto low = static_cast<std::uint32_t>(static_cast<std::uint64_t>(seed));
  return lax::concatenate({lax::reshape(lax::constant(0, DType::U32, loc), {1}, loc),
                           lax::reshape(lax::constant(low, DType::U32, loc), {1}, loc)},
                          0, loc);
}

Array key(std::int64_t seed, std::source_location loc) {
  return PRNGKey(seed, loc);
}

std::pair<Array, Array> threefry2x32(const Array& k1, const Array& k2, const Array& x1,
                                     const Array& x2, std::source_location loc) {
  const Shape& shape = x1.shape();
  const Array ks[3] = {k1, k2,
                       lax::logical_xor(lax::logical_xor(k1, k2, loc),
                                        full(0x1BD11BDA, DType::U32, shape, loc), loc)};
  static constexpr std::uint32_t kRotations[2][4] = {{13, 15, 26, 6}, {17, 29, 16, 24}};
  Array a = lax::add(x1, ks[0], loc);
  Array b = lax::add(x2, ks[1], loc);
  for (int group = 1; group <= 5; ++group) {
    for (const std::uint32_t r : kRotations[(group - 1) % 2]) {
      a = lax::add(a, b, loc);
      b = lax::logical_xor(a, rotate_left(b, r, loc), loc);
    }
    a = lax::add(a, ks[group % 3], loc);
    b = lax::add(lax::add(b, ks[(group + 1) % 3], loc), full(group, DType::U32, shape, loc), loc);
  }
  return {a, b};
}

Array split(const Array& key, const Shape& shape, std::source_location loc) {
  return detail::map_keys(
      key, {},
      [&](const Array& k, const std::vector<Array>&) {
        const auto [a, b] = hash_counters(k, flat_index(shape, loc), loc);
        return stack_words(a, b, loc);
      },
      "split", loc);
}

Array split(const Array& key, std::int64_t num, std::source_location loc) {
  return split(key, Shape{num}, loc);
}

std::pair<Array, Array> split2(const Array& key, std::source_location loc) {
  const Array keys = split(key, 2, loc);
  if (keys.ndim() != 2)
    throw ShapeError(std::string("random::split2 at ") + loc.file_name() + ":" +
                     std::to_string(loc.line()) + ": takes one key (u32[2]), got u32" +
                     shape_to_string(key.shape()) + "; use split for key arrays");
  return {lax::reshape(lax::slice(keys, {0, 0}, {1, 2}, {}, loc), {2}, loc),
          lax::reshape(lax::slice(keys, {1, 0}, {2, 2}, {}, loc), {2}, loc)};
}

Array fold_in(const Array& key, const Array& data, std::source_location loc) {
  if (data.ndim() != 0 || !(is_integer(data.dtype())))
    throw ShapeError(std::string("random::fold_in at ") + loc.file_name() + ":" +
                     std::to_string(loc.line()) + ": data is an integer scalar, got " +
                     std::string(dtype_name(data.dtype())) + shape_to_string(data.shape()) +
                     "; use vmap for batches");
  const Array word =
      data.dtype() == DType::U32 ? data : lax::convert_element_type(data, DType::U32, loc);
  return detail::map_keys(
      key, {word},
      [&](const Array& k, const std::vector<Array>& shared) {
        const auto [a, b] = hash_counters(k, shared[0], loc);
        return stack_words(a, b, loc);
      },
      "fold_in", loc);
}

Array fold_in(const Array& key, std::uint32_t data, std::source_location loc) {
  return fold_in(key, lax::constant(data, DType::U32, loc), loc);
}

Array bits(const Array& key, const Shape& shape, std::source_location loc) {
  return detail::map_keys(
      key, {},
      [&](const Array& k, const std::vector<Array>&) {
        const auto [a, b] = hash_counters(k, flat_index(shape, loc), loc);
        return lax::logical_xor(a, b, loc);
      },
      "bits", loc);
}

Array bits(const Array& key, const Shape& shape, DType dtype, std::source_location loc) {
  if (dtype == DType::U32) return bits(key, shape, loc);
  if (dtype != DType::U64)
    throw DTypeError(std::string("random::bits at ") + loc.file_name() + ":" +
                     std::to_string(loc.line()) + ": makes u32 or u64 words, got " +
                     std::string(dtype_name(dtype)));
  return detail::map_keys(
      key, {},
      [&](const Array& k, const std::vector<Array>&) {
        const auto [a, b] = hash_counters(k, flat_index(shape, loc), loc);
        const Array high = lax::convert_element_type(a, DType::U64, loc);
        const Array low = lax::convert_element_type(b, DType::U64, loc);
        return lax::logical_or(lax::shift_left(high, full(32, DType::U64, shape, loc), loc), low,
                               loc);
      },
      "bits", loc);
}

}  // namespace weft::random
