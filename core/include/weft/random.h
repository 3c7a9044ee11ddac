// Pseudo-random numbers bit-exact with jax.random in JAX's default configuration: the
// threefry2x32 generator with jax_threefry_partitionable on (counters are the flat index of
// each element, as a 64-bit count split into two u32 words) and 32-bit dtypes.
//
//   Array key = random::key(42);
//   auto [key2, sub] = random::split2(key);
//   Array x = random::normal(sub, {1000});     // the same bits as jax.random.normal
//
// Keys are raw key data, u32[..., 2], as JAX's legacy random.PRNGKey keys: a key is an ordinary
// weft Array, so it goes through jit, vmap, grad (without a tangent), fori_loop and pmap like
// any other value. A key array with leading dimensions is a batch of keys: every function then
// works as jax.vmap of it over those dimensions (the result gains them in front). Reusing a key
// repeats its numbers; that is the caller's choice, as in JAX.
#pragma once

#include <cstdint>
#include <optional>
#include <source_location>
#include <utility>

#include "weft/array.h"
#include "weft/ops.h"

namespace weft::random {

// JAX's threefry2x32 seed: the low 32 bits of the seed in the second word (JAX converts a
// Python seed to a 32-bit integer with x64 off), 0 in the first: u32[2].
Array PRNGKey(std::int64_t seed, WEFT_LOC_PARAM);
// The same key data (jax.random.key's typed key holds exactly these two words).
Array key(std::int64_t seed, WEFT_LOC_PARAM);

// The threefry2x32 block cipher on u32 arrays of one shape: (key words, counter words) ->
// the two output words. A composition of u32 adds, xors and rotations, which fuses.
std::pair<Array, Array> threefry2x32(const Array& k1, const Array& k2, const Array& x1,
                                     const Array& x2, WEFT_LOC_PARAM);

// `num` new keys (u32[num, 2]), or a key array of the given shape (u32[shape..., 2]).
Array split(const Array& key, std::int64_t num = 2, WEFT_LOC_PARAM);
Array split(const Array& key, const Shape& shape, WEFT_LOC_PARAM);
// The two keys of split(key), as a pair, for `auto [key, sub] = split2(key)`.
std::pair<Array, Array> split2(const Array& key, WEFT_LOC_PARAM);
// A new key from a key and 32 bits of data (an integer scalar Array is converted to u32, as
// JAX's jnp.asarray(data, 'uint32')).
Array fold_in(const Array& key, std::uint32_t data, WEFT_LOC_PARAM);
Array fold_in(const Array& key, const Array& data, WEFT_LOC_PARAM);

// Uniform random u32 words.
Array bits(const Array& key, const Shape& shape = {}, WEFT_LOC_PARAM);
// u32 or u64 words (u64: JAX's with x64 on, the two hash words as high and low halves).
Array bits(const Array& key, const Shape& shape, DType dtype, WEFT_LOC_PARAM);

// The floating samplers take f32 or f64 (f64 as JAX with x64 on) and refuse other dtypes with a
// DTypeError.
// Uniform in [minval, maxval), by JAX's mantissa construction.
Array uniform(const Array& key, const Shape& shape = {}, DType dtype = DType::F32,
              double minval = 0.0, double maxval = 1.0, WEFT_LOC_PARAM);
// Standard normal: sqrt(2) * erf_inv(uniform in (-1, 1)), with XLA's erf_inv polynomials; f32
// or f64.
Array normal(const Array& key, const Shape& shape = {}, DType dtype = DType::F32, WEFT_LOC_PARAM);
// Standard normal truncated to (lower, upper): sqrt(2) * erf_inv(uniform between the bounds'
// erf); f32 or f64.
Array truncated_normal(const Array& key, double lower, double upper, const Shape& shape = {},
                       DType dtype = DType::F32, WEFT_LOC_PARAM);
// bool array, true with probability p (JAX's default mode "low": uniform < p, in f32).
Array bernoulli(const Array& key, double p = 0.5, const Shape& shape = {}, WEFT_LOC_PARAM);
// Integers in [minval, maxval) (minval where maxval <= minval), JAX's double-width modulus;
// i32 or u32, bounds within that dtype's range.
Array randint(const Array& key, const Shape& shape, std::int64_t minval, std::int64_t maxval,
              DType dtype = DType::I32, WEFT_LOC_PARAM);
// Standard Gumbel: -log(-log(uniform in [tiny, 1))) (JAX's default mode "low"); f32 or f64.
Array gumbel(const Array& key, const Shape& shape = {}, DType dtype = DType::F32, WEFT_LOC_PARAM);
// i32 indices drawn from the categorical distributions of `logits` along `axis` (the Gumbel
// max trick, with replacement; f32 or f64 logits, noise of their dtype). shape defaults to logits'
// shape without `axis`; a longer shape draws shape[:-batch] samples per distribution.
Array categorical(const Array& key, const Array& logits, std::int64_t axis = -1,
                  std::optional<Shape> shape = std::nullopt, WEFT_LOC_PARAM);

// Sort family (permutation.cpp): shuffles by rounds of stable sorts on random u32 keys, as JAX.
// A random ordering of arange(n) (i32).
Array permutation(const Array& key, std::int64_t n, WEFT_LOC_PARAM);
// x with its slices along `axis` in a random order; independent: each 1-D line along `axis`
// shuffled on its own.
Array permutation(const Array& key, const Array& x, std::int64_t axis = 0, bool independent = false,
                  WEFT_LOC_PARAM);
// JAX's removed jax.random.shuffle: permutation(key, x, axis, independent = true).
Array shuffle(const Array& key, const Array& x, std::int64_t axis = 0, WEFT_LOC_PARAM);
// Samples of a's slices along `axis` (a scalar integer a: of arange(a)), with or without
// replacement, uniform or with probabilities p (f32, one per candidate); the result has a's
// shape with `axis` replaced by `shape`. With p and replacement the draw inverts p's cumulative
// sum, whose last bits may differ from JAX's where the partial sums round.
Array choice(const Array& key, const Array& a, const Shape& shape = {}, bool replace = true,
             std::optional<Array> p = std::nullopt, std::int64_t axis = 0, WEFT_LOC_PARAM);
Array choice(const Array& key, std::int64_t n, const Shape& shape = {}, bool replace = true,
             std::optional<Array> p = std::nullopt, WEFT_LOC_PARAM);

}  // namespace weft::random
