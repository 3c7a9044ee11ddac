#include "npy.h"

#include <bit>
#include <cctype>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <limits>
#include <optional>
#include <string_view>
#include <system_error>

#include "weft/error.h"

namespace weft::npy {

// .npy data is little-endian and is copied straight into host and device buffers.
static_assert(std::endian::native == std::endian::little, "weft's .npy code assumes little-endian");

namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr std::size_t kMagicSize = 6;
constexpr std::size_t kAlignment = 64;  // numpy pads headers so the data starts 64-aligned
constexpr std::string_view kSupported = "<f4, <f8, <i4, <i8, <u4 and |b1";

struct DescrEntry {
  std::string_view descr;
  DType dtype;
};
constexpr DescrEntry kDescrs[] = {{"<f4", DType::F32}, {"<f8", DType::F64}, {"<i4", DType::I32},
                                  {"<i8", DType::I64}, {"<u4", DType::U32}, {"|b1", DType::Bool}};

[[noreturn]] void fail(const std::string& source, const std::string& what) {
  throw InvalidArgumentError(source + ": not a valid .npy file: " + what);
}

DType dtype_of_descr(const std::string& descr, const std::string& source) {
  for (const DescrEntry& e : kDescrs)
    if (e.descr == descr) return e.dtype;
  std::string why;
  if (!descr.empty() && descr[0] == '>')
    why = " (big-endian data; convert it with arr.astype(arr.dtype.newbyteorder('<')))";
  else if (descr == "|u1" || descr == "<u1")
    why = " (uint8; save booleans as dtype bool, other bytes as int32)";
  throw InvalidArgumentError(source + ": unsupported .npy dtype '" + descr + "'" + why +
                             "; weft reads " + std::string(kSupported));
}

// The header is a Python dict literal, e.g.
//   {'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }
// This parser accepts exactly the literals numpy writes for plain (non-structured) dtypes.
class HeaderParser {
 public:
  HeaderParser(std::string_view text, const std::string& source) : text_(text), source_(source) {}

  struct Header {
    std::string descr;
    bool fortran_order = false;
    Shape shape;
  };

  Header parse() {
    Header h;
    bool have_descr = false, have_order = false, have_shape = false;
    expect('{');
    while (true) {
      skip_space();
      if (peek() == '}') break;
      std::string key = string_literal("a key");
      expect(':');
      skip_space();
      if (key == "descr") {
        check_once(have_descr, key);
        if (peek() == '[') fail(source_, "structured dtypes are not supported");
        h.descr = string_literal("the descr string");
      } else if (key == "fortran_order") {
        check_once(have_order, key);
        h.fortran_order = boolean();
      } else if (key == "shape") {
        check_once(have_shape, key);
        h.shape = tuple();
      } else {
        fail(source_, "unexpected header key '" + key + "'");
      }
      skip_space();
      if (peek() == ',') {
        ++pos_;
        continue;
      }
      if (peek() != '}') error("',' or '}'");
    }
    ++pos_;
    skip_space();
    if (pos_ != text_.size()) error("the end of the header");
    if (!have_descr) fail(source_, "the header has no 'descr' key");
    if (!have_order) fail(source_, "the header has no 'fortran_order' key");
    if (!have_shape) fail(source_, "the header has no 'shape' key");
    return h;
  }

 private:
  char peek() const { return pos_ < text_.size() ? text_[pos_] : '\0'; }

  void skip_space() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t' ||
                                   text_[pos_] == '\n' || text_[pos_] == '\r'))
      ++pos_;
  }

  [[noreturn]] void error(const std::string& expected) const {
    std::string found = pos_ < text_.size() ? "'" + std::string(1, text_[pos_]) + "'" : "its end";
    fail(source_, "malformed header: expected " + expected + " at offset " + std::to_string(pos_) +
                      ", found " + found);
  }

  void expect(char c) {
    skip_space();
    if (peek() != c) error(std::string("'") + c + "'");
    ++pos_;
  }

  void check_once(bool& seen, const std::string& key) const {
    if (seen) fail(source_, "the header repeats the key '" + key + "'");
    seen = true;
  }

  std::string string_literal(const std::string& what) {
    skip_space();
    char quote = peek();
    if (quote != '\'' && quote != '"') error(what);
    std::size_t end = text_.find(quote, pos_ + 1);
    if (end == std::string_view::npos) fail(source_, "malformed header: unterminated string");
    std::string s(text_.substr(pos_ + 1, end - pos_ - 1));
    pos_ = end + 1;
    return s;
  }

  bool boolean() {
    for (auto [word, value] : {std::pair{std::string_view("True"), true}, {"False", false}}) {
      if (text_.substr(pos_, word.size()) == word) {
        pos_ += word.size();
        return value;
      }
    }
    error("True or False");
  }

  std::int64_t integer() {
    skip_space();
    if (!std::isdigit(static_cast<unsigned char>(peek()))) error("a non-negative integer");
    std::int64_t v = 0;
    while (std::isdigit(static_cast<unsigned char>(peek()))) {
      const int digit = text_[pos_++] - '0';
      if (v > (std::numeric_limits<std::int64_t>::max() - digit) / 10)
        fail(source_, "a dimension in 'shape' does not fit in 64 bits");
      v = v * 10 + digit;
    }
    if (peek() == 'L') ++pos_;  // Python 2 long literals, as old numpy wrote them
    return v;
  }

  Shape tuple() {
    Shape shape;
    expect('(');
    skip_space();
    if (peek() == ')') {
      ++pos_;
      return shape;
    }
    while (true) {
      shape.push_back(integer());
      skip_space();
      if (peek() == ')') break;
      if (peek() != ',') error("',' or ')' in 'shape'");
      ++pos_;
      skip_space();
      if (peek() == ')') break;  // (3,) and (3, 4, )
    }
    ++pos_;
    return shape;
  }

  std::string_view text_;
  const std::string& source_;
  std::size_t pos_ = 0;
};

std::uint32_t read_le(std::span<const std::byte> bytes, std::size_t offset, std::size_t width) {
  std::uint32_t v = 0;
  for (std::size_t i = 0; i < width; ++i)
    v |= static_cast<std::uint32_t>(bytes[offset + i]) << (8 * i);
  return v;
}

std::string shape_tuple(const Shape& shape) {
  std::string s = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(shape[i]);
  }
  return s + (shape.size() == 1 ? ",)" : ")");
}

}  // namespace

std::string descr_of(DType dtype) {
  for (const DescrEntry& e : kDescrs)
    if (e.dtype == dtype) return std::string(e.descr);
  throw InvalidArgumentError("npy: no .npy descr for dtype " + std::string(dtype_name(dtype)));
}

HostArray parse(std::span<const std::byte> bytes, const std::string& source) {
  if (bytes.size() < kMagicSize + 2 || std::memcmp(bytes.data(), kMagic, kMagicSize) != 0)
    fail(source, "it does not start with the \\x93NUMPY magic string");
  const int major = static_cast<int>(bytes[6]);
  const int minor = static_cast<int>(bytes[7]);
  if (major < 1 || major > 3 || minor != 0)
    fail(source, "unknown format version " + std::to_string(major) + "." + std::to_string(minor) +
                     " (weft reads 1.0, 2.0 and 3.0)");
  const std::size_t length_width = major == 1 ? 2 : 4;
  const std::size_t prefix = kMagicSize + 2 + length_width;
  if (bytes.size() < prefix) fail(source, "the file ends inside the header length");
  const std::size_t header_length = read_le(bytes, kMagicSize + 2, length_width);
  if (bytes.size() - prefix < header_length)
    fail(source, "the header is " + std::to_string(header_length) +
                     " bytes but the file ends after " + std::to_string(bytes.size() - prefix));
  std::string_view text(reinterpret_cast<const char*>(bytes.data() + prefix), header_length);
  const auto header = HeaderParser(text, source).parse();

  if (header.fortran_order)
    throw InvalidArgumentError(source +
                               ": Fortran-order .npy arrays are not supported; save a C-order copy "
                               "(numpy.ascontiguousarray)");
  const DType dtype = dtype_of_descr(header.descr, source);
  std::int64_t count = 1;
  for (std::int64_t d : header.shape)
    if (__builtin_mul_overflow(count, d, &count))
      fail(source, "the shape " + shape_to_string(header.shape) + " has too many elements");
  std::uint64_t data_bytes = 0;
  if (__builtin_mul_overflow(static_cast<std::uint64_t>(count), dtype_size(dtype), &data_bytes))
    fail(source, "the shape " + shape_to_string(header.shape) + " has too many elements");
  const std::size_t available = bytes.size() - prefix - header_length;
  const std::string what = std::string(dtype_name(dtype)) + shape_to_string(header.shape);
  if (available < data_bytes)
    fail(source, "truncated data: " + what + " needs " + std::to_string(data_bytes) +
                     " bytes but only " + std::to_string(available) + " follow the header");
  if (available > data_bytes)
    fail(source, std::to_string(available - data_bytes) + " unexpected bytes follow the " +
                     std::to_string(data_bytes) + " bytes of " + what + " data");

  HostArray array(dtype, header.shape);
  if (data_bytes > 0) std::memcpy(array.raw(), bytes.data() + prefix + header_length, data_bytes);
  // numpy's bools are 0 or 1; anything else would break the devices' select and logic ops.
  if (dtype == DType::Bool)
    for (std::size_t i = 0; i < array.nbytes(); ++i)
      if (array.raw()[i] != std::byte{0}) array.raw()[i] = std::byte{1};
  return array;
}

HostArray read(const std::filesystem::path& path) {
  if (std::error_code ec; std::filesystem::is_directory(path, ec))
    throw InvalidArgumentError("cannot read " + path.string() + ": it is a directory");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InvalidArgumentError("cannot open " + path.string() + ": " + std::strerror(errno));
  std::vector<char> chars((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad())
    throw InvalidArgumentError("cannot read " + path.string() + ": " + std::strerror(errno));
  return parse(std::as_bytes(std::span(chars)), path.string());
}

std::vector<std::byte> serialize(const HostArray& array) {
  std::string header = "{'descr': '" + descr_of(array.dtype()) +
                       "', 'fortran_order': False, 'shape': " + shape_tuple(array.shape()) + ", }";
  // Version 1.0 stores the header length in 16 bits; longer headers need 2.0.
  int major = 1;
  std::size_t prefix = kMagicSize + 4;
  auto padded = [&] {
    return (prefix + header.size() + 1 + kAlignment - 1) / kAlignment * kAlignment;
  };
  if (padded() - prefix > std::numeric_limits<std::uint16_t>::max()) {
    major = 2;
    prefix = kMagicSize + 6;
  }
  header.append(padded() - prefix - header.size() - 1, ' ');
  header += '\n';

  std::vector<std::byte> out;
  out.reserve(prefix + header.size() + array.nbytes());
  for (std::size_t i = 0; i < kMagicSize; ++i) out.push_back(static_cast<std::byte>(kMagic[i]));
  out.push_back(static_cast<std::byte>(major));
  out.push_back(std::byte{0});
  const std::size_t width = prefix - kMagicSize - 2;
  for (std::size_t i = 0; i < width; ++i)
    out.push_back(static_cast<std::byte>((header.size() >> (8 * i)) & 0xff));
  for (char c : header) out.push_back(static_cast<std::byte>(c));
  out.insert(out.end(), array.raw(), array.raw() + array.nbytes());
  return out;
}

void write(const std::filesystem::path& path, const HostArray& array) {
  const std::vector<std::byte> bytes = serialize(array);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out)
    throw InvalidArgumentError("cannot write " + path.string() + ": " + std::strerror(errno));
  out.write(reinterpret_cast<const char*>(bytes.data()),
            static_cast<std::streamsize>(bytes.size()));
  out.close();
  if (!out)
    throw InvalidArgumentError("cannot write " + path.string() + ": " + std::strerror(errno));
}

}  // namespace weft::npy
