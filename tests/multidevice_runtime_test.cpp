// The OpenCL runtime with two devices of one platform in one context (two PoCL CPU devices with
// POCL_DEVICES="pthread pthread", two GPUs of one driver):
// naming, WEFT_DEVICE, copies between devices and across backends, and per-device execution.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "support/runtime_plans.h"
#include "support/test_devices.h"
#include "weft/error.h"
#include "weft/opencl/device.h"
#include "weft/opencl/device_info.h"
#include "weft/opencl/executable.h"
#include "weft/opencl/register.h"

namespace weft::opencl {
namespace {

using Role = BufferPlan::Role;

// Before main and so before discovery: two PoCL devices even when run outside CTest (which
// sets POCL_DEVICES itself).
const bool kEnvironmentSet = [] {
  setenv("POCL_DEVICES", "pthread pthread", 0);
  return true;
}();

// Device 0 or 1 of the pair the tests run on (support/test_devices.h).
OpenCLDevice& pair_device(std::size_t index) {
  return dynamic_cast<OpenCLDevice&>(*weft::testing::two_devices().at(index));
}

using testing::add_plan;
using testing::download;
using testing::upload;

// A slow kernel whose result is exact: iters[0] steps of a 32-bit LCG per element.
ProgramPlan slow_plan(std::size_t n) {
  ProgramPlan plan;
  plan.source = R"(
    __kernel void lcg(__global const uint* seeds, __global const uint* iters, __global uint* out) {
      size_t i = get_global_id(0);
      uint x = seeds[i];
      uint n = iters[0];
      for (uint k = 0; k < n; ++k) x = x * 1664525u + 1013904223u;
      out[i] = x;
    })";
  plan.buffers = {{Role::Input, 0, n * 4}, {Role::Input, 1, 4}, {Role::Output, 0, n * 4}};
  plan.steps = {StepPlan::of({"lcg", {0, 1, 2}, {2}, n, 0})};
  plan.outputs = {2};
  return plan;
}

std::uint32_t lcg(std::uint32_t x, std::uint32_t steps) {
  for (std::uint32_t k = 0; k < steps; ++k) x = x * 1664525u + 1013904223u;
  return x;
}

// A device of another backend, holding host memory: copies from it must go through the host.
class HostDevice;
class HostBuffer final : public Buffer {
 public:
  HostBuffer(HostDevice& device, std::vector<std::byte> bytes)
      : device_(device), bytes_(std::move(bytes)) {}
  Device& device() const override;
  std::size_t bytes() const override { return bytes_.size(); }
  const std::vector<std::byte>& data() const { return bytes_; }

 private:
  HostDevice& device_;
  std::vector<std::byte> bytes_;
};

class HostDevice final : public Device {
 public:
  const std::string& name() const override { return name_; }
  std::string description() const override { return "test host memory"; }
  bool supports(DType) const override { return true; }
  std::shared_ptr<Buffer> upload(const void* host, std::size_t bytes) override {
    std::vector<std::byte> copy(bytes);
    if (bytes) std::memcpy(copy.data(), host, bytes);
    return std::make_shared<HostBuffer>(*this, std::move(copy));
  }
  void download(const Buffer& buffer, void* host, std::size_t bytes) override {
    ++downloads;
    if (bytes) std::memcpy(host, static_cast<const HostBuffer&>(buffer).data().data(), bytes);
  }
  void wait(const Buffer&) override {}
  std::shared_ptr<Buffer> copy_from(const Buffer&) override { return nullptr; }
  std::shared_ptr<Executable> compile(const Graph&) override { return nullptr; }
  void synchronize() override {}
  int downloads = 0;

 private:
  std::string name_ = "host:0";
};

Device& HostBuffer::device() const {
  return device_;
}

TEST(MultiDevice, TwoDevicesOfOnePlatformShareOneContext) {
  WEFT_SKIP_WITHOUT_TWO_DEVICES();
  OpenCLDevice &a = pair_device(0), &b = pair_device(1);
  EXPECT_NE(&a, &b);
  EXPECT_EQ(a.context(), b.context()) << "one context per platform";
  EXPECT_NE(a.queue(), b.queue()) << "one queue per device";
  EXPECT_NE(a.id(), b.id());
  EXPECT_EQ(a.info().platform_name, b.info().platform_name);
  // Both are listed, in naming order.
  std::vector<std::string> names;
  for (Device* device : weft::devices()) names.push_back(device->name());
  const auto at_a = std::find(names.begin(), names.end(), a.name());
  EXPECT_NE(at_a, names.end()) << a.name();
  EXPECT_NE(std::find(at_a, names.end(), b.name()), names.end()) << b.name();
}

TEST(MultiDevice, DefaultDeviceComesFromEnvironmentUntilSet) {
  WEFT_SKIP_WITHOUT_TWO_DEVICES();
  OpenCLDevice &a = pair_device(0), &b = pair_device(1);
  ASSERT_EQ(setenv("WEFT_DEVICE", b.name().c_str(), 1), 0);
  EXPECT_EQ(&default_device(), &b);
  set_default_device(a.name());
  EXPECT_EQ(&default_device(), &a);
  set_default_device(b.name());
  EXPECT_EQ(&default_device(), &b);
  ASSERT_EQ(unsetenv("WEFT_DEVICE"), 0);
  EXPECT_EQ(&default_device(), &b);
}

TEST(MultiDevice, CopiesBetweenDevices) {
  WEFT_SKIP_WITHOUT_TWO_DEVICES();
  OpenCLDevice &a = pair_device(0), &b = pair_device(1);
  std::vector<std::int64_t> values = {1, -2, 3, INT64_MAX, INT64_MIN};
  auto on_a = upload(a, values);
  auto on_b = b.copy_from(*on_a);
  EXPECT_EQ(&on_b->device(), &b);
  EXPECT_EQ(on_b->bytes(), on_a->bytes());
  EXPECT_EQ(download<std::int64_t>(b, *on_b), values);
  auto back = a.copy_from(*on_b);
  EXPECT_EQ(download<std::int64_t>(a, *back), values);
  // Any device may download any OpenCL buffer: the owner's queue does the read.
  EXPECT_EQ(download<std::int64_t>(a, *on_b), values);

  auto empty = b.copy_from(*a.upload(nullptr, 0));
  EXPECT_EQ(empty->bytes(), 0u);
  b.download(*empty, nullptr, 0);
}

TEST(MultiDevice, CopyWaitsForTheSourceWriterOnAnotherQueue) {
  WEFT_SKIP_WITHOUT_TWO_DEVICES();
  OpenCLDevice &a = pair_device(0), &b = pair_device(1);
  constexpr std::size_t n = 32;
  constexpr std::uint32_t kSteps = 5'000'000;
  OpenCLExecutable slow(a, slow_plan(n));
  std::vector<std::uint32_t> seeds(n);
  for (std::size_t i = 0; i < n; ++i) seeds[i] = static_cast<std::uint32_t>(i * 7919u + 1);
  std::vector<std::shared_ptr<Buffer>> inputs = {upload(a, seeds),
                                                 upload(a, std::vector<std::uint32_t>{kSteps})};
  auto produced = slow.run(inputs)[0];
  auto copied = b.copy_from(*produced);  // enqueued on b's queue while a still computes
  auto values = download<std::uint32_t>(b, *copied);
  for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(values[i], lcg(seeds[i], kSteps)) << i;
}

TEST(MultiDevice, CopiesFromAnotherBackendThroughTheHost) {
  WEFT_SKIP_WITHOUT_TWO_DEVICES();
  HostDevice host;
  std::vector<float> values = {0.5f, -1.0f, 3.25f};
  auto source = upload(host, values);
  auto on_b = pair_device(1).copy_from(*source);
  EXPECT_EQ(host.downloads, 1);
  EXPECT_EQ(&on_b->device(), &pair_device(1));
  EXPECT_EQ(download<float>(pair_device(1), *on_b), values);
}

TEST(MultiDevice, ExecutablesRunOnTheirOwnDevice) {
  WEFT_SKIP_WITHOUT_TWO_DEVICES();
  OpenCLDevice &a = pair_device(0), &b = pair_device(1);
  constexpr std::size_t n = 300;
  OpenCLExecutable add_a(a, add_plan(n)), add_b(b, add_plan(n));
  std::vector<float> x(n), y(n);
  for (std::size_t i = 0; i < n; ++i) {
    x[i] = static_cast<float>(i);
    y[i] = 1.0f;
  }
  std::vector<std::shared_ptr<Buffer>> on_a = {upload(a, x), upload(a, y)};
  try {
    add_b.run(on_a);
    ADD_FAILURE() << b.name() << " ran on buffers that live on " << a.name();
  } catch (const InvalidArgumentError& e) {
    EXPECT_NE(std::string(e.what()).find(a.name()), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(b.name()), std::string::npos) << e.what();
  }
  // Both devices busy at once; the result of a feeds b through a copy.
  auto from_a = add_a.run(on_a)[0];
  std::vector<std::shared_ptr<Buffer>> on_b = {b.copy_from(*from_a), b.copy_from(*on_a[1])};
  auto from_b = add_b.run(on_b)[0];
  a.synchronize();
  b.synchronize();
  auto result = download<float>(b, *from_b);
  for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(result[i], x[i] + 2.0f) << i;
}

}  // namespace
}  // namespace weft::opencl
