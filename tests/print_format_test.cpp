// format_for_print against numpy's array2string (the expected strings were printed by numpy
// 1.24: `np.array2string(np.asarray(a))`).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "weft/print_format.h"

namespace weft {
namespace {

template <typename T>
HostArray arr(std::vector<T> values, Shape shape = {}) {
  if (shape.empty() && values.size() != 1) shape = {static_cast<std::int64_t>(values.size())};
  return HostArray::from<T>(shape, values);
}

TEST(PrintFormat, ScalarsLikeNumpy) {
  EXPECT_EQ(format_for_print(arr<float>({3})), "3.");
  EXPECT_EQ(format_for_print(arr<double>({3})), "3.");
  EXPECT_EQ(format_for_print(arr<float>({-0.5f})), "-0.5");
  EXPECT_EQ(format_for_print(arr<std::int32_t>({-7})), "-7");
  EXPECT_EQ(format_for_print(arr<bool>({true})), "True");
  EXPECT_EQ(format_for_print(HostArray(DType::Token, {})), "token");
}

TEST(PrintFormat, FloatArraysAlignTheirDecimalPoints) {
  EXPECT_EQ(format_for_print(arr<float>({0.5f, 1})), "[0.5 1. ]");
  EXPECT_EQ(format_for_print(arr<float>({1.5f, 10.25f})), "[ 1.5  10.25]");
  EXPECT_EQ(format_for_print(arr<float>({0.1f, 0.25f})), "[0.1  0.25]");
  EXPECT_EQ(format_for_print(arr<float>({1.0f / 3}, {1})), "[0.33333334]");
  EXPECT_EQ(format_for_print(arr<float>({0.1f}, {1})), "[0.1]");
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_EQ(format_for_print(arr<double>({nan, -inf, 1})), "[ nan -inf   1.]");
}

TEST(PrintFormat, ScientificWhereNumpySwitches) {
  EXPECT_EQ(format_for_print(arr<float>({1e10f, 1})), "[1.e+10 1.e+00]");
  EXPECT_EQ(format_for_print(arr<double>({1e-5, 1})), "[1.e-05 1.e+00]");
  EXPECT_EQ(format_for_print(arr<float>({1e10f}, {1})), "[1.e+10]");
}

TEST(PrintFormat, IntegersBooleansAndNesting) {
  EXPECT_EQ(format_for_print(arr<std::int32_t>({-1, 200})), "[ -1 200]");
  EXPECT_EQ(format_for_print(arr<bool>({true, false})), "[ True False]");
  EXPECT_EQ(format_for_print(arr<std::int64_t>({1, 2, 3, 4}, {2, 2})), "[[1 2]\n [3 4]]");
  EXPECT_EQ(format_for_print(arr<std::int32_t>({1, 2, 3, 4}, {2, 1, 2})), "[[[1 2]]\n\n [[3 4]]]");
  EXPECT_EQ(format_for_print(HostArray(DType::F32, {0})), "[]");
}

TEST(PrintFormat, LargeArraysAreElided) {
  std::vector<double> v(2000);
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<double>(i);
  EXPECT_EQ(format_for_print(arr<double>(v)),
            "[0.000e+00 1.000e+00 2.000e+00 ... 1.997e+03 1.998e+03 1.999e+03]");
  std::vector<std::int32_t> w(1001);
  for (std::size_t i = 0; i < w.size(); ++i) w[i] = static_cast<std::int32_t>(i);
  EXPECT_EQ(format_for_print(arr<std::int32_t>(w)), "[   0    1    2 ...  998  999 1000]");
}

}  // namespace
}  // namespace weft
