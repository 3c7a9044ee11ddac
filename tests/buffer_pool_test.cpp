// The device buffer pool: released buffers are reused, and reuse never overwrites memory that
// a queued command still reads.
#include <gtest/gtest.h>

#include <cmath>

#include "weft/opencl/device.h"
#include "weft/weft.h"

namespace weft {
namespace {

opencl::OpenCLDevice& cl_device() {
  return dynamic_cast<opencl::OpenCLDevice&>(default_device());
}

TEST(BufferPool, ReleasedOutputsAreReusedAndResultsStayCorrect) {
  auto f = jit([](const Array& x, const Array& k) { return x * k; });
  Array x = np::arange(0.0, 4096.0, 1.0);
  for (int i = 0; i < 20; ++i) {
    Array k = Array::scalar(static_cast<float>(i));
    std::vector<float> got = f(x, k).to_vector<float>();  // the result dies each iteration
    ASSERT_EQ(got[4095], 4095.0f * static_cast<float>(i)) << "iteration " << i;
    ASSERT_EQ(got[17], 17.0f * static_cast<float>(i));
  }
  EXPECT_GT(cl_device().pool().pooled_bytes(), 0u);
}

TEST(BufferPool, ReuseWaitsForPendingReaders) {
  const std::int64_t n = 1 << 20;
  // A deliberately slow reader: many transcendental ops per element.
  auto slow = jit([](const Array& x) {
    Array t = x;
    for (int i = 0; i < 24; ++i) t = np::sin(t) * 0.5 + np::cos(x) * 0.5;
    return np::sum(t);
  });
  auto fill = jit([](const Array& x, const Array& v) { return np::zeros_like(x) + v; });
  Array seed = np::arange(0.0, static_cast<double>(n), 1.0);
  for (int round = 0; round < 3; ++round) {
    Array x = fill(seed, Array::scalar(0.25f * static_cast<float>(round + 1)));  // a pooled buffer
    Array total = slow(x);                                                       // queued; reads x
    x = Array();  // release x while `slow` may still read it
    // Same size as x: these outputs take x's memory from the pool and must not overwrite it
    // before `slow` has read it.
    std::vector<Array> clobber;
    for (int i = 0; i < 4; ++i) clobber.push_back(fill(seed, Array::scalar(1000.0f)));
    double v = 0.25 * (round + 1), c = std::cos(v);
    for (int i = 0; i < 24; ++i) v = std::sin(v) * 0.5 + c * 0.5;
    EXPECT_NEAR(total.item<double>(), v * static_cast<double>(n), 1e-3 * v * static_cast<double>(n))
        << "round " << round;
    for (const auto& a : clobber) EXPECT_EQ(a.to_vector<float>()[n - 1], 1000.0f);
  }
}

}  // namespace
}  // namespace weft
