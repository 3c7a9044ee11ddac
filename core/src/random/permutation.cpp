// weft::random's permutations and choice, as jax.random writes them: a shuffle is rounds of
// stable sorts by fresh random u32 keys (sort_key_val), so results match JAX bit for bit.
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <string>

#include "random_internal.h"
#include "weft/error.h"
#include "weft/np.h"

namespace weft::random {

namespace {

std::string at(const char* api, std::source_location loc) {
  return std::string("random::") + api + " at " + loc.file_name() + ":" +
         std::to_string(loc.line()) + ": ";
}

std::int64_t normalized_axis(std::int64_t axis, const Array& x, const char* api,
                             std::source_location loc) {
  const std::int64_t rank = std::max<std::int64_t>(x.ndim(), 1);
  if (axis < -rank || axis >= rank)
    throw ShapeError(at(api, loc) + "axis " + std::to_string(axis) + " is out of range for " +
                     std::string(dtype_name(x.dtype())) + shape_to_string(x.shape()));
  return axis < 0 ? axis + rank : axis;
}

// JAX's _shuffle on one key: ceil(3 ln(size) / ln(2^32 - 1)) rounds, each sorting x along
// `axis` by fresh random u32 keys, so that ties between keys are vanishingly unlikely to survive.
Array shuffle_along(Array key, Array x, std::int64_t axis, std::source_location loc) {
  const auto size = static_cast<double>(std::max<std::int64_t>(1, x.size()));
  const auto rounds = static_cast<int>(
      std::ceil(3 * std::log(size) / std::log(double{std::numeric_limits<std::uint32_t>::max()})));
  for (int round = 0; round < rounds; ++round) {
    auto [next, sub] = split2(key, loc);
    key = next;
    x = lax::sort_key_val(bits(sub, x.shape(), loc), x, axis, loc).second;
  }
  return x;
}

Array arange_i32(std::int64_t n, std::source_location loc) {
  return lax::iota(DType::I32, {n}, 0, loc);
}

}  // namespace

Array permutation(const Array& key, std::int64_t n, std::source_location loc) {
  if (n < 0)
    throw InvalidArgumentError(at("permutation", loc) + "n=" + std::to_string(n) + " must be >= 0");
  return detail::map_keys(
      key, {},
      [&](const Array& k, const std::vector<Array>&) {
        return shuffle_along(k, arange_i32(n, loc), 0, loc);
      },
      "permutation", loc);
}

Array permutation(const Array& key, const Array& x, std::int64_t axis, bool independent,
                  std::source_location loc) {
  if (x.ndim() == 0)
    throw ShapeError(at("permutation", loc) +
                     "x is a scalar; pass an integer n to permute "
                     "arange(n), or an array with at least one axis");
  const std::int64_t a = normalized_axis(axis, x, "permutation", loc);
  return detail::map_keys(
      key, {x},
      [&](const Array& k, const std::vector<Array>& shared) {
        const Array& v = shared[0];
        if (independent || v.ndim() == 1) return shuffle_along(k, v, a, loc);
        const Array order =
            shuffle_along(k, arange_i32(v.shape()[static_cast<std::size_t>(a)], loc), 0, loc);
        return np::take(v, order, a, IndexMode::fill, loc);
      },
      "permutation", loc);
}

Array shuffle(const Array& key, const Array& x, std::int64_t axis, std::source_location loc) {
  return permutation(key, x, axis, true, loc);
}

namespace {

// choice's draws as indices into the n candidates (i32 of `shape`), as jax.random.choice.
Array choice_indices(const Array& key, std::int64_t n, const Shape& shape, bool replace,
                     const std::optional<Array>& p, std::source_location loc) {
  const std::int64_t draws = num_elements(shape);
  if (!p) {
    if (replace) return randint(key, shape, 0, n, DType::I32, loc);
    const Array all = shuffle_along(key, arange_i32(n, loc), 0, loc);
    return lax::reshape(lax::slice(all, {0}, {draws}, {1}, loc), shape, loc);
  }
  if (replace) {
    const Array cumulative = lax::cumsum(*p, 0, false, loc);
    const Array total = lax::slice(cumulative, {n - 1}, {n}, {1}, loc);
    const Array u = uniform(key, shape, DType::F32, 0.0, 1.0, loc);
    const Array r =
        np::multiply(lax::reshape(total, {}, loc),
                     np::subtract(detail::full(1, DType::F32, shape, loc), u, loc), loc);
    return np::searchsorted(cumulative, r, np::Side::left, loc);
  }
  // The Gumbel top-k trick: the k largest of gumbel noise plus log p.
  const Array g = np::add(gumbel(key, {n}, DType::F32, loc), lax::log(*p, loc), loc);
  return lax::reshape(lax::top_k(g, draws, loc).second, shape, loc);
}

// choice from the slices of `*a` along `axis`, or with a null `a` from arange(n).
Array choose(const Array& key, const Array* a, std::int64_t n, const Shape& shape, bool replace,
             const std::optional<Array>& p, std::int64_t axis, std::source_location loc) {
  const bool from_range = a == nullptr;
  std::int64_t along = 0;
  Shape out_shape = shape;
  if (!from_range) {
    along = normalized_axis(axis, *a, "choice", loc);
    n = a->shape()[static_cast<std::size_t>(along)];
    out_shape = Shape(a->shape().begin(), a->shape().begin() + along);
    out_shape.insert(out_shape.end(), shape.begin(), shape.end());
    out_shape.insert(out_shape.end(), a->shape().begin() + along + 1, a->shape().end());
  }
  const std::int64_t draws = num_elements(shape);
  if (draws == 0) return detail::full(0, from_range ? DType::I32 : a->dtype(), out_shape, loc);
  if (n <= 0)
    throw InvalidArgumentError(at("choice", loc) +
                               "there are no candidates (a has size 0 along axis, or n <= 0) "
                               "to draw " +
                               std::to_string(draws) + " samples from");
  if (!replace && draws > n)
    throw InvalidArgumentError(at("choice", loc) + "cannot draw " + std::to_string(draws) +
                               " samples from " + std::to_string(n) +
                               " candidates without replacement");
  if (p) {
    if (p->shape() != Shape{n})
      throw ShapeError(at("choice", loc) + "p " + shape_to_string(p->shape()) +
                       " must be one probability per candidate, of shape [" + std::to_string(n) +
                       "]");
    detail::require_f32(p->dtype(), "choice", loc);
  }
  std::vector<Array> shared;
  if (!from_range) shared.push_back(*a);
  if (p) shared.push_back(*p);
  return detail::map_keys(
      key, shared,
      [&](const Array& k, const std::vector<Array>& s) {
        const std::optional<Array> probabilities =
            p ? std::optional<Array>(s.back()) : std::nullopt;
        const Array ind = choice_indices(k, n, shape, replace, probabilities, loc);
        if (from_range) return ind;
        return lax::reshape(np::take(s[0], ind, along, IndexMode::fill, loc), out_shape, loc);
      },
      "choice", loc);
}

}  // namespace

Array choice(const Array& key, const Array& a, const Shape& shape, bool replace,
             std::optional<Array> p, std::int64_t axis, std::source_location loc) {
  if (a.ndim() > 0) return choose(key, &a, 0, shape, replace, p, axis, loc);
  if (!is_integer(a.dtype()))
    throw DTypeError(at("choice", loc) +
                     "a scalar a must be an integer (the number of "
                     "candidates), not " +
                     std::string(dtype_name(a.dtype())));
  // The number of candidates sets the result's shape: it must be concrete, as in JAX.
  return choose(key, nullptr, a.to_host().get_i64(0), shape, replace, p, 0, loc);
}

Array choice(const Array& key, std::int64_t n, const Shape& shape, bool replace,
             std::optional<Array> p, std::source_location loc) {
  return choose(key, nullptr, n, shape, replace, p, 0, loc);
}

}  // namespace weft::random
