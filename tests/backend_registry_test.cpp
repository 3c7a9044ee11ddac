// Core's device registry with a fake backend. This file deliberately does not include
// weft/opencl/register.h, so no OpenCL backend is linked in and registered.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "weft/backend.h"
#include "weft/error.h"

namespace weft {
namespace {

class FakeDevice final : public Device {
 public:
  explicit FakeDevice(std::string name) : name_(std::move(name)) {}
  const std::string& name() const override { return name_; }
  std::string description() const override { return "fake " + name_; }
  bool supports(DType) const override { return true; }
  std::shared_ptr<Buffer> upload(const void*, std::size_t) override { return nullptr; }
  void download(const Buffer&, void*, std::size_t) override {}
  void wait(const Buffer&) override {}
  std::shared_ptr<Buffer> copy_from(const Buffer&) override { return nullptr; }
  std::shared_ptr<Executable> compile(const Graph&) override { return nullptr; }
  void synchronize() override {}

 private:
  std::string name_;
};

class FakeBackend final : public Backend {
 public:
  std::vector<Device*> devices() override { return {&gpu0, &cpu0, &cpu1}; }
  Device* preferred_device() override { return &gpu0; }
  FakeDevice gpu0{"gpu:0"}, cpu0{"cpu:0"}, cpu1{"cpu:1"};
};

std::vector<std::string> names(const std::vector<Device*>& devices) {
  std::vector<std::string> out;
  for (const Device* device : devices) out.push_back(device->name());
  return out;
}

// One test, because registration and set_default_device() are process-wide and permanent.
TEST(BackendRegistry, SelectsDevicesInPriorityOrder) {
  ASSERT_EQ(unsetenv("WEFT_DEVICE"), 0);
  try {
    devices();
    ADD_FAILURE() << "devices() worked with no backend registered";
  } catch (const Error& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("weft::opencl"), std::string::npos) << message;
    EXPECT_NE(message.find("weft/weft.h"), std::string::npos) << message;
  }
  EXPECT_THROW(default_device(), Error);
  EXPECT_THROW(register_backend(nullptr), InvalidArgumentError);

  static FakeBackend backend;
  EXPECT_TRUE(register_backend(&backend));
  EXPECT_TRUE(register_backend(&backend));  // a second registration changes nothing
  EXPECT_EQ(names(devices()), (std::vector<std::string>{"gpu:0", "cpu:0", "cpu:1"}));
  EXPECT_EQ(&device("cpu:1"), &backend.cpu1);
  try {
    device("acc:0");
    ADD_FAILURE() << "an unknown name was accepted";
  } catch (const InvalidArgumentError& e) {
    EXPECT_NE(std::string(e.what()).find("'acc:0'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("gpu:0, cpu:0, cpu:1"), std::string::npos) << e.what();
  }

  // The backend's choice, then WEFT_DEVICE over it, then set_default_device() over both.
  EXPECT_EQ(&default_device(), &backend.gpu0);
  ASSERT_EQ(setenv("WEFT_DEVICE", "cpu:1", 1), 0);
  EXPECT_EQ(&default_device(), &backend.cpu1);
  ASSERT_EQ(setenv("WEFT_DEVICE", "cpu:7", 1), 0);
  EXPECT_THROW(default_device(), InvalidArgumentError);
  EXPECT_THROW(set_default_device("cpu:7"), InvalidArgumentError);
  set_default_device("cpu:0");
  EXPECT_EQ(&default_device(), &backend.cpu0);
  ASSERT_EQ(unsetenv("WEFT_DEVICE"), 0);
  EXPECT_EQ(&default_device(), &backend.cpu0);
}

}  // namespace
}  // namespace weft
