// Identical kernels compiled once (opencl/src/codegen/shared_kernels.h): a program that repeats
// work keeps one copy of each kernel's code, the launches of the copies run it under their own
// names, and the results are those of an independent computation.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "support/runtime_plans.h"
#include "weft/opencl/device.h"
#include "weft/opencl/executable.h"
#include "weft/opencl/register.h"
#include "weft/weft.h"

namespace weft {
namespace {

using opencl::LaunchPlan;
using opencl::OpenCLExecutable;
using opencl::ProgramPlan;
using opencl::StepPlan;
using Role = opencl::BufferPlan::Role;

std::shared_ptr<OpenCLExecutable> executable_of(std::shared_ptr<Executable> e) {
  auto exe = std::dynamic_pointer_cast<OpenCLExecutable>(std::move(e));
  if (!exe) throw std::runtime_error("the default device is not an OpenCL device");
  return exe;
}

std::size_t count_of(const std::string& text, const std::string& needle) {
  std::size_t n = 0;
  for (auto at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

HostArray scrambled(std::int64_t n, std::int32_t seed) {
  HostArray h(DType::I32, {n});
  std::uint32_t state = static_cast<std::uint32_t>(seed) * 2654435761u + 1;
  for (std::int64_t i = 0; i < n; ++i) {
    state = state * 1664525u + 1013904223u;
    h.set_i64(i, static_cast<std::int32_t>(state >> 12) % 1000 - 500);
  }
  return h;
}

std::vector<std::int32_t> values(const HostArray& h) {
  std::vector<std::int32_t> out;
  for (std::int64_t i = 0; i < h.size(); ++i)
    out.push_back(static_cast<std::int32_t>(h.get_i64(i)));
  return out;
}

// The same sort and running sum of two arrays of one shape: the second's kernels are the
// first's code under other names.
TEST(SharedKernels, RepeatedWorkRunsOneCopyOfEachKernel) {
  constexpr std::int64_t n = 1000;
  const HostArray a = scrambled(n, 1), b = scrambled(n, 2);
  auto f = jit([](const std::vector<Array>& x) {
    return std::vector<Array>{np::sort(x[0]), np::sort(x[1]), np::cumsum(x[0]), np::cumsum(x[1])};
  });
  const std::vector<Array> args = {Array::from_host(a), Array::from_host(b)};
  const auto exe = executable_of(f.lower(args).compile());
  const ProgramPlan& plan = exe->plan();

  std::set<std::string> kernels, functions;
  for (const LaunchPlan* launch : opencl::all_launches(plan)) {
    kernels.insert(launch->kernel);
    functions.insert(launch->function_name());
    // Every function a launch runs is defined once in the program.
    EXPECT_EQ(count_of(plan.source, " " + launch->function_name() + "("), 1u)
        << launch->function_name() << " in\n"
        << plan.source;
    if (launch->function_name() != launch->kernel) {
      EXPECT_EQ(count_of(plan.source, " " + launch->kernel + "("), 0u) << launch->kernel;
      EXPECT_NE(plan.source.find("// " + launch->kernel + " runs as " + launch->function_name()),
                std::string::npos)
          << plan.source;
    }
  }
  EXPECT_LT(functions.size(), kernels.size()) << plan.source;
  EXPECT_EQ(count_of(plan.source, "__kernel"), functions.size()) << plan.source;

  const std::vector<Array> got = f(args);
  std::vector<std::int32_t> sorted_a = values(a), sorted_b = values(b);
  std::sort(sorted_a.begin(), sorted_a.end());
  std::sort(sorted_b.begin(), sorted_b.end());
  EXPECT_EQ(values(got[0].to_host()), sorted_a);
  EXPECT_EQ(values(got[1].to_host()), sorted_b);
  std::vector<std::int32_t> sum_a = values(a), sum_b = values(b);
  for (std::size_t i = 1; i < sum_a.size(); ++i) {
    sum_a[i] += sum_a[i - 1];
    sum_b[i] += sum_b[i - 1];
  }
  EXPECT_EQ(values(got[2].to_host()), sum_a);
  EXPECT_EQ(values(got[3].to_host()), sum_b);
}

// Running sums of other dtypes and sizes beside each other: whatever codegen shares between
// them, each result is its own.
TEST(SharedKernels, OtherDTypesAndSizesGetTheirOwnResults) {
  auto f = jit([](const std::vector<Array>& x) {
    return std::vector<Array>{np::cumsum(x[0]), np::cumsum(np::astype(x[0], DType::F32)),
                              np::cumsum(x[1])};
  });
  const HostArray a = scrambled(1000, 3), b = scrambled(700, 4);
  const std::vector<Array> got = f(std::vector<Array>{Array::from_host(a), Array::from_host(b)});
  std::vector<std::int32_t> sum_a = values(a), sum_b = values(b);
  for (std::size_t i = 1; i < sum_a.size(); ++i) sum_a[i] += sum_a[i - 1];
  for (std::size_t i = 1; i < sum_b.size(); ++i) sum_b[i] += sum_b[i - 1];
  EXPECT_EQ(values(got[0].to_host()), sum_a);
  const HostArray as_float = got[1].to_host();  // exact: every partial sum is below 2^24
  ASSERT_EQ(as_float.size(), 1000);
  for (std::int64_t i = 0; i < as_float.size(); ++i)
    ASSERT_EQ(as_float.get_f64(i), static_cast<double>(sum_a[static_cast<std::size_t>(i)]))
        << "element " << i;
  EXPECT_EQ(values(got[2].to_host()), sum_b);
}

// The runtime side: two launches under their own names run one function of the program.
TEST(SharedKernels, LaunchesOfOneFunctionUnderTwoNames) {
  auto& device = dynamic_cast<opencl::OpenCLDevice&>(default_device());
  constexpr std::size_t n = 4096;
  ProgramPlan plan;
  plan.source = R"(
    __kernel void scale(__global const float* a, __global float* out) {
      size_t i = get_global_id(0);
      out[i] = a[i] * 3.0f;
    })";
  plan.buffers = {{Role::Input, 0, n * 4}, {Role::Temp, 0, n * 4}, {Role::Output, 0, n * 4}};
  LaunchPlan first{"scale", {0, 1}, {1}, n, 64};
  LaunchPlan second{"scale_again", {1, 2}, {2}, n, 64};
  second.function = "scale";
  plan.steps = {StepPlan::of(first), StepPlan::of(second)};
  plan.outputs = {2};
  OpenCLExecutable exe(device, std::move(plan));
  std::vector<float> a(n);
  for (std::size_t i = 0; i < n; ++i) a[i] = static_cast<float>(i % 89) - 40.0f;
  const std::vector<std::shared_ptr<Buffer>> inputs = {opencl::testing::upload(device, a)};
  const auto out = opencl::testing::download<float>(device, *exe.run(inputs)[0]);
  for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(out[i], a[i] * 9.0f) << "element " << i;
}

}  // namespace
}  // namespace weft
