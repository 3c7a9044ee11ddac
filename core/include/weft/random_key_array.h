// Typed key arrays, as jax.random.key's: a KeyArray holds threefry2x32 key data u32[..., 2] and
// its shape leaves out the generator's trailing two words, so a single key has shape [] and
// split(key, 3) has shape [3].
//
//   random::KeyArray key = random::typed_key(42);
//   random::KeyArray keys = random::split(key, 3);             // shape [3]
//   Array x = random::normal(keys[0], {1000});                  // the bits of the raw key's
//   Array data = random::key_data(keys);                        // u32[3, 2]
//
// jit, vmap, scan, fori_loop and pmap take Arrays, so a KeyArray crosses them as its key data:
// pass key_data(keys) in, wrap_key_data inside (and back out), which is free. The samplers,
// split and fold_in take KeyArrays directly and give the raw keys' bits.
#pragma once

#include <cstdint>
#include <optional>
#include <source_location>
#include <string>

#include "weft/array.h"
#include "weft/random.h"

namespace weft::random {

class KeyArray {
 public:
  // Checks the data is u32[..., 2] (DTypeError, ShapeError naming `api` and the shape).
  explicit KeyArray(const Array& key_data, const char* api = "wrap_key_data", WEFT_LOC_PARAM);

  // The key array's shape: the data's without the trailing two words.
  Shape shape() const;
  std::int64_t ndim() const { return data_.ndim() - 1; }
  std::int64_t size() const;
  // Keys along the leading axis: one (a negative index counts from the end), or [start, stop).
  KeyArray operator[](std::int64_t index) const;
  KeyArray slice(std::int64_t start, std::int64_t stop, WEFT_LOC_PARAM) const;
  KeyArray reshape(const Shape& shape, WEFT_LOC_PARAM) const;
  // The raw key data, u32[shape..., 2].
  const Array& data() const { return data_; }
  // JAX's repr without the data: "Array((), dtype=key<fry>)", "Array((3, 2), dtype=key<fry>)".
  std::string to_string() const;

 private:
  Array data_;
};

// jax.random.key(seed): the typed key of PRNGKey(seed)'s data.
KeyArray typed_key(std::int64_t seed, WEFT_LOC_PARAM);
// jax.random.key_data and jax.random.wrap_key_data (threefry2x32 data only).
inline Array key_data(const KeyArray& keys) {
  return keys.data();
}
KeyArray wrap_key_data(const Array& key_data, WEFT_LOC_PARAM);

// The functions of weft/random.h on typed keys: split and fold_in give KeyArrays, the samplers
// the same values as on the raw data.
KeyArray split(const KeyArray& key, std::int64_t num = 2, WEFT_LOC_PARAM);
KeyArray split(const KeyArray& key, const Shape& shape, WEFT_LOC_PARAM);
KeyArray fold_in(const KeyArray& key, std::uint32_t data, WEFT_LOC_PARAM);
KeyArray fold_in(const KeyArray& key, const Array& data, WEFT_LOC_PARAM);

inline Array bits(const KeyArray& key, const Shape& shape = {}, WEFT_LOC_PARAM) {
  return bits(key.data(), shape, loc);
}
inline Array bits(const KeyArray& key, const Shape& shape, DType dtype, WEFT_LOC_PARAM) {
  return bits(key.data(), shape, dtype, loc);
}
inline Array uniform(const KeyArray& key, const Shape& shape = {}, DType dtype = DType::F32,
                     double minval = 0.0, double maxval = 1.0, WEFT_LOC_PARAM) {
  return uniform(key.data(), shape, dtype, minval, maxval, loc);
}
inline Array normal(const KeyArray& key, const Shape& shape = {}, DType dtype = DType::F32,
                    WEFT_LOC_PARAM) {
  return normal(key.data(), shape, dtype, loc);
}
inline Array truncated_normal(const KeyArray& key, double lower, double upper,
                              const Shape& shape = {}, DType dtype = DType::F32, WEFT_LOC_PARAM) {
  return truncated_normal(key.data(), lower, upper, shape, dtype, loc);
}
inline Array bernoulli(const KeyArray& key, double p = 0.5, const Shape& shape = {},
                       WEFT_LOC_PARAM) {
  return bernoulli(key.data(), p, shape, loc);
}
inline Array randint(const KeyArray& key, const Shape& shape, std::int64_t minval,
                     std::int64_t maxval, DType dtype = DType::I32, WEFT_LOC_PARAM) {
  return randint(key.data(), shape, minval, maxval, dtype, loc);
}
inline Array gumbel(const KeyArray& key, const Shape& shape = {}, DType dtype = DType::F32,
                    WEFT_LOC_PARAM) {
  return gumbel(key.data(), shape, dtype, loc);
}
inline Array categorical(const KeyArray& key, const Array& logits, std::int64_t axis = -1,
                         std::optional<Shape> shape = std::nullopt, WEFT_LOC_PARAM) {
  return categorical(key.data(), logits, axis, std::move(shape), loc);
}
inline Array permutation(const KeyArray& key, std::int64_t n, WEFT_LOC_PARAM) {
  return permutation(key.data(), n, loc);
}
inline Array permutation(const KeyArray& key, const Array& x, std::int64_t axis = 0,
                         bool independent = false, WEFT_LOC_PARAM) {
  return permutation(key.data(), x, axis, independent, loc);
}
inline Array shuffle(const KeyArray& key, const Array& x, std::int64_t axis = 0, WEFT_LOC_PARAM) {
  return shuffle(key.data(), x, axis, loc);
}
inline Array choice(const KeyArray& key, const Array& a, const Shape& shape = {},
                    bool replace = true, std::optional<Array> p = std::nullopt,
                    std::int64_t axis = 0, WEFT_LOC_PARAM) {
  return choice(key.data(), a, shape, replace, std::move(p), axis, loc);
}
inline Array choice(const KeyArray& key, std::int64_t n, const Shape& shape = {},
                    bool replace = true, std::optional<Array> p = std::nullopt, WEFT_LOC_PARAM) {
  return choice(key.data(), n, shape, replace, std::move(p), loc);
}

}  // namespace weft::random
