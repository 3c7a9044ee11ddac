// The OpenCL runtime on one device: discovery, the device registry, buffers, hand-written
// ProgramPlans run through OpenCLExecutable, error reporting and asynchrony.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "support/runtime_plans.h"
#include "support/test_devices.h"
#include "weft/error.h"
#include "weft/interp/interpreter.h"
#include "weft/ir/text.h"
#include "weft/opencl/cl_error.h"
#include "weft/opencl/device.h"
#include "weft/opencl/device_info.h"
#include "weft/opencl/executable.h"
#include "weft/opencl/register.h"

namespace weft::opencl {
namespace {

using Role = BufferPlan::Role;

// The default device, whatever the machine has (support/test_devices.h).
OpenCLDevice& device_under_test() {
  return dynamic_cast<OpenCLDevice&>(weft::testing::test_device());
}

using testing::add_plan;
using testing::download;
using testing::upload;

// Each of n work-items runs iters[0] steps of a 32-bit LCG from seeds[i]: slow on purpose
// (one long dependency chain) yet exactly reproducible on the host.
constexpr const char* kSlowSource = R"(
  __kernel void lcg(__global const uint* seeds, __global const uint* iters, __global uint* out) {
    size_t i = get_global_id(0);
    uint x = seeds[i];
    uint n = iters[0];
    for (uint k = 0; k < n; ++k) x = x * 1664525u + 1013904223u;
    out[i] = x;
  })";

ProgramPlan slow_plan(std::size_t n, std::size_t local_size = 0) {
  ProgramPlan plan;
  plan.source = kSlowSource;
  plan.buffers = {{Role::Input, 0, n * 4}, {Role::Input, 1, 4}, {Role::Output, 0, n * 4}};
  plan.steps = {StepPlan::of({"lcg", {0, 1, 2}, {2}, n, local_size})};
  plan.outputs = {2};
  return plan;
}

std::uint32_t lcg(std::uint32_t x, std::uint32_t steps) {
  for (std::uint32_t k = 0; k < steps; ++k) x = x * 1664525u + 1013904223u;
  return x;
}

TEST(Discovery, NamesDevicesByTypeInOrder) {
  const auto& infos = device_infos();
  ASSERT_FALSE(infos.empty());
  std::set<std::string> names;
  int numbers[3] = {0, 0, 0};
  int last_type = 0;
  for (const DeviceInfo& info : infos) {
    EXPECT_TRUE(names.insert(info.name).second) << "duplicate name " << info.name;
    const int type = static_cast<int>(info.type);
    EXPECT_GE(type, last_type) << "GPUs, then CPUs, then accelerators";
    last_type = type;
    EXPECT_EQ(info.name,
              std::string(device_type_prefix(info.type)) + ":" + std::to_string(numbers[type]++));
    EXPECT_FALSE(info.platform_name.empty());
    EXPECT_FALSE(info.platform_version.empty());
    EXPECT_FALSE(info.device_name.empty());
    EXPECT_FALSE(info.vendor.empty());
    EXPECT_FALSE(info.driver_version.empty());
    EXPECT_EQ(info.device_version.rfind("OpenCL ", 0), 0u) << info.device_version;
    EXPECT_EQ(info.opencl_c_version.rfind("OpenCL C ", 0), 0u) << info.opencl_c_version;
    EXPECT_GT(info.compute_units, 0u);
    EXPECT_GT(info.max_work_group_size, 0u);
    EXPECT_GT(info.global_mem_bytes, 0u);
    EXPECT_GT(info.max_alloc_bytes, 0u);
    EXPECT_GT(info.local_mem_bytes, 0u);
  }
  EXPECT_TRUE(names.count(device_under_test().name())) << "the default device is not listed";

  // The registry lists the same devices in the same order.
  std::vector<Device*> all = weft::devices();
  ASSERT_EQ(all.size(), infos.size());
  for (std::size_t i = 0; i < all.size(); ++i) {
    EXPECT_EQ(all[i]->name(), infos[i].name);
    EXPECT_EQ(info_of(*all[i]).device_name, infos[i].device_name);
    EXPECT_NE(all[i]->description().find(infos[i].device_name), std::string::npos);
  }
  OpenCLDevice& tested = device_under_test();
  const DeviceInfo info = info_of(tested);
  EXPECT_EQ(info.name, tested.name());
  EXPECT_EQ(info.name.rfind(std::string(device_type_prefix(info.type)) + ":", 0), 0u) << info.name;
  EXPECT_EQ(tested.caps().fp64, info.fp64);
  EXPECT_EQ(tested.caps().max_work_group_size, info.max_work_group_size);
  EXPECT_EQ(tested.caps().is_gpu, info.type == DeviceType::Gpu);
  EXPECT_EQ(tested.supports(DType::F64), info.fp64);
  for (DType t : {DType::Bool, DType::I32, DType::I64, DType::U32, DType::F32})
    EXPECT_TRUE(tested.supports(t));
}

TEST(Discovery, QueueIsOutOfOrderWhenOffered) {
  cl_command_queue_properties properties = 0;
  ASSERT_EQ(clGetCommandQueueInfo(device_under_test().queue(), CL_QUEUE_PROPERTIES,
                                  sizeof(properties), &properties, nullptr),
            CL_SUCCESS);
  EXPECT_TRUE(properties & CL_QUEUE_PROFILING_ENABLE);
  EXPECT_EQ((properties & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE) != 0,
            device_under_test().info().out_of_order);
  cl_command_queue_properties offered = 0;
  ASSERT_EQ(clGetDeviceInfo(device_under_test().id(), CL_DEVICE_QUEUE_PROPERTIES, sizeof(offered),
                            &offered, nullptr),
            CL_SUCCESS);
  if (offered & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE) {
    EXPECT_TRUE(device_under_test().info().out_of_order);
  }
}

TEST(Registry, DefaultDeviceFollowsEnvironmentThenExplicitChoice) {
  Device& preferred = default_device();
  // The first GPU, else the first CPU.
  const DeviceInfo* first_gpu = nullptr;
  const DeviceInfo* first_cpu = nullptr;
  for (const DeviceInfo& info : device_infos()) {
    if (!first_gpu && info.type == DeviceType::Gpu) first_gpu = &info;
    if (!first_cpu && info.type == DeviceType::Cpu) first_cpu = &info;
  }
  ASSERT_TRUE(first_gpu || first_cpu);
  EXPECT_EQ(preferred.name(), (first_gpu ? first_gpu : first_cpu)->name);

  // The environment may name any device: the last one, another one where there are several.
  const std::string last = weft::devices().back()->name();
  const std::string first = weft::devices().front()->name();
  ASSERT_EQ(setenv("WEFT_DEVICE", last.c_str(), 1), 0);
  EXPECT_EQ(default_device().name(), last);
  ASSERT_EQ(setenv("WEFT_DEVICE", "tpu:9", 1), 0);
  try {
    default_device();
    ADD_FAILURE() << "an unknown WEFT_DEVICE was accepted";
  } catch (const InvalidArgumentError& e) {
    EXPECT_NE(std::string(e.what()).find("WEFT_DEVICE"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("tpu:9"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(first), std::string::npos) << e.what();
  }

  try {
    weft::device("gpu:42");
    ADD_FAILURE() << "an unknown device name was accepted";
  } catch (const InvalidArgumentError& e) {
    EXPECT_NE(std::string(e.what()).find("gpu:42"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(first), std::string::npos) << e.what();
  }
  EXPECT_THROW(set_default_device("nope"), InvalidArgumentError);

  // An explicit choice beats the (still invalid) environment. It is the preferred device, so
  // the tests after this one run where they would have run without it.
  set_default_device(preferred.name());
  EXPECT_EQ(&default_device(), &preferred);
  ASSERT_EQ(unsetenv("WEFT_DEVICE"), 0);
  EXPECT_EQ(&default_device(), &preferred);
}

TEST(ClError, NamesEveryOpenCL12Code) {
  for (cl_int code = -1; code >= -19; --code)
    EXPECT_NE(cl_error_name(code), "unknown OpenCL error") << code;
  for (cl_int code = -30; code >= -68; --code)
    EXPECT_NE(cl_error_name(code), "unknown OpenCL error") << code;
  EXPECT_EQ(cl_error_name(CL_OUT_OF_RESOURCES), "CL_OUT_OF_RESOURCES");
  EXPECT_EQ(cl_error_name(CL_INVALID_KERNEL_ARGS), "CL_INVALID_KERNEL_ARGS");
  EXPECT_EQ(cl_error_name(-1001), "CL_PLATFORM_NOT_FOUND_KHR");
  EXPECT_EQ(cl_error_name(12345), "unknown OpenCL error");
}

TEST(ClError, ThrowsTypedErrorsNamingCallAndDevice) {
  for (cl_int code : {CL_MEM_OBJECT_ALLOCATION_FAILURE, CL_OUT_OF_RESOURCES, CL_OUT_OF_HOST_MEMORY})
    EXPECT_THROW(throw_cl_error(code, "clCreateBuffer", "cpu:0 (x)"), OutOfMemoryError);
  try {
    check_cl(CL_INVALID_VALUE, "clEnqueueReadBuffer", "cpu:0 (pthread-test)");
    ADD_FAILURE() << "check_cl did not throw";
  } catch (const OutOfMemoryError&) {
    ADD_FAILURE() << "CL_INVALID_VALUE is not an out-of-memory error";
  } catch (const DeviceError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("clEnqueueReadBuffer"), std::string::npos) << message;
    EXPECT_NE(message.find("cpu:0 (pthread-test)"), std::string::npos) << message;
    EXPECT_NE(message.find("CL_INVALID_VALUE"), std::string::npos) << message;
  }
  EXPECT_NO_THROW(check_cl(CL_SUCCESS, "clFinish", "cpu:0"));
}

template <typename T>
void expect_round_trip(OpenCLDevice& device, const std::vector<T>& values) {
  auto buffer = upload(device, values);
  EXPECT_EQ(buffer->bytes(), values.size() * sizeof(T));
  EXPECT_EQ(&buffer->device(), &device);
  auto back = download<T>(device, *buffer);
  EXPECT_EQ(std::memcmp(back.data(), values.data(), values.size() * sizeof(T)), 0);
  auto copy = device.copy_from(*buffer);
  EXPECT_EQ(download<T>(device, *copy), back);
}

TEST(Buffers, RoundTripEveryDType) {
  OpenCLDevice& device = device_under_test();
  for (DType dtype : kAllDTypes) {
    SCOPED_TRACE(std::string(dtype_name(dtype)));
    if (!device.supports(dtype)) continue;
    switch (dtype) {
      case DType::Bool:  // one byte per element, 0 or 1
        expect_round_trip<std::uint8_t>(device, {1, 0, 0, 1, 1, 1, 0});
        break;
      case DType::I32:
        expect_round_trip<std::int32_t>(device, {-2147483647 - 1, -1, 0, 7, 2147483647});
        break;
      case DType::I64:
        expect_round_trip<std::int64_t>(device, {INT64_MIN, -3, 0, 1LL << 40, INT64_MAX});
        break;
      case DType::U32:
        expect_round_trip<std::uint32_t>(device, {0u, 1u, 0x80000000u, 0xffffffffu});
        break;
      case DType::F32:
        expect_round_trip<float>(device, {-0.0f, 1.5f, 3.4e38f, 1e-45f, -7.25f});
        break;
      case DType::F64:
        expect_round_trip<double>(device, {-0.0, 1.0 / 3.0, 1.7e308, 4.9e-324});
        break;
      case DType::U8:
        expect_round_trip<std::uint8_t>(device, {0, 1, 128, 255});
        break;
      case DType::I8:
        expect_round_trip<std::int8_t>(device, {-128, -1, 0, 127});
        break;
      case DType::U16:
        expect_round_trip<std::uint16_t>(device, {0, 1, 0x8000, 0xffff});
        break;
      case DType::I16:
        expect_round_trip<std::int16_t>(device, {-32768, -1, 0, 32767});
        break;
      case DType::U64:
        expect_round_trip<std::uint64_t>(device, {0, 1, 1ULL << 63, ~0ULL});
        break;
      case DType::F16:  // the bits: -0, 1, 65504, the smallest subnormal, NaN
        expect_round_trip<std::uint16_t>(device, {0x8000, 0x3C00, 0x7BFF, 0x0001, 0x7E00});
        break;
      case DType::BF16:  // the bits: -0, 1, the largest finite, a subnormal, NaN
        expect_round_trip<std::uint16_t>(device, {0x8000, 0x3F80, 0x7F7F, 0x0001, 0x7FC0});
        break;
      case DType::Token:
        ADD_FAILURE() << "kAllDTypes lists only array dtypes";
        break;
    }
  }
  std::vector<float> large(1 << 20);
  for (std::size_t i = 0; i < large.size(); ++i) large[i] = static_cast<float>(i) * 0.5f;
  expect_round_trip(device, large);
}

TEST(Buffers, EmptyBuffersWork) {
  OpenCLDevice& device = device_under_test();
  auto empty = device.upload(nullptr, 0);
  EXPECT_EQ(empty->bytes(), 0u);
  device.download(*empty, nullptr, 0);
  device.wait(*empty);
  auto copy = device.copy_from(*empty);
  EXPECT_EQ(copy->bytes(), 0u);
  device.download(*copy, nullptr, 0);
  EXPECT_TRUE(dynamic_cast<OpenCLBuffer&>(*copy).is_ready());
}

TEST(Buffers, RejectsBadDownloads) {
  OpenCLDevice& device = device_under_test();
  auto buffer = upload(device, std::vector<float>{1, 2});
  std::vector<float> host(3);
  EXPECT_THROW(device.download(*buffer, host.data(), 12), InvalidArgumentError);
  EXPECT_THROW(device.download(*buffer, nullptr, 8), InvalidArgumentError);
  EXPECT_THROW(device.upload(nullptr, 8), InvalidArgumentError);
}

TEST(Executable, AddsTwoFloatBuffers) {
  OpenCLDevice& device = device_under_test();
  constexpr std::size_t n = 1000;
  OpenCLExecutable add(device, add_plan(n));
  EXPECT_EQ(add.num_inputs(), 2u);
  EXPECT_GT(add.info().compile_seconds(), 0.0);
  EXPECT_NE(add.info().source.find("__kernel void add"), std::string::npos);
  ASSERT_EQ(add.info().kernels.size(), 1u);

  std::vector<float> a(n), b(n);
  for (std::size_t i = 0; i < n; ++i) {
    a[i] = static_cast<float>(i);
    b[i] = 0.25f * static_cast<float>(i) - 3.0f;
  }
  std::vector<std::shared_ptr<Buffer>> inputs = {upload(device, a), upload(device, b)};
  auto outputs = add.run(inputs);
  ASSERT_EQ(outputs.size(), 1u);
  EXPECT_EQ(outputs[0]->bytes(), n * 4);
  auto out = download<float>(device, *outputs[0]);
  for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(out[i], a[i] + b[i]) << "element " << i;
}

TEST(Executable, TwoLaunchesThroughATemp) {
  OpenCLDevice& device = device_under_test();
  constexpr std::size_t n = 4096;
  ProgramPlan plan;
  plan.source = R"(
    __kernel void scale(__global const float* a, __global float* t) {
      size_t i = get_global_id(0);
      t[i] = a[i] * 3.0f;
    }
    __kernel void add(__global const float* t, __global const float* b, __global float* out) {
      size_t i = get_global_id(0);
      out[i] = t[i] + b[i];
    })";
  plan.buffers = {{Role::Input, 0, n * 4},
                  {Role::Input, 1, n * 4},
                  {Role::Temp, 0, n * 4},
                  {Role::Output, 0, n * 4}};
  plan.steps = {StepPlan::of({"scale", {0, 2}, {2}, n, 64}),
                StepPlan::of({"add", {2, 1, 3}, {3}, n, 64})};
  plan.outputs = {3};
  OpenCLExecutable exe(device, std::move(plan));

  std::vector<float> a(n), b(n);
  for (std::size_t i = 0; i < n; ++i) {
    a[i] = static_cast<float>(i % 97);
    b[i] = static_cast<float>(i % 13) - 6.0f;
  }
  std::vector<std::shared_ptr<Buffer>> inputs = {upload(device, a), upload(device, b)};
  for (int repeat = 0; repeat < 3; ++repeat) {
    auto out = download<float>(device, *exe.run(inputs)[0]);
    for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(out[i], a[i] * 3.0f + b[i]) << "element " << i;
  }
}

TEST(Executable, OutputMayAliasAnInput) {
  OpenCLDevice& device = device_under_test();
  ProgramPlan plan = add_plan(8);
  plan.outputs = {0, 2, 1, 2};
  OpenCLExecutable exe(device, std::move(plan));
  std::vector<float> a = {1, 2, 3, 4, 5, 6, 7, 8}, b = {8, 7, 6, 5, 4, 3, 2, 1};
  std::vector<std::shared_ptr<Buffer>> inputs = {upload(device, a), upload(device, b)};
  auto outputs = exe.run(inputs);
  ASSERT_EQ(outputs.size(), 4u);
  EXPECT_EQ(outputs[0], inputs[0]);
  EXPECT_EQ(outputs[2], inputs[1]);
  EXPECT_EQ(outputs[1], outputs[3]);
  EXPECT_EQ(download<float>(device, *outputs[1]), std::vector<float>(8, 9.0f));
  EXPECT_EQ(download<float>(device, *outputs[0]), a);
}

TEST(Executable, EmptyLaunchLeavesValidEmptyBuffers) {
  OpenCLDevice& device = device_under_test();
  ProgramPlan plan = add_plan(0);
  OpenCLExecutable exe(device, std::move(plan));
  std::vector<std::shared_ptr<Buffer>> inputs = {device.upload(nullptr, 0),
                                                 device.upload(nullptr, 0)};
  auto outputs = exe.run(inputs);
  ASSERT_EQ(outputs.size(), 1u);
  EXPECT_EQ(outputs[0]->bytes(), 0u);
  EXPECT_TRUE(dynamic_cast<OpenCLBuffer&>(*outputs[0]).is_ready());
  device.download(*outputs[0], nullptr, 0);
}

TEST(Executable, RejectsBadInputs) {
  OpenCLDevice& device = device_under_test();
  OpenCLExecutable add(device, add_plan(4));
  auto good = upload(device, std::vector<float>{1, 2, 3, 4});
  auto short_one = upload(device, std::vector<float>{1, 2, 3});
  std::vector<std::shared_ptr<Buffer>> one = {good};
  EXPECT_THROW(add.run(one), InvalidArgumentError);
  std::vector<std::shared_ptr<Buffer>> wrong_size = {good, short_one};
  try {
    add.run(wrong_size);
    ADD_FAILURE() << "a 12-byte input was accepted for a 16-byte parameter";
  } catch (const InvalidArgumentError& e) {
    EXPECT_NE(std::string(e.what()).find("parameter 1"), std::string::npos) << e.what();
  }
  std::vector<std::shared_ptr<Buffer>> null_input = {good, nullptr};
  EXPECT_THROW(add.run(null_input), InvalidArgumentError);
}

TEST(Executable, RejectsInconsistentPlans) {
  OpenCLDevice& device = device_under_test();
  ProgramPlan writes_input = add_plan(4);
  writes_input.steps[0].launch.writes = {0};
  EXPECT_THROW((OpenCLExecutable(device, writes_input)), InvalidArgumentError);
  ProgramPlan bad_index = add_plan(4);
  bad_index.outputs = {7};
  EXPECT_THROW((OpenCLExecutable(device, bad_index)), InvalidArgumentError);
  ProgramPlan wrong_arity = add_plan(4);
  wrong_arity.steps[0].launch.args = {0, 2};
  EXPECT_THROW((OpenCLExecutable(device, wrong_arity)), InvalidArgumentError);
  ProgramPlan missing_kernel = add_plan(4);
  missing_kernel.steps[0].launch.kernel = "no_such_kernel";
  EXPECT_THROW((OpenCLExecutable(device, missing_kernel)), DeviceError);
}

TEST(Errors, AbsurdAllocationIsOutOfMemory) {
  OpenCLDevice& device = device_under_test();
  std::vector<float> small(4);
  const std::size_t absurd = std::size_t{1} << 50;
  try {
    device.upload(small.data(), absurd);  // the limit check comes before any copy
    ADD_FAILURE() << "a 1 PiB upload was accepted";
  } catch (const OutOfMemoryError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find(device.name()), std::string::npos) << message;
    EXPECT_NE(message.find(device.info().device_name), std::string::npos) << message;
    EXPECT_NE(message.find("CL_DEVICE_MAX_MEM_ALLOC_SIZE"), std::string::npos) << message;
    EXPECT_NE(message.find(std::to_string(absurd)), std::string::npos) << message;
    EXPECT_NE(message.find(std::to_string(device.info().max_alloc_bytes)), std::string::npos)
        << message;
  }
  // A plan whose output cannot exist fails in run(), before anything is enqueued.
  ProgramPlan plan = add_plan(4);
  plan.buffers[2].bytes = absurd;
  OpenCLExecutable exe(device, std::move(plan));
  std::vector<std::shared_ptr<Buffer>> inputs = {upload(device, small), upload(device, small)};
  EXPECT_THROW(exe.run(inputs), OutOfMemoryError);
}

TEST(Errors, BuildErrorShowsDeviceAndLog) {
  OpenCLDevice& device = device_under_test();
  ProgramPlan plan = add_plan(4);
  plan.source =
      "__kernel void add(__global float* a, __global float* b, __global float* c) {\n"
      "  c[0] = undeclared_thing + ;\n"
      "}\n";
  try {
    OpenCLExecutable exe(device, std::move(plan));
    ADD_FAILURE() << "a syntax error built";
  } catch (const BuildError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find(device.name()), std::string::npos) << message;
    EXPECT_NE(message.find(device.info().device_name), std::string::npos) << message;
    EXPECT_NE(message.find("CL_BUILD_PROGRAM_FAILURE"), std::string::npos) << message;
    EXPECT_NE(message.find("undeclared_thing"), std::string::npos) << message;  // a log line
    EXPECT_NE(message.find("weft codegen bug"), std::string::npos) << message;
  }
}

TEST(Programs, BuildsAreCachedBySourceAndOptions) {
  OpenCLDevice& device = device_under_test();
  const std::string source = add_plan(1).source;
  ClProgram first = device.build_program(source, "");
  ClProgram again = device.build_program(source, "");
  ClProgram other = device.build_program(source, "-cl-fast-relaxed-math");
  EXPECT_EQ(first.get(), again.get());
  EXPECT_NE(first.get(), other.get());
  OpenCLExecutable a(device, add_plan(4)), b(device, add_plan(8));
  EXPECT_EQ(a.program(), b.program());
}

TEST(Compile, ReusesTheExecutableOfAnEqualGraph) {
  OpenCLDevice& device = device_under_test();
  const char* text =
      "func @f(%0: f32[4], %1: f32[4]) -> (f32[4], f32[4]) {\n"
      "  %2 = add %0, %1 : f32[4]\n"
      "  return %2, %0\n"
      "}\n";
  auto first = device.compile(parse_graph(text));
  auto again = device.compile(parse_graph(text));
  EXPECT_EQ(first, again);
  EXPECT_GT(first->info().compile_seconds(), 0.0);
  EXPECT_FALSE(first->info().source.empty());
  std::vector<std::shared_ptr<Buffer>> inputs = {upload(device, std::vector<float>{1, 2, 3, 4}),
                                                 upload(device, std::vector<float>{5, 6, 7, 8})};
  auto outputs = first->run(inputs);
  ASSERT_EQ(outputs.size(), 2u);
  EXPECT_EQ(download<float>(device, *outputs[0]), (std::vector<float>{6, 8, 10, 12}));
  EXPECT_EQ(outputs[1], inputs[0]);
}

// Starts outside the index type's range (a u32 past 2^31, an i64 past 2^32) clamp to the last
// window, as the interpreter does, instead of wrapping first. IR text reaches the primitive
// directly; lax::dynamic_slice would clamp before it.
TEST(Compile, DynamicSliceStartsBeyondTheIndexTypeClamp) {
  OpenCLDevice& device = device_under_test();
  const char* text =
      "func @f(%x: f32[10], %u: u32[], %l: i64[], %v: f32[2]) -> (f32[2], f32[2], f32[10]) {\n"
      "  %a = dynamic_slice[sizes=[2]] %x, %u : f32[2]\n"
      "  %b = dynamic_slice[sizes=[2]] %x, %l : f32[2]\n"
      "  %c = dynamic_update_slice %x, %v, %u : f32[10]\n"
      "  return %a, %b, %c\n"
      "}\n";
  const Graph graph = parse_graph(text);
  std::vector<float> x(10);
  for (int i = 0; i < 10; ++i) x[static_cast<std::size_t>(i)] = static_cast<float>(i);
  for (const auto& [u, l] : {std::pair<std::uint32_t, std::int64_t>{3000000000u, 4294967300},
                             {4294967295u, -4294967290},
                             {2147483648u, 9000000000000000000}}) {
    std::vector<std::shared_ptr<Buffer>> inputs = {
        upload(device, x), upload(device, std::vector<std::uint32_t>{u}),
        upload(device, std::vector<std::int64_t>{l}), upload(device, std::vector<float>{-1, -2})};
    auto outputs = device.compile(graph)->run(inputs);
    const std::vector<HostArray> args = {
        HostArray::from<float>({10}, x), HostArray::from<std::uint32_t>({}, {u}),
        HostArray::from<std::int64_t>({}, {l}), HostArray::from<float>({2}, {-1, -2})};
    const std::vector<HostArray> expected = interpret(graph, args);
    for (std::size_t o = 0; o < outputs.size(); ++o) {
      const std::vector<float> got = download<float>(device, *outputs[o]);
      const auto* want = reinterpret_cast<const float*>(expected[o].raw());
      EXPECT_EQ(got, std::vector<float>(want, want + got.size()))
          << "output " << o << ", u=" << u << ", l=" << l;
    }
  }
}

TEST(Async, ManyRunsInFlightBeforeOneWait) {
  OpenCLDevice& device = device_under_test();
  constexpr std::size_t n = 256;
  constexpr int kRuns = 100;
  OpenCLExecutable add(device, add_plan(n));
  auto ones = upload(device, std::vector<float>(n, 1.0f));
  // A chain: each run reads the previous run's output, so only events order them.
  std::shared_ptr<Buffer> x = upload(device, std::vector<float>(n, 0.0f));
  std::vector<std::shared_ptr<Buffer>> independent;
  for (int r = 0; r < kRuns; ++r) {
    std::vector<std::shared_ptr<Buffer>> inputs = {x, ones};
    x = add.run(inputs)[0];
    std::vector<std::shared_ptr<Buffer>> fresh = {ones, ones};
    independent.push_back(add.run(fresh)[0]);
  }
  device.wait(*x);
  EXPECT_EQ(download<float>(device, *x), std::vector<float>(n, static_cast<float>(kRuns)));
  device.synchronize();
  for (const auto& buffer : independent) {
    EXPECT_TRUE(dynamic_cast<OpenCLBuffer&>(*buffer).is_ready());
    EXPECT_EQ(download<float>(device, *buffer), std::vector<float>(n, 2.0f));
  }
}

TEST(Async, RunReturnsBeforeASlowKernelCompletes) {
  OpenCLDevice& device = device_under_test();
  constexpr std::size_t n = 64;
  OpenCLExecutable slow(device, slow_plan(n));
  std::vector<std::uint32_t> seeds(n);
  for (std::size_t i = 0; i < n; ++i) seeds[i] = static_cast<std::uint32_t>(i * 2654435761u);
  auto seed_buffer = upload(device, seeds);

  // Warm up with a short run: PoCL finishes compiling a kernel at its first launch.
  std::vector<std::shared_ptr<Buffer>> quick = {seed_buffer,
                                                upload(device, std::vector<std::uint32_t>{10})};
  EXPECT_EQ(download<std::uint32_t>(device, *slow.run(quick)[0])[5], lcg(seeds[5], 10));

  constexpr std::uint32_t kSteps = 10'000'000;
  std::vector<std::shared_ptr<Buffer>> long_run = {
      seed_buffer, upload(device, std::vector<std::uint32_t>{kSteps})};
  auto start = std::chrono::steady_clock::now();
  auto out = slow.run(long_run)[0];
  auto returned = std::chrono::steady_clock::now();
  const bool ready_at_return = dynamic_cast<OpenCLBuffer&>(*out).is_ready();
  device.wait(*out);
  auto finished = std::chrono::steady_clock::now();
  using ms = std::chrono::duration<double, std::milli>;
  const double run_ms = ms(returned - start).count(), total_ms = ms(finished - start).count();
  EXPECT_FALSE(ready_at_return) << "run took " << run_ms << " ms of " << total_ms << " ms";
  EXPECT_LT(run_ms * 4, total_ms) << "run() seems to wait for the kernel";
  auto values = download<std::uint32_t>(device, *out);
  for (std::size_t i : {std::size_t{0}, std::size_t{17}, n - 1})
    EXPECT_EQ(values[i], lcg(seeds[i], kSteps)) << "element " << i;
}

// One kernel (one source, so one compiled work-group function per local size in PoCL) over
// ever wider grids while narrower runs are still in flight. PoCL 3.1 loads another function for
// the wider grid and released it for the narrower runs, aborting the process; weft orders the
// widening launch after them (runtime/pocl_grid_order.h).
TEST(Async, OneKernelOverWideningGridsWithNarrowerRunsInFlight) {
  OpenCLDevice& device = device_under_test();
  constexpr std::size_t kLocal = 16;
  constexpr std::uint32_t kSteps = 50'000;
  const std::vector<std::size_t> widths = {16, 64, 256, 1024, 4096};
  std::vector<std::unique_ptr<OpenCLExecutable>> runs;
  for (std::size_t n : widths)
    runs.push_back(std::make_unique<OpenCLExecutable>(device, slow_plan(n, kLocal)));
  std::vector<std::uint32_t> seeds(widths.back());
  for (std::size_t i = 0; i < seeds.size(); ++i)
    seeds[i] = static_cast<std::uint32_t>(i * 2654435761u + 7u);
  auto steps = upload(device, std::vector<std::uint32_t>{kSteps});
  std::vector<std::shared_ptr<Buffer>> seed_buffers;
  for (std::size_t n : widths)
    seed_buffers.push_back(
        upload(device, std::vector<std::uint32_t>(seeds.begin(), seeds.begin() + n)));
  struct Pending {
    std::size_t width;
    std::shared_ptr<Buffer> out;
  };
  std::vector<Pending> pending;
  for (std::size_t w = 0; w < widths.size(); ++w) {
    // Independent runs: nothing but the driver orders them.
    for (std::size_t narrower = 0; narrower <= w; ++narrower)
      for (int r = 0; r < 3; ++r) {
        std::vector<std::shared_ptr<Buffer>> inputs = {seed_buffers[narrower], steps};
        pending.push_back({widths[narrower], runs[narrower]->run(inputs)[0]});
      }
  }
  device.synchronize();
  for (const Pending& p : pending) {
    const auto values = download<std::uint32_t>(device, *p.out);
    ASSERT_EQ(values.size(), p.width);
    for (std::size_t i : {std::size_t{0}, p.width / 2, p.width - 1})
      EXPECT_EQ(values[i], lcg(seeds[i], kSteps)) << "width " << p.width << ", element " << i;
  }
}

TEST(Async, RunsFromManyThreads) {
  OpenCLDevice& device = device_under_test();
  constexpr std::size_t n = 512;
  OpenCLExecutable add(device, add_plan(n));
  std::vector<std::thread> threads;
  std::vector<int> failures(4, 0);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int r = 0; r < 25; ++r) {
        const float value = static_cast<float>(t * 100 + r);
        std::vector<std::shared_ptr<Buffer>> inputs = {upload(device, std::vector<float>(n, value)),
                                                       upload(device, std::vector<float>(n, 1))};
        auto out = download<float>(device, *add.run(inputs)[0]);
        if (out != std::vector<float>(n, value + 1)) ++failures[static_cast<std::size_t>(t)];
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(failures, std::vector<int>(4, 0));
}

}  // namespace
}  // namespace weft::opencl
