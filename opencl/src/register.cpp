#include "weft/opencl/register.h"

#include "discovery.h"
#include "weft/backend.h"

namespace weft::opencl {

namespace {

class OpenCLBackend final : public Backend {
 public:
  std::vector<Device*> devices() override {
    const auto& all = detail::all_devices();
    return {all.begin(), all.end()};
  }

  Device* preferred_device() override {
    const auto& all = detail::all_devices();
    for (DeviceType type : {DeviceType::Gpu, DeviceType::Cpu})
      for (OpenCLDevice* device : all)
        if (device->info().type == type) return device;
    return all.empty() ? nullptr : all.front();
  }
};

}  // namespace

bool install_backend() {
  // Never destroyed: core keeps the pointer for the life of the process.
  static const bool installed = register_backend(new OpenCLBackend);
  return installed;
}

}  // namespace weft::opencl
