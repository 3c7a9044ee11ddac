#include "npy.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cctype>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <limits>
#include <optional>
#include <string_view>

#include "weft/error.h"

namespace weft::npy {

// .npy data is little-endian and is copied straight into host and device buffers.
static_assert(std::endian::native == std::endian::little, "weft's .npy code assumes little-endian");

namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr std::size_t kMagicSize = 6;
constexpr std::size_t kAlignment = 64;  // numpy pads headers so the data starts 64-aligned
constexpr std::string_view kSupported =
    "<f4, <f8, <f2, <V2 (bf16), <i4, <i8, <u4, <u8, <i2, <u2, |i1, |u1 and |b1";

struct DescrEntry {
  std::string_view descr;
  DType dtype;
};
// numpy has no bfloat16: np.save of an ml_dtypes (JAX) bfloat16 array writes the 2-byte void
// descr '<V2', so weft writes bf16 that way and reads '<V2' as bf16.
constexpr DescrEntry kDescrs[] = {{"<f4", DType::F32}, {"<f8", DType::F64}, {"<i4", DType::I32},
                                  {"<i8", DType::I64}, {"<u4", DType::U32}, {"|b1", DType::Bool},
                                  {"|u1", DType::U8},  {"|i1", DType::I8},  {"<u2", DType::U16},
                                  {"<i2", DType::I16}, {"<u8", DType::U64}, {"<f2", DType::F16},
                                  {"<V2", DType::BF16}};

[[noreturn]] void fail(const std::string& source, const std::string& what) {
  throw InvalidArgumentError(source + ": not a valid .npy file: " + what);
}

// Header text is untrusted: messages quote at most 40 characters of it, with control and
// non-ASCII bytes escaped, so a bad file cannot flood or garble the terminal.
std::string printable(std::string_view text) {
  constexpr std::size_t kMax = 40;
  std::string out;
  for (std::size_t i = 0; i < text.size() && i < kMax; ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c >= 0x20 && c < 0x7f) {
      out += static_cast<char>(c);
    } else {
      char escaped[8];
      std::snprintf(escaped, sizeof escaped, "\\x%02x", c);
      out += escaped;
    }
  }
  if (text.size() > kMax) out += "...";
  return out;
}

DType dtype_of_descr(const std::string& descr, const std::string& source) {
  for (const DescrEntry& e : kDescrs)
    if (e.descr == descr) return e.dtype;
  std::string why;
  if (!descr.empty() && descr[0] == '>')
    why = " (big-endian data; convert it with arr.astype(arr.dtype.newbyteorder('<')))";
  else if (descr == "<u1" || descr == "<i1" || descr == "|V2")
    why = " (numpy writes one-byte integers as '|u1' / '|i1' and bfloat16 as '<V2')";
  throw InvalidArgumentError(source + ": unsupported .npy dtype '" + printable(descr) + "'" + why +
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
        fail(source_, "unexpected header key '" + printable(key) + "'");
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
    std::string found =
        pos_ < text_.size() ? "'" + printable(text_.substr(pos_, 1)) + "'" : "its end";
    fail(source_, "malformed header: expected " + expected + " at offset " + std::to_string(pos_) +
                      ", found " + found);
  }

  void expect(char c) {
    skip_space();
    if (peek() != c) error(std::string("'") + c + "'");
    ++pos_;
  }

  void check_once(bool& seen, const std::string& key) const {
    if (seen) fail(source_, "the header repeats the key '" + printable(key) + "'");
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

std::string shape_tuple(const Shape& shape) {
  std::string s = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(shape[i]);
  }
  return s + (shape.size() == 1 ? ",)" : ")");
}

// The machine's physical memory, or 0 when unknown: no array larger than it is allocated.
std::uint64_t physical_memory_bytes() {
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page_size = sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page_size <= 0) return 0;
  std::uint64_t bytes = 0;
  if (__builtin_mul_overflow(static_cast<std::uint64_t>(pages),
                             static_cast<std::uint64_t>(page_size), &bytes))
    return std::numeric_limits<std::uint64_t>::max();
  return bytes;
}

}  // namespace

// Where the bytes come from: memory, a regular file (size known) or a pipe or device file
// (size unknown until it ends).
class Reader::Input {
 public:
  virtual ~Input() = default;
  // Reads up to `n` bytes; fewer only at the end of the input.
  virtual std::size_t read(std::byte* out, std::size_t n) = 0;
  // The total size when known in advance.
  virtual std::optional<std::uint64_t> size() const = 0;
};

namespace {

class MemoryInput final : public Reader::Input {
 public:
  MemoryInput(std::span<const std::byte> bytes, bool as_stream)
      : bytes_(bytes), as_stream_(as_stream) {}
  std::size_t read(std::byte* out, std::size_t n) override {
    const std::size_t count = std::min(n, bytes_.size() - pos_);
    if (count > 0) std::memcpy(out, bytes_.data() + pos_, count);
    pos_ += count;
    return count;
  }
  std::optional<std::uint64_t> size() const override {
    if (as_stream_) return std::nullopt;
    return bytes_.size();
  }

 private:
  std::span<const std::byte> bytes_;
  bool as_stream_;
  std::size_t pos_ = 0;
};

class FileInput final : public Reader::Input {
 public:
  explicit FileInput(const std::filesystem::path& path) : path_(path.string()) {
    fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd_ < 0) {
      const int error = errno;
      throw InvalidArgumentError("cannot open " + path_ + ": " + std::strerror(error));
    }
    struct stat st {};
    if (::fstat(fd_, &st) != 0) {
      const int error = errno;
      ::close(fd_);
      throw InvalidArgumentError("cannot read " + path_ + ": " + std::strerror(error));
    }
    if (S_ISDIR(st.st_mode)) {
      ::close(fd_);
      throw InvalidArgumentError("cannot read " + path_ + ": it is a directory");
    }
    // Pipes, sockets and device files (/dev/zero) have no size to check against: they are
    // read for exactly what the header asks, never to their end.
    if (S_ISREG(st.st_mode)) size_ = static_cast<std::uint64_t>(st.st_size);
  }
  ~FileInput() override { ::close(fd_); }
  FileInput(const FileInput&) = delete;
  FileInput& operator=(const FileInput&) = delete;

  std::size_t read(std::byte* out, std::size_t n) override {
    std::size_t done = 0;
    while (done < n) {
      // At most 1 GiB per call: Linux reads at most about 2 GiB at once anyway.
      const std::size_t chunk = std::min<std::size_t>(n - done, std::size_t{1} << 30);
      const ssize_t got = ::read(fd_, out + done, chunk);
      if (got < 0) {
        const int error = errno;
        if (error == EINTR) continue;
        throw InvalidArgumentError("cannot read " + path_ + ": " + std::strerror(error));
      }
      if (got == 0) break;
      done += static_cast<std::size_t>(got);
    }
    return done;
  }
  std::optional<std::uint64_t> size() const override { return size_; }

 private:
  std::string path_;
  int fd_ = -1;
  std::optional<std::uint64_t> size_;
};

std::uint32_t read_le(const std::byte* bytes, std::size_t width) {
  std::uint32_t v = 0;
  for (std::size_t i = 0; i < width; ++i) v |= static_cast<std::uint32_t>(bytes[i]) << (8 * i);
  return v;
}

// Reads and checks everything before the data. Reads at most the prefix and the header length
// (bounded by kMaxHeaderBytes and, when known, the input's size), never more.
Header read_header(Reader::Input& input, const std::string& source) {
  const std::optional<std::uint64_t> size = input.size();
  std::byte prefix[kMagicSize + 2 + 4];
  std::size_t got = input.read(prefix, kMagicSize + 2);
  if (got < kMagicSize + 2 || std::memcmp(prefix, kMagic, kMagicSize) != 0)
    fail(source, "it does not start with the \\x93NUMPY magic string");
  const int major = static_cast<int>(prefix[6]);
  const int minor = static_cast<int>(prefix[7]);
  if (major < 1 || major > 3 || minor != 0)
    fail(source, "unknown format version " + std::to_string(major) + "." + std::to_string(minor) +
                     " (weft reads 1.0, 2.0 and 3.0)");
  const std::size_t length_width = major == 1 ? 2 : 4;
  const std::size_t prefix_size = kMagicSize + 2 + length_width;
  got = input.read(prefix + kMagicSize + 2, length_width);
  if (got < length_width) fail(source, "the file ends inside the header length");
  const std::uint32_t header_length = read_le(prefix + kMagicSize + 2, length_width);
  const std::uint64_t after_prefix = size && *size > prefix_size ? *size - prefix_size : 0;
  if (size && after_prefix < header_length)
    fail(source, "the header is " + std::to_string(header_length) +
                     " bytes but the file ends after " + std::to_string(after_prefix));
  if (header_length > kMaxHeaderBytes)
    fail(source, "the header is " + std::to_string(header_length) + " bytes, more than the " +
                     std::to_string(kMaxHeaderBytes) + " weft accepts");
  std::string text(header_length, '\0');
  got = input.read(reinterpret_cast<std::byte*>(text.data()), header_length);
  if (got < header_length)
    fail(source, "the header is " + std::to_string(header_length) +
                     " bytes but the file ends after " + std::to_string(got));
  const auto parsed = HeaderParser(text, source).parse();

  if (parsed.fortran_order)
    throw InvalidArgumentError(source +
                               ": Fortran-order .npy arrays are not supported; save a C-order copy "
                               "(numpy.ascontiguousarray)");
  Header header;
  header.dtype = dtype_of_descr(parsed.descr, source);
  header.shape = parsed.shape;
  header.major_version = major;
  header.data_offset = prefix_size + header_length;
  std::int64_t count = 1;
  for (std::int64_t d : header.shape)
    if (__builtin_mul_overflow(count, d, &count))
      fail(source, "the shape " + shape_to_string(header.shape) + " has too many elements");
  if (__builtin_mul_overflow(static_cast<std::uint64_t>(count), dtype_size(header.dtype),
                             &header.data_bytes) ||
      header.data_bytes > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
    fail(source, "the shape " + shape_to_string(header.shape) + " has too many elements");
  return header;
}

std::string type_of(const Header& h) {
  return std::string(dtype_name(h.dtype)) + shape_to_string(h.shape);
}

}  // namespace

std::string descr_of(DType dtype) {
  for (const DescrEntry& e : kDescrs)
    if (e.dtype == dtype) return std::string(e.descr);
  throw InvalidArgumentError("npy: no .npy descr for dtype " + std::string(dtype_name(dtype)));
}

Reader::Reader(const std::filesystem::path& path)
    : input_(std::make_unique<FileInput>(path)), source_(path.string()) {
  header_ = read_header(*input_, source_);
}

Reader::Reader(std::span<const std::byte> bytes, std::string source, bool as_stream)
    : input_(std::make_unique<MemoryInput>(bytes, as_stream)), source_(std::move(source)) {
  header_ = read_header(*input_, source_);
}

Reader::~Reader() = default;
Reader::Reader(Reader&&) noexcept = default;
Reader& Reader::operator=(Reader&&) noexcept = default;

HostArray Reader::read_data() {
  if (!input_) throw InvalidArgumentError(source_ + ": the data was read already");
  const Header& h = header_;
  if (const std::optional<std::uint64_t> size = input_->size()) {
    const std::uint64_t available = *size > h.data_offset ? *size - h.data_offset : 0;
    if (available < h.data_bytes)
      fail(source_, "truncated data: " + type_of(h) + " needs " + std::to_string(h.data_bytes) +
                        " bytes but only " + std::to_string(available) + " follow the header");
    if (available > h.data_bytes)
      fail(source_, std::to_string(available - h.data_bytes) + " unexpected bytes follow the " +
                        std::to_string(h.data_bytes) + " bytes of " + type_of(h) + " data");
  }
  // From a pipe nothing bounds the size but the header: refuse what no allocation could hold
  // rather than fail inside the allocator.
  if (const std::uint64_t memory = physical_memory_bytes(); memory > 0 && h.data_bytes > memory)
    throw InvalidArgumentError(
        source_ + ": the " + type_of(h) + " data is " + std::to_string(h.data_bytes) +
        " bytes, more than this machine's memory (" + std::to_string(memory) + " bytes)");

  HostArray array(h.dtype, h.shape);
  const std::size_t got = h.data_bytes > 0 ? input_->read(array.raw(), h.data_bytes) : 0;
  const std::unique_ptr<Input> done = std::move(input_);  // closes the file
  if (got < h.data_bytes)
    fail(source_, "truncated data: " + type_of(h) + " needs " + std::to_string(h.data_bytes) +
                      " bytes but the input ended after " + std::to_string(got));
  // numpy's bools are 0 or 1; anything else would break the devices' select and logic ops.
  if (h.dtype == DType::Bool)
    for (std::size_t i = 0; i < array.nbytes(); ++i)
      if (array.raw()[i] != std::byte{0}) array.raw()[i] = std::byte{1};
  return array;
}

HostArray parse(std::span<const std::byte> bytes, const std::string& source) {
  return Reader(bytes, source).read_data();
}

HostArray read(const std::filesystem::path& path) {
  return Reader(path).read_data();
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
