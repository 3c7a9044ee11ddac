// Platform and device discovery: one context per platform, one queue per device, and the
// gpu:N / cpu:N / acc:N names.
#include "discovery.h"
#include "tiering/background_builds.h"

#include "runtime/host_tasks.h"

#include "runtime/device_runtime.h"
#include "runtime/fork_guard.h"

#include "cache_writer.h"
#include "pocl_affinity.h"
#include "runtime/run_telemetry.h"

#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>

#include "weft/error.h"
#include "weft/opencl/cl_error.h"
#include "weft/opencl/device_info.h"
#include "weft/telemetry/environment.h"

namespace weft::opencl {

namespace {

constexpr const char* kInstallAdvice =
    "Install an OpenCL driver: `sudo apt install pocl-opencl-icd` for the CPU, or your GPU "
    "vendor's OpenCL driver. `clinfo` shows what the OpenCL ICD loader sees.";

// PoCL creates its kernel cache directory when the ICD loader loads it. When it cannot (HOME
// unset to a path that does not exist, a read-only home, HOME naming a file), PoCL prints
// nothing useful and either reports no devices or no platform at all, which reads as a missing
// driver. These helpers recognise that case so the message can say what to fix.

bool is_pocl_platform(const std::string& name) {
  return name.find("Portable Computing Language") != std::string::npos ||
         name.find("PoCL") != std::string::npos || name.find("pocl") != std::string::npos;
}

// Whether the ICD loader has a PoCL entry (OCL_ICD_VENDORS, else /etc/OpenCL/vendors).
bool pocl_icd_installed() {
  const char* vendors = std::getenv("OCL_ICD_VENDORS");
  const std::filesystem::path dir = vendors && *vendors ? vendors : "/etc/OpenCL/vendors";
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec))
    return dir.filename().string().find("pocl") != std::string::npos;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec))
    if (entry.path().filename().string().find("pocl") != std::string::npos) return true;
  return false;
}

// Where PoCL puts its kernel cache, and which variable chose it: POCL_CACHE_DIR, else
// $XDG_CACHE_HOME/pocl, else $HOME/.cache/pocl, else /tmp/pocl (PoCL's pocl_cache.c).
std::pair<std::string, std::string> pocl_cache_directory() {
  auto env = [](const char* name) -> std::optional<std::string> {
    const char* value = std::getenv(name);
    if (!value || !*value) return std::nullopt;
    return std::string(value);
  };
  if (auto dir = env("POCL_CACHE_DIR")) return {*dir, "POCL_CACHE_DIR=" + *dir};
  if (auto xdg = env("XDG_CACHE_HOME")) return {*xdg + "/pocl/kcache", "XDG_CACHE_HOME=" + *xdg};
  if (const char* home = std::getenv("HOME"))
    return {std::string(home) + "/.cache/pocl/kcache", "HOME=" + std::string(home)};
  return {"/tmp/pocl/kcache", "neither HOME nor XDG_CACHE_HOME is set"};
}

// Why `dir` cannot be created or written, or nothing when it can (as far as permissions tell).
std::optional<std::string> why_not_writable(const std::string& dir) {
  std::filesystem::path path = dir;
  while (true) {
    struct stat st {};
    if (::stat(path.c_str(), &st) == 0) {
      const bool is_target = path == std::filesystem::path(dir);
      if (!S_ISDIR(st.st_mode)) return path.string() + " is not a directory";
      if (::access(path.c_str(), W_OK | X_OK) != 0)
        return path.string() + (is_target ? " is not writable"
                                          : " is not writable, so " + dir + " cannot be created");
      return std::nullopt;
    }
    if (errno != ENOENT && errno != ENOTDIR) return path.string() + ": " + std::strerror(errno);
    if (!path.has_parent_path() || path.parent_path() == path) return dir + " cannot be created";
    path = path.parent_path();
  }
}

std::string trimmed(std::string text) {
  while (!text.empty() && (text.back() == '\0' || text.back() == ' ' || text.back() == '\n'))
    text.pop_back();
  std::size_t start = text.find_first_not_of(' ');
  return start == std::string::npos ? std::string() : text.substr(start);
}

std::string platform_string(cl_platform_id platform, cl_platform_info what) {
  std::size_t size = 0;
  check_cl(clGetPlatformInfo(platform, what, 0, nullptr, &size), "clGetPlatformInfo", "");
  std::string text(size, '\0');
  check_cl(clGetPlatformInfo(platform, what, size, text.data(), nullptr), "clGetPlatformInfo", "");
  return trimmed(std::move(text));
}

std::string device_string(cl_device_id device, cl_device_info what) {
  std::size_t size = 0;
  check_cl(clGetDeviceInfo(device, what, 0, nullptr, &size), "clGetDeviceInfo", "");
  std::string text(size, '\0');
  check_cl(clGetDeviceInfo(device, what, size, text.data(), nullptr), "clGetDeviceInfo", "");
  return trimmed(std::move(text));
}

template <typename T>
T device_value(cl_device_id device, cl_device_info what) {
  T value{};
  check_cl(clGetDeviceInfo(device, what, sizeof(value), &value, nullptr), "clGetDeviceInfo", "");
  return value;
}

DeviceType type_of(cl_device_type type) {
  if (type & CL_DEVICE_TYPE_GPU) return DeviceType::Gpu;
  if (type & CL_DEVICE_TYPE_CPU) return DeviceType::Cpu;
  return DeviceType::Accelerator;
}

bool has_fp64(cl_device_id device) {
  std::string extensions = " " + device_string(device, CL_DEVICE_EXTENSIONS) + " ";
  if (extensions.find(" cl_khr_fp64 ") != std::string::npos) return true;
  // Devices that predate the extension string may still report a double configuration; the
  // query itself fails on some drivers without doubles, which means no.
  cl_device_fp_config config = 0;
  return clGetDeviceInfo(device, CL_DEVICE_DOUBLE_FP_CONFIG, sizeof(config), &config, nullptr) ==
             CL_SUCCESS &&
         config != 0;
}

DeviceInfo describe(cl_device_id device, const std::string& platform_name,
                    const std::string& platform_version) {
  DeviceInfo info;
  info.platform_name = platform_name;
  info.platform_version = platform_version;
  info.device_name = device_string(device, CL_DEVICE_NAME);
  info.vendor = device_string(device, CL_DEVICE_VENDOR);
  info.driver_version = device_string(device, CL_DRIVER_VERSION);
  info.device_version = device_string(device, CL_DEVICE_VERSION);
  info.opencl_c_version = device_string(device, CL_DEVICE_OPENCL_C_VERSION);
  info.type = type_of(device_value<cl_device_type>(device, CL_DEVICE_TYPE));
  info.compute_units = device_value<cl_uint>(device, CL_DEVICE_MAX_COMPUTE_UNITS);
  info.max_work_group_size = device_value<std::size_t>(device, CL_DEVICE_MAX_WORK_GROUP_SIZE);
  info.global_mem_bytes = device_value<cl_ulong>(device, CL_DEVICE_GLOBAL_MEM_SIZE);
  info.max_alloc_bytes = device_value<cl_ulong>(device, CL_DEVICE_MAX_MEM_ALLOC_SIZE);
  info.local_mem_bytes = device_value<cl_ulong>(device, CL_DEVICE_LOCAL_MEM_SIZE);
  info.native_float_vector_width =
      device_value<cl_uint>(device, CL_DEVICE_NATIVE_VECTOR_WIDTH_FLOAT);
  info.fp64 = has_fp64(device);
  info.int64_atomics = (" " + device_string(device, CL_DEVICE_EXTENSIONS) + " ")
                           .find(" cl_khr_int64_base_atomics ") != std::string::npos;
  return info;
}

// Out of order when the device offers it, so independent kernels may overlap; profiling so
// that events carry timings for telemetry.
ClQueue make_queue(cl_context context, cl_device_id device, DeviceInfo& info) {
  auto supported = device_value<cl_command_queue_properties>(device, CL_DEVICE_QUEUE_PROPERTIES);
  const std::string label = info.name + " (" + info.device_name + ")";
  cl_int status = CL_SUCCESS;
  if (supported & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE) {
    cl_command_queue queue = clCreateCommandQueue(
        context, device, CL_QUEUE_PROFILING_ENABLE | CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE,
        &status);
    if (status == CL_SUCCESS) {
      info.out_of_order = true;
      return ClQueue(queue);
    }
    // Some drivers advertise out-of-order queues and then refuse them; in order still works.
    if (status != CL_INVALID_QUEUE_PROPERTIES) check_cl(status, "clCreateCommandQueue", label);
  }
  cl_command_queue queue =
      clCreateCommandQueue(context, device, CL_QUEUE_PROFILING_ENABLE, &status);
  check_cl(status, "clCreateCommandQueue", label);
  info.out_of_order = false;
  return ClQueue(queue);
}

struct Found {
  DeviceInfo info;
  cl_device_id id;
  ClContext context;
};

// The devices of one platform, sharing one context; problems go to `skipped`.
std::vector<Found> platform_devices(cl_platform_id platform, std::vector<std::string>& skipped) {
  const std::string name = platform_string(platform, CL_PLATFORM_NAME);
  const std::string version = platform_string(platform, CL_PLATFORM_VERSION);
  const cl_device_type wanted =
      CL_DEVICE_TYPE_GPU | CL_DEVICE_TYPE_CPU | CL_DEVICE_TYPE_ACCELERATOR;
  cl_uint count = 0;
  cl_int status = clGetDeviceIDs(platform, wanted, 0, nullptr, &count);
  if (status == CL_DEVICE_NOT_FOUND || (status == CL_SUCCESS && count == 0)) {
    skipped.push_back("platform '" + name + "' has no GPU, CPU or accelerator device");
    return {};
  }
  if (status != CL_SUCCESS) {
    skipped.push_back("platform '" + name + "': clGetDeviceIDs failed with " +
                      std::string(cl_error_name(status)));
    return {};
  }
  std::vector<cl_device_id> ids(count);
  check_cl(clGetDeviceIDs(platform, wanted, count, ids.data(), nullptr), "clGetDeviceIDs",
           "platform '" + name + "'");

  std::vector<cl_device_id> usable;
  for (cl_device_id id : ids) {
    // weft builds from source, so a device without a compiler cannot run anything.
    if (!device_value<cl_bool>(id, CL_DEVICE_AVAILABLE) ||
        !device_value<cl_bool>(id, CL_DEVICE_COMPILER_AVAILABLE)) {
      skipped.push_back("device '" + device_string(id, CL_DEVICE_NAME) + "' on platform '" + name +
                        "' is unavailable or has no OpenCL C compiler");
      continue;
    }
    usable.push_back(id);
  }
  if (usable.empty()) return {};

  cl_context_properties properties[] = {CL_CONTEXT_PLATFORM,
                                        reinterpret_cast<cl_context_properties>(platform), 0};
  ClContext context(clCreateContext(properties, static_cast<cl_uint>(usable.size()), usable.data(),
                                    nullptr, nullptr, &status));
  if (status != CL_SUCCESS) {
    skipped.push_back("platform '" + name + "': clCreateContext failed with " +
                      std::string(cl_error_name(status)));
    return {};
  }
  std::vector<Found> found;
  for (cl_device_id id : usable) found.push_back({describe(id, name, version), id, context});
  return found;
}

struct Devices {
  std::vector<std::unique_ptr<OpenCLDevice>> owned;
  std::vector<OpenCLDevice*> all;
  std::vector<DeviceInfo> infos;
};

Devices discover() {
  detail::pin_pocl_workers_by_default();
  cl_uint count = 0;
  cl_int status = clGetPlatformIDs(0, nullptr, &count);
  // The ICD loader answers CL_PLATFORM_NOT_FOUND_KHR when no driver is installed, or when
  // the installed one failed to start.
  const bool no_platform = status == -1001 || (status == CL_SUCCESS && count == 0);
  if (no_platform || status != CL_SUCCESS) {
    if (pocl_icd_installed())
      if (auto problem = detail::pocl_cache_problem("PoCL then offers no devices"))
        throw Error("weft: no OpenCL platform found: " + *problem);
    if (no_platform) throw Error(std::string("weft: no OpenCL platform found. ") + kInstallAdvice);
    check_cl(status, "clGetPlatformIDs", "");
  }
  std::vector<cl_platform_id> platforms(count);
  check_cl(clGetPlatformIDs(count, platforms.data(), nullptr), "clGetPlatformIDs", "");

  std::vector<Found> found;
  std::vector<std::string> skipped;
  bool pocl_present = false;
  for (cl_platform_id platform : platforms) {
    pocl_present |= is_pocl_platform(platform_string(platform, CL_PLATFORM_NAME));
    for (Found& device : platform_devices(platform, skipped)) found.push_back(std::move(device));
  }
  if (found.empty()) {
    std::string message = "weft: no usable OpenCL device found";
    for (const std::string& reason : skipped) message += "\n  " + reason;
    if (pocl_present)
      if (auto problem = detail::pocl_cache_problem("PoCL then offers no devices"))
        throw Error(message + "\n" + *problem);
    throw Error(message + "\n" + kInstallAdvice);
  }

  // Names go by type, GPUs first; the stable sort keeps platform order within each type.
  std::stable_sort(found.begin(), found.end(), [](const Found& a, const Found& b) {
    return static_cast<int>(a.info.type) < static_cast<int>(b.info.type);
  });
  std::array<int, 3> next_number{};
  Devices devices;
  for (Found& device : found) {
    int& number = next_number[static_cast<std::size_t>(device.info.type)];
    device.info.name =
        std::string(device_type_prefix(device.info.type)) + ":" + std::to_string(number++);
    ClQueue queue = make_queue(device.context.get(), device.id, device.info);
    devices.infos.push_back(device.info);
    devices.owned.push_back(std::make_unique<OpenCLDevice>(std::move(device.info), device.id,
                                                           device.context, std::move(queue)));
    devices.all.push_back(devices.owned.back().get());
  }
  return devices;
}

// Lets every queue drain before the process tears down. A driver still compiling or running
// enqueued work (an array nobody waited for) when the compiler libraries' static objects are
// destroyed crashes in them; exit handlers run in reverse order of registration, so one
// registered after discovery (after the driver and its compiler were loaded) runs first.
const Devices& discovered();

void drain_queues_at_exit() {
  // A child forked after the driver started has none of its threads, nor weft's: nothing runs
  // there to wait for, and the driver would hang.
  if (detail::forked_after_driver_start()) return;
  // Programs not built yet are not waited for: only the build under way finishes.
  detail::stop_background_builds();
  // std::exit called from inside a callback: the threads that wait for that callback (the one
  // that dispatched it, a run on a runtime thread, outer callbacks) can never finish, so none is
  // waited for or joined; they end with the process. No queued command waits on a callback, so
  // the queues still drain.
  if (detail::inside_callback()) {
    for (OpenCLDevice* device : discovered().all) clFlush(device->queue());
    for (OpenCLDevice* device : discovered().all) clFinish(device->queue());
    telemetry::flush();
    return;
  }
  // Pending callbacks run before the process ends (no lost prints); runs on a device's runtime
  // thread may wait for them, and enqueue until they finish; then both kinds of thread end.
  for (OpenCLDevice* device : discovered().all) clFlush(device->queue());
  detail::wait_for_host_tasks();
  for (OpenCLDevice* device : discovered().all) device->runtime().shut_down();
  detail::wait_for_host_tasks();
  detail::shut_down_receivers();
  for (OpenCLDevice* device : discovered().all) clFinish(device->queue());
  // First runs have finished, so their programs can go into the persistent cache now.
  detail::finish_cache_writes(/*stop=*/true);
  // Every command has completed: flushing turns each profile into a span, so the recording is
  // complete.
  telemetry::flush();
}

// glibc destroys the exiting thread's thread_local objects before it runs any exit handler or
// static destructor, so a drain owned by the main thread runs before every compiler static,
// even ones created lazily after discovery (the atexit handler below would run after those).
struct DrainWhenMainThreadExits {
  const bool main_thread = getpid() == static_cast<pid_t>(syscall(SYS_gettid));
  ~DrainWhenMainThreadExits() {
    if (main_thread) drain_queues_at_exit();
  }
};

const Devices& discovered() {
  // Never destroyed: drivers may unload before static destructors run, and buffers held in
  // user statics may outlive any destruction order we could pick.
  static const Devices* devices = [] {
    // Before the exit handler below is registered, so recording stops after the drain.
    telemetry::configure_from_environment();
    auto* found = new Devices(discover());
    std::atexit(drain_queues_at_exit);
    detail::watch_for_fork();
    return found;
  }();
  return *devices;
}

}  // namespace

std::string_view device_type_prefix(DeviceType type) {
  switch (type) {
    case DeviceType::Gpu:
      return "gpu";
    case DeviceType::Cpu:
      return "cpu";
    case DeviceType::Accelerator:
      return "acc";
  }
  return "acc";
}

const std::vector<DeviceInfo>& device_infos() {
  return discovered().infos;
}

DeviceInfo info_of(const Device& device) {
  if (const auto* opencl = dynamic_cast<const OpenCLDevice*>(&device)) return opencl->info();
  throw InvalidArgumentError("weft: device " + device.name() + " is not an OpenCL device");
}

namespace detail {

std::optional<std::string> pocl_cache_problem(std::string_view consequence) {
  const auto [dir, chosen_by] = pocl_cache_directory();
  const std::optional<std::string> why = why_not_writable(dir);
  if (!why) return std::nullopt;
  return "PoCL, the CPU OpenCL driver, cannot create its kernel cache directory " + dir + " (" +
         chosen_by + "): " + *why + ". " + std::string(consequence) +
         ". Point POCL_CACHE_DIR (or XDG_CACHE_HOME, or HOME) at a writable directory, e.g. "
         "`export POCL_CACHE_DIR=/tmp/pocl-cache`, and run again.";
}

const std::vector<OpenCLDevice*>& all_devices() {
  return discovered().all;
}

void arm_exit_drain() {
  thread_local DrainWhenMainThreadExits drain;
  (void)drain;
}

}  // namespace detail

}  // namespace weft::opencl
