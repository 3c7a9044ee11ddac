// Hand-written plans and buffer helpers shared by the OpenCL runtime tests.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "weft/backend.h"
#include "weft/opencl/program_plan.h"

namespace weft::opencl::testing {

template <typename T>
std::shared_ptr<Buffer> upload(Device& device, const std::vector<T>& values) {
  return device.upload(values.data(), values.size() * sizeof(T));
}

template <typename T>
std::vector<T> download(Device& device, const Buffer& buffer) {
  std::vector<T> values(buffer.bytes() / sizeof(T));
  device.download(buffer, values.data(), values.size() * sizeof(T));
  return values;
}

// out = a + b over n floats.
inline ProgramPlan add_plan(std::size_t n) {
  using Role = BufferPlan::Role;
  ProgramPlan plan;
  plan.source = R"(
    __kernel void add(__global const float* a, __global const float* b, __global float* out) {
      size_t i = get_global_id(0);
      out[i] = a[i] + b[i];
    })";
  plan.buffers = {{Role::Input, 0, n * 4}, {Role::Input, 1, n * 4}, {Role::Output, 0, n * 4}};
  plan.steps = {StepPlan::of({"add", {0, 1, 2}, {2}, n, 0})};
  plan.outputs = {2};
  plan.info.kernels = {
      {"add", "loop", {"add"}, static_cast<std::int64_t>(n), 1, "it is an output"}};
  return plan;
}

}  // namespace weft::opencl::testing
