// Arrays and jit across two devices (two PoCL devices: CTest runs this with
// POCL_DEVICES="pthread pthread").
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>

#include "support/test_devices.h"
#include "weft/weft.h"

namespace weft {
namespace {

class TwoDevices : public ::testing::Test {
 protected:
  void SetUp() override { WEFT_SKIP_WITHOUT_TWO_DEVICES(); }
  // The pair of devices the tests run on (support/test_devices.h).
  Device& d0() { return *testing::two_devices().at(0); }
  Device& d1() { return *testing::two_devices().at(1); }
};

TEST_F(TwoDevices, DevicePutMovesDataAndOpsFollowTheirOperands) {
  Array a = Array::from_vector<float>({4}, {1, 2, 3, 4}, &d0());
  Array b = device_put(a, d1());
  EXPECT_EQ(&b.device(), &d1());
  EXPECT_EQ(b.to_vector<float>(), (std::vector<float>{1, 2, 3, 4}));
  Array c = np::exp(b) + 1.0;  // eager ops run where their operands live
  EXPECT_EQ(&c.device(), &d1());
  EXPECT_NEAR(c.to_vector<float>()[3], std::exp(4.0f) + 1.0f, 1e-4);
}

TEST_F(TwoDevices, JitRunsOnTheArgumentsDeviceAndRetracesPerDevice) {
  auto f = jit([](const Array& x) { return np::sum(x * x); });
  Array on0 = Array::from_vector<float>({3}, {1, 2, 3}, &d0());
  Array on1 = device_put(on0, d1());
  Array r0 = f(on0), r1 = f(on1);
  EXPECT_EQ(&r0.device(), &d0());
  EXPECT_EQ(&r1.device(), &d1());
  EXPECT_EQ(r0.item<float>(), 14.0f);
  EXPECT_EQ(r1.item<float>(), 14.0f);
  EXPECT_EQ(f.compile_count(), 2);  // one executable per device
}

TEST_F(TwoDevices, MixingDevicesIsAClearError) {
  Array a = Array::from_vector<float>({2}, {1, 2}, &d0());
  Array b = Array::from_vector<float>({2}, {3, 4}, &d1());
  try {
    (void)(a + b);
    FAIL() << "no error";
  } catch (const InvalidArgumentError& e) {
    EXPECT_NE(std::string(e.what()).find("device_put"), std::string::npos) << e.what();
  }
  auto f = jit([](const Array& x, const Array& y) { return x + y; });
  EXPECT_THROW(f(a, b), InvalidArgumentError);
}

TEST_F(TwoDevices, PipelineAcrossDevicesStaysAsynchronous) {
  auto step = jit([](const Array& x) { return np::tanh(x) * 0.5 + 0.25; });
  std::vector<float> data(1 << 16, 0.5f);
  Array x = Array::from_vector<float>({static_cast<std::int64_t>(data.size())}, data, &d0());
  float expected = 0.5f;
  for (int i = 0; i < 6; ++i) {
    x = step(x);
    x = device_put(x, i % 2 == 0 ? d1() : d0());
    expected = std::tanh(expected) * 0.5f + 0.25f;
  }
  auto v = x.to_vector<float>();
  EXPECT_NEAR(v.front(), expected, 1e-6);
  EXPECT_NEAR(v.back(), expected, 1e-6);
}

TEST_F(TwoDevices, JitDeviceOption) {
  auto f = jit([](const Array& x) { return x + 1.0; }, {.device = &d1()});
  Array r = f(Array::scalar(2.0f));  // a literal argument is placed on the chosen device
  EXPECT_EQ(&r.device(), &d1());
  EXPECT_EQ(r.item<float>(), 3.0f);
}

}  // namespace
}  // namespace weft
