// The .npy reader and writer. numpy is not available offline, so the fixtures are built byte
// by byte from the format specification (numpy/lib/format.py): magic, version, header length,
// a Python dict literal padded with spaces and ended by '\n', then the raw C-order data.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "npy.h"
#include "weft/error.h"

namespace weft {
namespace {

using Bytes = std::vector<std::byte>;

void append(Bytes& out, const void* data, std::size_t n) {
  const auto* p = static_cast<const std::byte*>(data);
  out.insert(out.end(), p, p + n);
}

// A .npy file with the given version and header text; the header is padded per the spec
// unless `pad` is false, and `data` follows it verbatim.
Bytes npy_file(int major, std::string header, const Bytes& data, bool pad = true) {
  const std::size_t prefix = major == 1 ? 10 : 12;
  if (pad) {
    while ((prefix + header.size() + 1) % 64 != 0) header += ' ';
    header += '\n';
  }
  Bytes out;
  append(out, "\x93NUMPY", 6);
  out.push_back(std::byte(major));
  out.push_back(std::byte{0});
  const std::uint32_t length = static_cast<std::uint32_t>(header.size());
  append(out, &length, major == 1 ? 2 : 4);  // little-endian
  append(out, header.data(), header.size());
  out.insert(out.end(), data.begin(), data.end());
  return out;
}

template <typename T>
Bytes data_of(const std::vector<T>& values) {
  Bytes out;
  append(out, values.data(), values.size() * sizeof(T));
  return out;
}

HostArray parse(const Bytes& bytes) {
  return npy::parse(bytes, "fixture.npy");
}

// The message of the InvalidArgumentError that parsing `bytes` throws.
std::string parse_error(const Bytes& bytes) {
  try {
    parse(bytes);
  } catch (const InvalidArgumentError& e) {
    return e.what();
  }
  ADD_FAILURE() << "parsing did not throw InvalidArgumentError";
  return "";
}

// The message of the InvalidArgumentError that reading `bytes` as a stream (a pipe: size
// unknown in advance) throws.
std::string stream_error(const Bytes& bytes) {
  try {
    npy::Reader(bytes, "pipe.npy", /*as_stream=*/true).read_data();
  } catch (const InvalidArgumentError& e) {
    return e.what();
  }
  ADD_FAILURE() << "reading the stream did not throw InvalidArgumentError";
  return "";
}

bool same(const HostArray& a, const HostArray& b) {
  return a.dtype() == b.dtype() && a.shape() == b.shape() && a.nbytes() == b.nbytes() &&
         (a.nbytes() == 0 || std::memcmp(a.raw(), b.raw(), a.nbytes()) == 0);
}

TEST(NpyParse, ReadsAVersion1Float32Matrix) {
  const HostArray a =
      parse(npy_file(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }",
                     data_of<float>({1, 2, 3, 4, 5, 6.5f})));
  EXPECT_EQ(a.dtype(), DType::F32);
  EXPECT_EQ(a.shape(), (Shape{2, 3}));
  EXPECT_EQ(a.to_vector<float>(), (std::vector<float>{1, 2, 3, 4, 5, 6.5f}));
}

TEST(NpyParse, ReadsEveryDType) {
  EXPECT_EQ(parse(npy_file(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (2,), }",
                           data_of<double>({0.25, -1e300})))
                .to_vector<double>(),
            (std::vector<double>{0.25, -1e300}));
  EXPECT_EQ(parse(npy_file(1, "{'descr': '<i4', 'fortran_order': False, 'shape': (3,), }",
                           data_of<std::int32_t>({-7, 0, 2147483647})))
                .to_vector<std::int32_t>(),
            (std::vector<std::int32_t>{-7, 0, 2147483647}));
  EXPECT_EQ(parse(npy_file(1, "{'descr': '<i8', 'fortran_order': False, 'shape': (1,), }",
                           data_of<std::int64_t>({-(std::int64_t{1} << 40)})))
                .to_vector<std::int64_t>(),
            (std::vector<std::int64_t>{-(std::int64_t{1} << 40)}));
  EXPECT_EQ(parse(npy_file(1, "{'descr': '<u4', 'fortran_order': False, 'shape': (2,), }",
                           data_of<std::uint32_t>({4000000000u, 1})))
                .to_vector<std::uint32_t>(),
            (std::vector<std::uint32_t>{4000000000u, 1}));
  const HostArray b = parse(npy_file(1, "{'descr': '|b1', 'fortran_order': False, 'shape': (3,), }",
                                     data_of<std::uint8_t>({1, 0, 1})));
  EXPECT_EQ(b.dtype(), DType::Bool);
  EXPECT_EQ(b.get_i64(0), 1);
  EXPECT_EQ(b.get_i64(1), 0);
}

TEST(NpyParse, NormalisesBoolBytesToZeroOrOne) {
  const HostArray b = parse(npy_file(1, "{'descr': '|b1', 'fortran_order': False, 'shape': (2,), }",
                                     data_of<std::uint8_t>({0, 7})));
  EXPECT_EQ(static_cast<int>(b.raw()[1]), 1);
}

TEST(NpyParse, ReadsScalarsEmptyArraysAndHighRanks) {
  const HostArray s = parse(npy_file(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (), }",
                                     data_of<float>({3.5f})));
  EXPECT_TRUE(s.shape().empty());
  EXPECT_EQ(s.get_f64(0), 3.5);
  const HostArray e =
      parse(npy_file(1, "{'descr': '<i4', 'fortran_order': False, 'shape': (2, 0, 3), }", {}));
  EXPECT_EQ(e.shape(), (Shape{2, 0, 3}));
  EXPECT_EQ(e.size(), 0);
  std::vector<std::int64_t> values(2 * 1 * 2 * 1 * 3);
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<std::int64_t>(i);
  const HostArray r = parse(npy_file(
      1, "{'descr': '<i8', 'fortran_order': False, 'shape': (2, 1, 2, 1, 3), }", data_of(values)));
  EXPECT_EQ(r.shape(), (Shape{2, 1, 2, 1, 3}));
  EXPECT_EQ(r.to_vector<std::int64_t>(), values);
}

TEST(NpyParse, ReadsVersions2And3) {
  for (int major : {2, 3}) {
    const HostArray a = parse(npy_file(
        major, "{'descr': '<i4', 'fortran_order': False, 'shape': (2,), }", data_of<int>({5, 6})));
    EXPECT_EQ(a.to_vector<std::int32_t>(), (std::vector<std::int32_t>{5, 6})) << major;
  }
}

TEST(NpyParse, AcceptsAnyKeyOrderQuotesAndOldLongLiterals) {
  // Python 2 era numpy wrote (3L,); keys may come in any order and either quote style.
  const HostArray a =
      parse(npy_file(1, "{\"shape\": (3L,), \"fortran_order\": False, \"descr\": \"<f4\"}",
                     data_of<float>({1, 2, 3})));
  EXPECT_EQ(a.shape(), (Shape{3}));
  // No padding at all, and no trailing newline: still a well-formed dict.
  const HostArray b = parse(npy_file(1, "{'descr':'<f4','fortran_order':False,'shape':(1,)}",
                                     data_of<float>({9}), false));
  EXPECT_EQ(b.get_f64(0), 9.0);
}

TEST(NpyParse, RejectsBadMagicAndVersions) {
  Bytes bad =
      npy_file(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (), }", data_of<float>({1}));
  bad[1] = std::byte{'X'};
  {
    const std::string m = parse_error(bad);
    EXPECT_NE(m.find("fixture.npy"), std::string::npos) << m;
    EXPECT_NE(m.find("magic"), std::string::npos) << m;
  }
  EXPECT_NE(parse_error(Bytes{std::byte{0x93}}).find("magic"), std::string::npos);
  EXPECT_NE(parse_error(npy_file(4, "{}", {})).find("version 4.0"), std::string::npos);
  Bytes minor =
      npy_file(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (), }", data_of<float>({1}));
  minor[7] = std::byte{1};
  EXPECT_NE(parse_error(minor).find("version 1.1"), std::string::npos);
}

TEST(NpyParse, RejectsTruncatedHeaders) {
  Bytes file =
      npy_file(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (), }", data_of<float>({1}));
  EXPECT_NE(parse_error(Bytes(file.begin(), file.begin() + 9)).find("header length"),
            std::string::npos);
  EXPECT_NE(parse_error(Bytes(file.begin(), file.begin() + 40)).find("the header is 118 bytes"),
            std::string::npos);
}

TEST(NpyParse, RejectsUnsupportedDTypesWithTheReason) {
  auto with_descr = [](const std::string& descr) {
    return npy_file(1, "{'descr': '" + descr + "', 'fortran_order': False, 'shape': (1,), }",
                    Bytes(8, std::byte{0}));
  };
  std::string m = parse_error(with_descr(">f4"));
  EXPECT_NE(m.find("unsupported .npy dtype '>f4'"), std::string::npos) << m;
  EXPECT_NE(m.find("big-endian"), std::string::npos) << m;
  m = parse_error(with_descr("<u1"));
  EXPECT_NE(m.find("'|u1'"), std::string::npos) << m;
  EXPECT_NE(m.find("<f4, <f8, <f2, <V2 (bf16), <i4, <i8, <u4, <u8, <i2, <u2, |i1, |u1 and |b1"),
            std::string::npos)
      << m;
  EXPECT_NE(parse_error(with_descr("<c8")).find("'<c8'"), std::string::npos);
  EXPECT_NE(parse_error(with_descr("<V4")).find("'<V4'"), std::string::npos);
  EXPECT_NE(parse_error(with_descr("|O")).find("'|O'"), std::string::npos);
  m = parse_error(npy_file(1, "{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (1,), }",
                           data_of<float>({1})));
  EXPECT_NE(m.find("structured"), std::string::npos) << m;
}

TEST(NpyParse, RejectsFortranOrder) {
  const std::string m =
      parse_error(npy_file(1, "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 2), }",
                           data_of<float>({1, 2, 3, 4})));
  EXPECT_NE(m.find("Fortran-order"), std::string::npos) << m;
  EXPECT_NE(m.find("fixture.npy"), std::string::npos) << m;
}

TEST(NpyParse, RejectsMalformedDictionaries) {
  const Bytes four = data_of<float>({1});
  const struct {
    std::string header, expected;
  } cases[] = {
      {"{'descr': '<f4', 'shape': (1,), }", "no 'fortran_order' key"},
      {"{'fortran_order': False, 'shape': (1,), }", "no 'descr' key"},
      {"{'descr': '<f4', 'fortran_order': False, }", "no 'shape' key"},
      {"{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (1,), }",
       "repeats the key 'descr'"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (1,), 'extra': 1}",
       "unexpected header key 'extra'"},
      {"{'descr' '<f4', 'fortran_order': False, 'shape': (1,), }", "expected ':'"},
      {"{'descr': '<f4', 'fortran_order': Maybe, 'shape': (1,), }", "True or False"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (-1,), }", "non-negative integer"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (1; 2), }", "',' or ')'"},
      {"{'descr': '<f4, 'fortran_order': False, 'shape': (1,), }", "expected"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (1,), } x", "end of the header"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (1,)", "',' or '}'"},
      {"['descr']", "expected '{'"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,), }",
       "does not fit in 64 bits"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296), }",
       "too many elements"},
  };
  for (const auto& c : cases) {
    const std::string m = parse_error(npy_file(1, c.header, four));
    EXPECT_NE(m.find(c.expected), std::string::npos) << c.header << "\n -> " << m;
    EXPECT_NE(m.find("fixture.npy: not a valid .npy file"), std::string::npos) << m;
  }
}

TEST(NpyParse, RejectsTruncatedAndOverlongData) {
  const std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2), }";
  std::string m = parse_error(npy_file(1, header, data_of<float>({1, 2, 3})));
  EXPECT_NE(m.find("truncated data: f32[2,2] needs 16 bytes but only 12 follow"), std::string::npos)
      << m;
  m = parse_error(npy_file(1, header, data_of<float>({1, 2, 3, 4, 5})));
  EXPECT_NE(m.find("4 unexpected bytes"), std::string::npos) << m;
  // A huge shape with no data must fail on the size check, not try to allocate.
  m = parse_error(
      npy_file(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (1000000000000,), }", {}));
  EXPECT_NE(m.find("truncated data"), std::string::npos) << m;
}

TEST(NpyReader, ReadsTheHeaderBeforeAnyData) {
  // A header promising 8 TB with no data behind it: the header alone is readable and checked,
  // and reading the data fails on the size check, never in an allocation.
  const Bytes file =
      npy_file(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (1000000, 1000000), }", {});
  npy::Reader reader(file, "huge.npy");
  EXPECT_EQ(reader.header().dtype, DType::F64);
  EXPECT_EQ(reader.header().shape, (Shape{1000000, 1000000}));
  EXPECT_EQ(reader.header().data_bytes, 8000000000000u);
  EXPECT_EQ(reader.header().data_offset, 128u);
  EXPECT_EQ(reader.header().major_version, 1);
  try {
    reader.read_data();
    FAIL() << "read_data did not throw";
  } catch (const InvalidArgumentError& e) {
    EXPECT_NE(std::string(e.what()).find("huge.npy: not a valid .npy file: truncated data: "
                                         "f64[1000000,1000000] needs 8000000000000 bytes but "
                                         "only 0 follow the header"),
              std::string::npos)
        << e.what();
  }
}

TEST(NpyReader, StreamsReadExactlyTheDataTheShapeNeeds) {
  const std::string header = "{'descr': '<i4', 'fortran_order': False, 'shape': (3,), }";
  // Whatever follows the data in a pipe is left unread, not an error: a pipe has no end to
  // check against, and reading on could never stop (/dev/zero).
  Bytes more = npy_file(1, header, data_of<std::int32_t>({7, 8, 9, 10, 11}));
  EXPECT_EQ(npy::Reader(more, "pipe.npy", true).read_data().to_vector<std::int32_t>(),
            (std::vector<std::int32_t>{7, 8, 9}));
  // A pipe that ends early is reported with what arrived.
  const std::string m = stream_error(npy_file(1, header, data_of<std::int32_t>({7, 8})));
  EXPECT_NE(m.find("pipe.npy: not a valid .npy file: truncated data: i32[3] needs 12 bytes but "
                   "the input ended after 8"),
            std::string::npos)
      << m;
  // Ending inside the header is a header error, for streams as for files.
  const Bytes file = npy_file(1, header, data_of<std::int32_t>({1, 2, 3}));
  EXPECT_NE(stream_error(Bytes(file.begin(), file.begin() + 30)).find("the file ends after 20"),
            std::string::npos);
  EXPECT_NE(stream_error(Bytes(file.begin(), file.begin() + 9)).find("header length"),
            std::string::npos);
}

TEST(NpyReader, BoundsTheHeaderLength) {
  // Version 2.0 has a 32-bit header length: 4 GiB must not be allocated on its word.
  Bytes file;
  append(file, "\x93NUMPY\x02\x00\xff\xff\xff\xff{}", 14);
  std::string m = stream_error(file);
  EXPECT_NE(m.find("the header is 4294967295 bytes, more than the 1048576 weft accepts"),
            std::string::npos)
      << m;
  m = parse_error(file);
  EXPECT_NE(m.find("the header is 4294967295 bytes but the file ends after 2"), std::string::npos)
      << m;
}

TEST(NpyReader, RefusesDataLargerThanTheMachineBeforeAllocating) {
  // From a pipe only the header bounds the data: 8 TB is refused up front.
  const std::string m = stream_error(
      npy_file(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (1000000000000,), }", {}));
  EXPECT_NE(m.find("pipe.npy: the f64[1000000000000] data is 8000000000000 bytes, more than this "
                   "machine's memory"),
            std::string::npos)
      << m;
  // Element counts and byte sizes beyond 64 bits are malformed, not wrapped.
  EXPECT_NE(parse_error(npy_file(1,
                                 "{'descr': '<f8', 'fortran_order': False, 'shape': "
                                 "(4611686018427387904, 4), }",
                                 {}))
                .find("too many elements"),
            std::string::npos);
  EXPECT_NE(
      parse_error(
          npy_file(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (2305843009213693952,), }",
                   {}))
          .find("too many elements"),
      std::string::npos);
}

TEST(NpyReader, QuotesHostileHeaderTextSafely) {
  std::string descr(500, 'A');
  descr[0] = '\x01';
  const std::string m = parse_error(
      npy_file(1, "{'descr': '" + descr + "', 'fortran_order': False, 'shape': (1,), }", Bytes(4)));
  EXPECT_NE(m.find("unsupported .npy dtype '\\x01AAA"), std::string::npos) << m;
  EXPECT_NE(m.find("AAA...'"), std::string::npos) << m;
  EXPECT_LT(m.size(), 300u) << m;
  const std::string control =
      parse_error(npy_file(1, "{'descr': '<f4', 'fortran_order': \x07, 'shape': (1,), }", {}));
  EXPECT_NE(control.find("found '\\x07'"), std::string::npos) << control;
}

TEST(NpySerialize, WritesTheSpecifiedLayout) {
  const HostArray a = HostArray::from<float>({2, 3}, {1, 2, 3, 4, 5, 6});
  const Bytes bytes = npy::serialize(a);
  ASSERT_GE(bytes.size(), 10u);
  EXPECT_EQ(std::memcmp(bytes.data(), "\x93NUMPY\x01\x00", 8), 0);
  const std::size_t header_length =
      static_cast<std::size_t>(bytes[8]) | static_cast<std::size_t>(bytes[9]) << 8;
  const std::size_t data_start = 10 + header_length;
  EXPECT_EQ(data_start % 64, 0u);
  const std::string header(reinterpret_cast<const char*>(bytes.data()) + 10, header_length);
  EXPECT_EQ(header.rfind("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", 0), 0u)
      << header;
  EXPECT_EQ(header.back(), '\n');
  ASSERT_EQ(bytes.size(), data_start + 24);
  EXPECT_EQ(std::memcmp(bytes.data() + data_start, a.raw(), 24), 0);
}

TEST(NpySerialize, OneDimensionalShapesKeepTheTupleComma) {
  const Bytes bytes = npy::serialize(HostArray::from<std::int32_t>({3}, {1, 2, 3}));
  const std::string text(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  EXPECT_NE(text.find("'shape': (3,)"), std::string::npos);
  const Bytes scalar = npy::serialize(HostArray(DType::F64, {}));
  const std::string scalar_text(reinterpret_cast<const char*>(scalar.data()), scalar.size());
  EXPECT_NE(scalar_text.find("'descr': '<f8'"), std::string::npos);
  EXPECT_NE(scalar_text.find("'shape': ()"), std::string::npos);
}

TEST(NpyRoundTrip, EveryDTypeAndRank) {
  const std::vector<Shape> shapes = {
      {}, {0}, {5}, {2, 3}, {2, 0, 4}, {2, 1, 3, 2}, {1, 1, 1, 1, 2}};
  for (DType dtype : kAllDTypes) {
    for (const Shape& shape : shapes) {
      HostArray a(dtype, shape);
      for (std::int64_t i = 0; i < a.size(); ++i)
        a.set_f64(i, static_cast<double>(i % 3) - 0.5 * i);
      const HostArray b = parse(npy::serialize(a));
      EXPECT_TRUE(same(a, b)) << dtype_name(dtype) << shape_to_string(shape);
    }
  }
}

TEST(NpyRoundTrip, LongHeadersSwitchToVersion2) {
  // 30000 axes of size 1 print as a header longer than version 1.0's 65535-byte limit.
  const HostArray a(DType::I32, Shape(30000, 1));
  const Bytes bytes = npy::serialize(a);
  EXPECT_EQ(static_cast<int>(bytes[6]), 2);
  EXPECT_TRUE(same(a, parse(bytes)));
}

TEST(NpyFiles, WriteThenReadAndNameMissingFiles) {
  const auto dir = std::filesystem::path(::testing::TempDir()) / "weft_npy_test";
  std::filesystem::create_directories(dir);
  const HostArray a = HostArray::from<double>({2, 2}, {1.5, -2, 3, 1e-300});
  npy::write(dir / "a.npy", a);
  EXPECT_TRUE(same(a, npy::read(dir / "a.npy")));

  const auto missing = dir / "missing.npy";
  try {
    npy::read(missing);
    FAIL() << "reading a missing file did not throw";
  } catch (const InvalidArgumentError& e) {
    EXPECT_NE(std::string(e.what()).find("cannot open " + missing.string()), std::string::npos)
        << e.what();
  }
  // A file's errors name its path.
  std::ofstream(dir / "junk.npy") << "not numpy";
  try {
    npy::read(dir / "junk.npy");
    FAIL() << "reading junk did not throw";
  } catch (const InvalidArgumentError& e) {
    EXPECT_NE(std::string(e.what()).find((dir / "junk.npy").string() + ": not a valid .npy file"),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(npy::write(dir / "no_such_dir" / "x.npy", a), InvalidArgumentError);
  try {
    npy::read(dir);
    FAIL() << "reading a directory did not throw";
  } catch (const InvalidArgumentError& e) {
    EXPECT_NE(std::string(e.what()).find("it is a directory"), std::string::npos) << e.what();
  }
}

TEST(NpyFiles, DeviceFilesFailOnTheirFirstBytes) {
  // /dev/zero never ends: only the 8 bytes of magic and version are read.
  try {
    npy::Reader reader(std::filesystem::path("/dev/zero"));
    FAIL() << "/dev/zero was accepted";
  } catch (const InvalidArgumentError& e) {
    EXPECT_NE(std::string(e.what()).find("/dev/zero: not a valid .npy file: it does not start "
                                         "with the \\x93NUMPY magic string"),
              std::string::npos)
        << e.what();
  }
}

TEST(NpyFiles, ReadsFromAPipeAndReportsOneThatEndsEarly) {
  const auto dir = std::filesystem::path(::testing::TempDir()) / "weft_npy_test_fifo";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const auto fifo = dir / "x.npy";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  const Bytes whole = npy::serialize(HostArray::from<float>({4}, {1, 2, 3, 4}));
  auto feed = [&](std::size_t bytes) {
    return std::thread([&fifo, &whole, bytes] {
      std::ofstream out(fifo, std::ios::binary);  // waits for the reader to open the pipe
      out.write(reinterpret_cast<const char*>(whole.data()), static_cast<std::streamsize>(bytes));
    });
  };
  std::thread writer = feed(whole.size());
  const HostArray a = npy::read(fifo);
  writer.join();
  EXPECT_EQ(a.to_vector<float>(), (std::vector<float>{1, 2, 3, 4}));

  writer = feed(whole.size() - 6);
  try {
    npy::read(fifo);
    ADD_FAILURE() << "a short pipe was accepted";
  } catch (const InvalidArgumentError& e) {
    EXPECT_NE(std::string(e.what()).find(fifo.string() +
                                         ": not a valid .npy file: truncated data: f32[4] needs "
                                         "16 bytes but the input ended after 10"),
              std::string::npos)
        << e.what();
  }
  writer.join();
}

}  // namespace
}  // namespace weft

// ---- dtypes: the narrow and half-precision ones, in files numpy wrote ------------------------

namespace weft::dtype_files {

using Bytes = std::vector<std::byte>;

Bytes file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  Bytes out(text.size());
  std::memcpy(out.data(), text.data(), text.size());
  return out;
}

TEST(NpyDTypes, ReadsWhatNumpyWroteAndWritesItBack) {
  const std::string dir = WEFT_DTYPES_ORACLE_DIR;
  std::ifstream index_file(dir + "/npy.json");
  const nlohmann::json index = nlohmann::json::parse(index_file);
  const std::map<std::string, std::string> descr = {{"u8", "|u1"},  {"i8", "|i1"},  {"u16", "<u2"},
                                                    {"i16", "<i2"}, {"u64", "<u8"}, {"f16", "<f2"},
                                                    {"bf16", "<V2"}};
  for (const auto& [name, spec] : index.items()) {
    SCOPED_TRACE(name);
    const Bytes numpy_bytes = file_bytes(dir + "/" + name + ".npy");
    const HostArray a = npy::parse(numpy_bytes, name + ".npy");
    ASSERT_EQ(dtype_name(a.dtype()), name);
    ASSERT_EQ(a.shape(), spec.at("shape").get<Shape>());
    for (std::int64_t i = 0; i < a.size(); ++i) {
      const nlohmann::json& v = spec.at("values").at(static_cast<std::size_t>(i));
      if (is_float(a.dtype()))
        EXPECT_EQ(a.get_f64(i), v.get<double>()) << "element " << i;
      else if (v.is_number_unsigned())
        EXPECT_EQ(static_cast<std::uint64_t>(a.get_i64(i)), v.get<std::uint64_t>());
      else
        EXPECT_EQ(a.get_i64(i), v.get<std::int64_t>());
    }
    EXPECT_EQ(npy::descr_of(a.dtype()), descr.at(name));
    const Bytes written = npy::serialize(a);
    const HostArray back = npy::parse(written, "written");
    EXPECT_EQ(back.dtype(), a.dtype());
    ASSERT_EQ(back.nbytes(), a.nbytes());
    EXPECT_EQ(std::memcmp(back.raw(), a.raw(), a.nbytes()), 0);
    // The data that follows numpy's header is the array's bytes, as written.
    EXPECT_EQ(
        std::memcmp(numpy_bytes.data() + (numpy_bytes.size() - a.nbytes()), a.raw(), a.nbytes()),
        0);
  }
}

}  // namespace weft::dtype_files
