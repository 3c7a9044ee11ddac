#include "tiering/kernel_warmup.h"

#include <set>
#include <tuple>
#include <vector>

#include "runtime/pocl_grid_order.h"
#include "tiering/background_builds.h"
#include "weft/log.h"
#include "weft/opencl/cl_handle.h"
#include "weft/opencl/device.h"

namespace weft::opencl::detail {

namespace {

using WarmKey = std::tuple<std::string, std::size_t, bool>;  // kernel, local size, small grid

struct Warmup {
  OpenCLDevice& device;
  const std::unordered_map<const LaunchPlan*, cl_kernel>& kernels;
  const std::unordered_map<const LaunchPlan*, KernelGridOrder*>& grid_orders;
  cl_command_queue queue;
  std::set<WarmKey> done;
  int launches = 0;

  void block(const BlockPlan& plan) {
    for (const StepPlan& step : plan.steps) {
      if (step.kind == StepPlan::Kind::Launch)
        launch(plan, step.launch);
      else
        for (const BlockPlan& region : step.regions) block(region);
    }
  }

  void launch(const BlockPlan& plan, const LaunchPlan& launch) {
    // At exit, the kernels not compiled yet are left to their first launch (there is none).
    if (launch.global_size == 0 || background_builds_stopping()) return;
    const auto kernel = kernels.find(&launch);
    if (kernel == kernels.end()) return;
    // A driver-chosen local size depends on the global size: only the real one gives it.
    const std::size_t global =
        launch.local_size == 0 ? launch.global_size : warmup_global_size(launch);
    const bool small = launch.global_size < kPoclSmallGridLimit;
    if (!done.insert({launch.function_name(), launch.local_size, small}).second) return;
    std::size_t total = 0;
    for (int arg : launch.args) total += plan.buffers[static_cast<std::size_t>(arg)].bytes;
    if (total > kMaxWarmupBytes) return;
    std::vector<ClMem> scratch;
    cl_int status = CL_SUCCESS;
    for (std::size_t a = 0; a < launch.args.size(); ++a) {
      const std::size_t bytes =
          std::max<std::size_t>(plan.buffers[static_cast<std::size_t>(launch.args[a])].bytes, 1);
      ClMem mem(clCreateBuffer(device.context(), CL_MEM_READ_WRITE, bytes, nullptr, &status));
      if (status != CL_SUCCESS) return;
      const cl_uchar zero = 0;
      if (clEnqueueFillBuffer(queue, mem.get(), &zero, 1, 0, bytes, 0, nullptr, nullptr) !=
          CL_SUCCESS)
        return;
      cl_mem handle = mem.get();
      if (clSetKernelArg(kernel->second, static_cast<cl_uint>(a), sizeof(cl_mem), &handle) !=
          CL_SUCCESS)
        return;
      scratch.push_back(std::move(mem));
    }
    KernelGridOrder* order = nullptr;
    if (auto found = grid_orders.find(&launch); found != grid_orders.end()) order = found->second;
    std::unique_lock<std::mutex> grid_lock;
    std::vector<cl_event> wait;
    bool widens = false;
    if (order) {
      grid_lock = order->lock();
      widens = order->before_launch(global, wait);
    }
    cl_event done = nullptr;
    if (clEnqueueNDRangeKernel(queue, kernel->second, 1, nullptr, &global,
                               launch.local_size ? &launch.local_size : nullptr,
                               static_cast<cl_uint>(wait.size()),
                               wait.empty() ? nullptr : wait.data(), &done) != CL_SUCCESS)
      return;
    const ClEvent event(done);
    if (order) order->after_launch(widens, global, done);
    grid_lock = {};
    ++launches;
    // One at a time (PoCL compiles one kernel at a time anyway), so that an exit waits for
    // one compile, not for every one queued.
    clWaitForEvents(1, &done);
    // The scratch buffers are released once the queue finishes (OpenCL keeps them alive for
    // the commands enqueued on them).
  }
};

}  // namespace

std::size_t warmup_global_size(const LaunchPlan& launch) {
  if (launch.local_size == 0) return launch.global_size;
  if (launch.global_size < kPoclSmallGridLimit) return launch.local_size;
  return (kPoclSmallGridLimit + launch.local_size - 1) / launch.local_size * launch.local_size;
}

int warm_up_kernels(OpenCLDevice& device, const ProgramPlan& plan,
                    const std::unordered_map<const LaunchPlan*, cl_kernel>& kernels,
                    const std::unordered_map<const LaunchPlan*, KernelGridOrder*>& grid_orders) {
  cl_int status = CL_SUCCESS;
  ClQueue queue(clCreateCommandQueue(device.context(), device.id(), 0, &status));
  if (status != CL_SUCCESS) return 0;
  Warmup warmup{device, kernels, grid_orders, queue.get(), {}, 0};
  warmup.block(plan);
  if (clFinish(queue.get()) != CL_SUCCESS)
    log::debug("runtime", "warming the kernels of a program on " + device.label() +
                              " failed; they compile at their first launch");
  return warmup.launches;
}

}  // namespace weft::opencl::detail
