// What weft found out about each OpenCL device, for users, diagnostics and codegen.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "weft/backend.h"

namespace weft::opencl {

enum class DeviceType { Gpu, Cpu, Accelerator };

// "gpu", "cpu", "acc": the prefix of weft device names.
std::string_view device_type_prefix(DeviceType type);

struct DeviceInfo {
  std::string name;  // weft name: "gpu:0", "cpu:1", "acc:0"
  std::string platform_name;
  std::string platform_version;
  std::string device_name;  // as the driver reports it
  std::string vendor;
  std::string driver_version;
  std::string device_version;
  std::string opencl_c_version;
  DeviceType type = DeviceType::Cpu;
  std::uint32_t compute_units = 0;
  std::size_t max_work_group_size = 0;
  std::uint64_t global_mem_bytes = 0;
  std::uint64_t max_alloc_bytes = 0;  // CL_DEVICE_MAX_MEM_ALLOC_SIZE
  std::uint64_t local_mem_bytes = 0;
  // CL_DEVICE_NATIVE_VECTOR_WIDTH_FLOAT: floats per native vector register (16 with AVX-512).
  std::uint32_t native_float_vector_width = 1;
  bool fp64 = false;
  // cl_khr_int64_base_atomics: compare-and-swap on 64-bit words (f64 and 64-bit integer scatters).
  bool int64_atomics = false;
  bool out_of_order = false;  // whether weft's queue for it executes out of order
};

// Every usable device in naming order (GPUs, then CPUs, then accelerators; platform order
// within each type). Discovers devices on first use; throws weft::Error when the OpenCL
// loader sees no platform or no device.
const std::vector<DeviceInfo>& device_infos();

// The info of an OpenCL device; throws InvalidArgumentError for devices of other backends.
DeviceInfo info_of(const Device& device);

}  // namespace weft::opencl
