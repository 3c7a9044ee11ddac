// The process-wide device registry: which backends exist and which device is the default.
#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include "weft/backend.h"
#include "weft/error.h"

namespace weft {

namespace {

struct Registry {
  std::mutex mutex;
  std::vector<Backend*> backends;
  Device* chosen = nullptr;  // set by set_default_device
};

Registry& registry() {
  // Never destroyed: backends register during static initialisation and devices may be
  // looked up during static destruction.
  static Registry* registry = new Registry;
  return *registry;
}

std::vector<Device*> all_devices(const Registry& registry) {
  if (registry.backends.empty())
    throw Error(
        "weft: no device backend is registered. Link weft::opencl "
        "(target_link_libraries(your_target PRIVATE weft::opencl)) and include <weft/weft.h> "
        "(or <weft/opencl/register.h>) in one of your source files so the OpenCL backend "
        "registers itself.");
  std::vector<Device*> all;
  for (Backend* backend : registry.backends) {
    std::vector<Device*> devices = backend->devices();
    all.insert(all.end(), devices.begin(), devices.end());
  }
  return all;
}

std::string names_of(const std::vector<Device*>& devices) {
  std::string names;
  for (const Device* device : devices) names += (names.empty() ? "" : ", ") + device->name();
  return names.empty() ? "(none)" : names;
}

Device* find(const std::vector<Device*>& devices, std::string_view name) {
  auto found = std::find_if(devices.begin(), devices.end(),
                            [&](const Device* device) { return device->name() == name; });
  return found == devices.end() ? nullptr : *found;
}

// `source` says where the name came from when that is not the caller's own argument.
Device& find_or_throw(const std::vector<Device*>& devices, std::string_view name,
                      const std::string& source = "") {
  if (Device* device = find(devices, name)) return *device;
  throw InvalidArgumentError("weft: no device is named '" + std::string(name) + "'" + source +
                             "; available devices: " + names_of(devices) +
                             " (`clinfo` shows what the OpenCL drivers see)");
}

}  // namespace

bool register_backend(Backend* backend) {
  if (!backend) throw InvalidArgumentError("weft: register_backend was given a null backend");
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  if (std::find(r.backends.begin(), r.backends.end(), backend) == r.backends.end())
    r.backends.push_back(backend);
  return true;
}

std::vector<Device*> devices() {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  return all_devices(r);
}

Device& device(std::string_view name) {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  return find_or_throw(all_devices(r), name);
}

Device& default_device() {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  if (r.chosen) return *r.chosen;
  std::vector<Device*> all = all_devices(r);
  // Read on every call rather than cached: until set_default_device() is called, a changed
  // WEFT_DEVICE takes effect at once.
  if (const char* env = std::getenv("WEFT_DEVICE"); env && *env)
    return find_or_throw(all, env, " (from the environment variable WEFT_DEVICE)");
  for (Backend* backend : r.backends)
    if (Device* preferred = backend->preferred_device()) return *preferred;
  throw Error("weft: no device is available; available devices: " + names_of(all));
}

void set_default_device(std::string_view name) {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  r.chosen = &find_or_throw(all_devices(r), name);
}

}  // namespace weft

namespace weft {

std::shared_ptr<Buffer> Device::fill(const void* pattern, std::size_t pattern_bytes,
                                     std::size_t bytes) {
  std::vector<std::byte> host(bytes);
  for (std::size_t at = 0; at + pattern_bytes <= bytes; at += pattern_bytes)
    std::memcpy(host.data() + at, pattern, pattern_bytes);
  return upload(host.data(), bytes);
}

std::shared_ptr<Buffer> Device::token_after(std::span<const std::shared_ptr<Buffer>>) {
  throw InvalidArgumentError("weft: device " + name() +
                             " cannot order effects (it makes no tokens); run functions with "
                             "debug_print or callbacks on an OpenCL device");
}

}  // namespace weft
