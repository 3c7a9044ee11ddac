// HostArray: storage, typed views, element conversion and printing.
#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <string>

#include "support/interp_test_util.h"
#include "weft/error.h"

namespace weft {
namespace {

using namespace weft::testing;

TEST(HostArray, ZeroFilledWithDTypeSizedStorage) {
  HostArray a(DType::F64, {2, 3});
  EXPECT_EQ(a.size(), 6);
  EXPECT_EQ(a.nbytes(), 48u);
  for (double v : a.view<double>()) EXPECT_EQ(v, 0.0);
  HostArray b(DType::Bool, {5});
  EXPECT_EQ(b.nbytes(), 5u);
  HostArray s(DType::I32, {});
  EXPECT_EQ(s.size(), 1);
  EXPECT_EQ(s.nbytes(), 4u);
  EXPECT_EQ(HostArray(DType::F32, {3, 0}).nbytes(), 0u);
  EXPECT_THROW(HostArray(DType::F32, {-1}), ShapeError);
}

TEST(HostArray, TypedViewsReadAndWrite) {
  HostArray a = arr<std::int32_t>({1, 2, 3, 4}, {2, 2});
  EXPECT_EQ(a.to_vector<std::int32_t>(), (std::vector<std::int32_t>{1, 2, 3, 4}));
  a.view<std::int32_t>()[2] = 30;
  EXPECT_EQ(a.get_i64(2), 30);
  HostArray b = arr<bool>({true, false, true});
  EXPECT_EQ(b.nbytes(), 3u);
  EXPECT_EQ(std::to_integer<int>(b.raw()[0]), 1);
  EXPECT_EQ(std::to_integer<int>(b.raw()[1]), 0);
  EXPECT_TRUE(b.view<bool>()[2]);
  EXPECT_EQ(arr<std::uint32_t>({kU32Max}).to_vector<std::uint32_t>()[0], kU32Max);
}

TEST(HostArray, WrongViewThrowsDTypeError) {
  HostArray a(DType::F32, {2});
  try {
    (void)a.view<std::int32_t>();
    FAIL() << "expected DTypeError";
  } catch (const DTypeError& e) {
    EXPECT_STREQ(e.what(), "HostArray holds f32 but was viewed as i32");
  }
  const HostArray& c = a;
  EXPECT_THROW((void)c.view<double>(), DTypeError);
  EXPECT_THROW((void)arr<std::int32_t>({1}).view<bool>(), DTypeError);
  EXPECT_THROW((void)arr<bool>({true}).to_vector<std::int32_t>(), DTypeError);
}

TEST(HostArray, GetAndSetConvertBetweenDTypes) {
  HostArray i(DType::I32, {3});
  i.set_f64(0, 2.7);
  i.set_f64(1, -2.7);
  i.set_f64(2, 1e12);  // saturates
  EXPECT_EQ(i.to_vector<std::int32_t>(), (std::vector<std::int32_t>{2, -2, kI32Max}));
  HostArray u(DType::U32, {2});
  u.set_i64(0, -1);  // wraps
  u.set_i64(1, (std::int64_t{1} << 32) + 7);
  EXPECT_EQ(u.get_i64(0), 4294967295);
  EXPECT_EQ(u.get_f64(0), 4294967295.0);
  EXPECT_EQ(u.get_i64(1), 7);
  HostArray b(DType::Bool, {2});
  b.set_i64(0, 5);
  b.set_f64(1, 0.0);
  EXPECT_EQ(b.get_i64(0), 1);
  EXPECT_EQ(b.get_f64(1), 0.0);
  HostArray f(DType::F32, {1});
  f.set_f64(0, 0.1);
  EXPECT_EQ(f.get_f64(0), static_cast<double>(0.1f));
  EXPECT_EQ(f.get_i64(0), 0);
  HostArray l(DType::I64, {1});
  l.set_i64(0, kI64Min);
  EXPECT_EQ(l.get_i64(0), kI64Min);
  EXPECT_THROW(l.get_i64(1), InvalidArgumentError);
  EXPECT_THROW(l.set_f64(-1, 0), InvalidArgumentError);
}

TEST(HostArray, ToStringIsNumpyLike) {
  EXPECT_EQ(arr<std::int32_t>({1, 2, 3, 4}, {2, 2}).to_string(), "[[1, 2], [3, 4]]");
  EXPECT_EQ(arr<float>({0.5f, 3.14159265f, 1e10f, -2.0f}).to_string(), "[0.5, 3.14159, 1e+10, -2]");
  EXPECT_EQ(arr<double>({kNaN, -kInf}).to_string(), "[nan, -inf]");
  EXPECT_EQ(arr<bool>({true, false}).to_string(), "[true, false]");
  EXPECT_EQ(arr<std::uint32_t>({kU32Max}).to_string(), "[4294967295]");
  EXPECT_EQ(scalar<std::int64_t>(-7).to_string(), "-7");
  EXPECT_EQ(scalar<double>(2.5).to_string(), "2.5");
  EXPECT_EQ(HostArray(DType::F32, {0}).to_string(), "[]");
  EXPECT_EQ(HostArray(DType::I32, {2, 0}).to_string(), "[[], []]");
}

TEST(HostArray, ToStringElidesLargeArrays) {
  std::vector<std::int32_t> v(100);
  for (int k = 0; k < 100; ++k) v[k] = k;
  EXPECT_EQ(arr(v).to_string(), "[0, 1, 2, ..., 97, 98, 99]");
  EXPECT_EQ(arr(v, {10, 10}).to_string(),
            "[[0, 1, 2, ..., 7, 8, 9], [10, 11, 12, ..., 17, 18, 19], "
            "[20, 21, 22, ..., 27, 28, 29], ..., [70, 71, 72, ..., 77, 78, 79], "
            "[80, 81, 82, ..., 87, 88, 89], [90, 91, 92, ..., 97, 98, 99]]");
  EXPECT_EQ(arr(v).to_string(1000).find("..."), std::string::npos);
}
}  // namespace
}  // namespace weft
