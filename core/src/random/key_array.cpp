// Typed key arrays over threefry2x32 key data (jax.random.key).
#include "weft/random_key_array.h"

#include <string>

#include "weft/error.h"
#include "weft/ops.h"

namespace weft::random {

namespace {

std::string where(const char* api, std::source_location loc) {
  return std::string("random::") + api + " at " + loc.file_name() + ":" +
         std::to_string(loc.line()) + ": ";
}

}  // namespace

KeyArray::KeyArray(const Array& key_data, const char* api, std::source_location loc)
    : data_(key_data) {
  const std::string described =
      std::string(dtype_name(key_data.dtype())) + shape_to_string(key_data.shape());
  if (key_data.dtype() != DType::U32)
    throw DTypeError(where(api, loc) + "threefry2x32 key data is u32[..., 2], got " + described +
                     "; make keys with random::typed_key(seed) or wrap random::key(seed)");
  if (key_data.ndim() == 0 || key_data.shape().back() != 2)
    throw ShapeError(where(api, loc) +
                     "threefry2x32 key data is u32[..., 2] (two words per key), got " + described +
                     "; reshape it so the last axis holds each key's two words");
}

Shape KeyArray::shape() const {
  Shape s = data_.shape();
  s.pop_back();
  return s;
}

std::int64_t KeyArray::size() const {
  std::int64_t n = 1;
  for (const std::int64_t d : shape()) n *= d;
  return n;
}

KeyArray KeyArray::operator[](std::int64_t index) const {
  const std::source_location loc = std::source_location::current();
  if (ndim() == 0)
    throw ShapeError(where("KeyArray::operator[]", loc) +
                     "a single key (shape []) has no axis to index");
  const std::int64_t n = data_.shape().front();
  const std::int64_t i = index < 0 ? index + n : index;
  if (i < 0 || i >= n)
    throw InvalidArgumentError(where("KeyArray::operator[]", loc) + "index " +
                               std::to_string(index) + " is out of range for key shape " +
                               shape_to_string(shape()));
  Shape rest = data_.shape();
  rest.erase(rest.begin());
  return KeyArray(lax::reshape(slice(i, i + 1, loc).data(), rest, loc), "KeyArray::operator[]",
                  loc);
}

KeyArray KeyArray::slice(std::int64_t start, std::int64_t stop, std::source_location loc) const {
  if (ndim() == 0)
    throw ShapeError(where("KeyArray::slice", loc) +
                     "a single key (shape []) has no axis to slice");
  const std::int64_t n = data_.shape().front();
  if (start < 0 || stop < start || stop > n)
    throw InvalidArgumentError(where("KeyArray::slice", loc) + "[" + std::to_string(start) + ", " +
                               std::to_string(stop) + ") is not within key shape " +
                               shape_to_string(shape()));
  lax::Axes low(static_cast<std::size_t>(data_.ndim()), 0);
  lax::Axes high(data_.shape().begin(), data_.shape().end());
  low.front() = start;
  high.front() = stop;
  return KeyArray(lax::slice(data_, low, high, {}, loc), "KeyArray::slice", loc);
}

KeyArray KeyArray::reshape(const Shape& new_shape, std::source_location loc) const {
  Shape with_words = new_shape;
  with_words.push_back(2);
  return KeyArray(lax::reshape(data_, with_words, loc), "KeyArray::reshape", loc);
}

std::string KeyArray::to_string() const {
  std::string dims;
  const Shape s = shape();
  for (std::size_t i = 0; i < s.size(); ++i) dims += (i ? ", " : "") + std::to_string(s[i]);
  if (s.size() == 1) dims += ",";
  return "Array((" + dims + "), dtype=key<fry>)";
}

KeyArray typed_key(std::int64_t seed, std::source_location loc) {
  return KeyArray(key(seed, loc), "typed_key", loc);
}

KeyArray wrap_key_data(const Array& key_data, std::source_location loc) {
  return KeyArray(key_data, "wrap_key_data", loc);
}

KeyArray split(const KeyArray& key, std::int64_t num, std::source_location loc) {
  return KeyArray(split(key.data(), num, loc), "split", loc);
}

KeyArray split(const KeyArray& key, const Shape& shape, std::source_location loc) {
  return KeyArray(split(key.data(), shape, loc), "split", loc);
}

KeyArray fold_in(const KeyArray& key, std::uint32_t data, std::source_location loc) {
  return KeyArray(fold_in(key.data(), data, loc), "fold_in", loc);
}

KeyArray fold_in(const KeyArray& key, const Array& data, std::source_location loc) {
  return KeyArray(fold_in(key.data(), data, loc), "fold_in", loc);
}

}  // namespace weft::random
