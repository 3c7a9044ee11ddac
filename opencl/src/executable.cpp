#include "weft/opencl/executable.h"

#include "cache_writer.h"
#include "discovery.h"

#include <algorithm>
#include <chrono>
#include <shared_mutex>
#include <string>

#include "weft/error.h"
#include "weft/opencl/buffer.h"
#include "weft/opencl/cl_error.h"
#include "weft/opencl/device.h"

namespace weft::opencl {

namespace {

using Role = BufferPlan::Role;

bool contains(const std::vector<int>& values, int value) {
  return std::find(values.begin(), values.end(), value) != values.end();
}

[[noreturn]] void bad_plan(const std::string& what) {
  throw InvalidArgumentError("weft: invalid ProgramPlan: " + what +
                             ". Plans come from weft codegen, so this is a weft bug; please "
                             "report it.");
}

// What a run knows about one buffer: the command that last wrote it and the commands that
// read it since, so that a later writer can wait for them on an out-of-order queue.
struct Hazards {
  ClEvent last_write;
  std::vector<ClEvent> reads;
};

}  // namespace

OpenCLExecutable::OpenCLExecutable(OpenCLDevice& device, ProgramPlan plan)
    : device_(&device), plan_(std::move(plan)) {
  validate_plan();
  auto start = std::chrono::steady_clock::now();
  program_ = device.build_program(plan_.source, plan_.build_options);
  create_kernels();
  std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - start;
  plan_.info.compile_seconds = elapsed.count();
}

OpenCLExecutable::OpenCLExecutable(OpenCLDevice& device, ProgramPlan plan, ClProgram program)
    : device_(&device), plan_(std::move(plan)), program_(std::move(program)) {
  validate_plan();
  create_kernels();
}

OpenCLExecutable::~OpenCLExecutable() = default;

void OpenCLExecutable::store_after_first_run(std::unique_ptr<detail::CacheWrite> write) {
  std::lock_guard lock(run_mutex_);
  cache_write_ = std::move(write);
}

void OpenCLExecutable::set_cache_outcome(std::string status, std::string key) {
  plan_.info.cache_status = std::move(status);
  plan_.info.cache_key = std::move(key);
}

void OpenCLExecutable::create_kernels() {
  OpenCLDevice& device = *device_;
  for (const BufferPlan& buffer : plan_.buffers)
    if (buffer.role == Role::Input)
      num_inputs_ = std::max(num_inputs_, static_cast<std::size_t>(buffer.index) + 1);
  std::vector<std::string> names;
  for (const LaunchPlan& launch : plan_.launches) {
    auto found = std::find(names.begin(), names.end(), launch.kernel);
    if (found == names.end()) {
      cl_int status = CL_SUCCESS;
      ClKernel kernel(clCreateKernel(program_.get(), launch.kernel.c_str(), &status));
      check_cl(status, "clCreateKernel(\"" + launch.kernel + "\")", device.label());
      cl_uint arity = 0;
      check_cl(clGetKernelInfo(kernel.get(), CL_KERNEL_NUM_ARGS, sizeof(arity), &arity, nullptr),
               "clGetKernelInfo", device.label());
      if (arity != launch.args.size())
        bad_plan("kernel " + launch.kernel + " takes " + std::to_string(arity) +
                 " arguments but its launch passes " + std::to_string(launch.args.size()));
      found = names.insert(names.end(), launch.kernel);
      kernels_.push_back(std::move(kernel));
    }
    launch_kernel_.push_back(static_cast<std::size_t>(found - names.begin()));
  }
  if (plan_.info.source.empty()) plan_.info.source = plan_.source;
}

void OpenCLExecutable::set_compile_facts(std::size_t num_inputs, double compile_seconds) {
  num_inputs_ = std::max(num_inputs_, num_inputs);
  plan_.info.compile_seconds = compile_seconds;
}

void OpenCLExecutable::validate_plan() const {
  const int count = static_cast<int>(plan_.buffers.size());
  auto check_index = [&](int index, const std::string& where) {
    if (index < 0 || index >= count)
      bad_plan(where + " names buffer " + std::to_string(index) + " of " + std::to_string(count));
  };
  for (const BufferPlan& buffer : plan_.buffers)
    if (buffer.index < 0)
      bad_plan("a buffer has the negative index " + std::to_string(buffer.index));
  for (std::size_t l = 0; l < plan_.launches.size(); ++l) {
    const LaunchPlan& launch = plan_.launches[l];
    const std::string where = "launch " + std::to_string(l) + " (" + launch.kernel + ")";
    for (int arg : launch.args) check_index(arg, where);
    for (int written : launch.writes) {
      check_index(written, where);
      if (!contains(launch.args, written))
        bad_plan(where + " writes buffer " + std::to_string(written) + " it does not take");
      // Inputs belong to the caller and arrays are immutable.
      if (plan_.buffers[static_cast<std::size_t>(written)].role == Role::Input)
        bad_plan(where + " writes input buffer " + std::to_string(written));
    }
    if (launch.local_size != 0 && launch.global_size % launch.local_size != 0)
      bad_plan(where + " has global size " + std::to_string(launch.global_size) +
               ", not a multiple of its local size " + std::to_string(launch.local_size));
  }
  for (int output : plan_.outputs) check_index(output, "an output");
}

std::vector<std::shared_ptr<Buffer>> OpenCLExecutable::run(
    std::span<const std::shared_ptr<Buffer>> inputs) {
  OpenCLDevice& device = *device_;
  if (inputs.size() != num_inputs_)
    throw InvalidArgumentError("weft: the compiled function takes " + std::to_string(num_inputs_) +
                               " inputs but was given " + std::to_string(inputs.size()));
  std::vector<std::shared_ptr<OpenCLBuffer>> given(inputs.size());
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i]) throw InvalidArgumentError("weft: parameter " + std::to_string(i) + " is null");
    given[i] = std::dynamic_pointer_cast<OpenCLBuffer>(inputs[i]);
    if (!given[i] || &given[i]->opencl_device() != &device)
      throw InvalidArgumentError("weft: parameter " + std::to_string(i) + " lives on " +
                                 inputs[i]->device().name() +
                                 " but the function was compiled for " + device.name() +
                                 "; move it there first (Device::copy_from)");
  }
  for (const BufferPlan& buffer : plan_.buffers) {
    if (buffer.role != Role::Input) continue;
    const auto& input = given[static_cast<std::size_t>(buffer.index)];
    if (input->bytes() != buffer.bytes)
      throw InvalidArgumentError("weft: parameter " + std::to_string(buffer.index) + " holds " +
                                 std::to_string(input->bytes()) +
                                 " bytes but the function was "
                                 "compiled for " +
                                 std::to_string(buffer.bytes) +
                                 "; its dtype or shape differs from the traced one");
  }

  detail::arm_exit_drain();
  // Everything below touches the kernels' argument state.
  std::lock_guard lock(run_mutex_);
  std::vector<std::shared_ptr<OpenCLBuffer>> slots;
  std::vector<Hazards> hazards(plan_.buffers.size());
  slots.reserve(plan_.buffers.size());
  for (std::size_t b = 0; b < plan_.buffers.size(); ++b) {
    const BufferPlan& buffer = plan_.buffers[b];
    slots.push_back(buffer.role == Role::Input ? given[static_cast<std::size_t>(buffer.index)]
                                               : device.allocate(buffer.bytes));
    hazards[b].last_write = ClEvent::retain(slots.back()->ready_event());
    // Pooled memory may still be in use by commands of its previous owner.
    if (buffer.role != Role::Input) hazards[b].reads = slots.back()->take_prior_uses();
  }

  std::shared_lock gate(detail::launch_gate());
  std::vector<ClEvent> first_run_events;  // only while a cache write waits for them
  if (cache_write_) cache_write_->first_run_start = std::chrono::steady_clock::now();
  std::vector<cl_event> wait_list;
  for (std::size_t l = 0; l < plan_.launches.size(); ++l) {
    const LaunchPlan& launch = plan_.launches[l];
    // An empty launch writes nothing; its buffers stay valid, empty and ready.
    if (launch.global_size == 0) continue;
    cl_kernel kernel = kernels_[launch_kernel_[l]].get();
    wait_list.clear();
    for (std::size_t a = 0; a < launch.args.size(); ++a) {
      const auto b = static_cast<std::size_t>(launch.args[a]);
      cl_mem mem = slots[b]->mem();
      // Messages are built only on failure: this is the per-call dispatch path.
      if (cl_int err = clSetKernelArg(kernel, static_cast<cl_uint>(a), sizeof(cl_mem), &mem))
        throw_cl_error(err, "clSetKernelArg(" + launch.kernel + ", " + std::to_string(a) + ")",
                       device.label());
      if (hazards[b].last_write) wait_list.push_back(hazards[b].last_write.get());
      if (contains(launch.writes, launch.args[a]))
        for (const ClEvent& read : hazards[b].reads) wait_list.push_back(read.get());
    }
    cl_event done = nullptr;
    if (cl_int err = clEnqueueNDRangeKernel(device.queue(), kernel, 1, nullptr, &launch.global_size,
                                            launch.local_size ? &launch.local_size : nullptr,
                                            static_cast<cl_uint>(wait_list.size()),
                                            wait_list.empty() ? nullptr : wait_list.data(), &done))
      throw_cl_error(err, "clEnqueueNDRangeKernel(" + launch.kernel + ")", device.label());
    ClEvent event(done);
    if (cache_write_) first_run_events.push_back(event);
    for (int arg : launch.args) {
      Hazards& h = hazards[static_cast<std::size_t>(arg)];
      if (contains(launch.writes, arg)) {
        h.last_write = event;
        h.reads.clear();
        slots[static_cast<std::size_t>(arg)]->set_ready_event(event);
      } else {
        h.reads.push_back(event);
        slots[static_cast<std::size_t>(arg)]->add_reader(event);
      }
    }
  }
  // Without a flush some drivers hold the commands until the next blocking call.
  if (cl_int err = clFlush(device.queue())) throw_cl_error(err, "clFlush", device.label());
  gate.unlock();  // before scheduling: after exit the write runs on this thread and takes it
  if (cache_write_) {
    cache_write_->first_run_events = std::move(first_run_events);
    detail::schedule_cache_write(std::move(*cache_write_));
    cache_write_.reset();
  }

  std::vector<std::shared_ptr<Buffer>> outputs;
  outputs.reserve(plan_.outputs.size());
  for (int output : plan_.outputs) {
    const BufferPlan& buffer = plan_.buffers[static_cast<std::size_t>(output)];
    // An output that is a parameter is the caller's own buffer: arrays are immutable.
    if (buffer.role == Role::Input)
      outputs.push_back(inputs[static_cast<std::size_t>(buffer.index)]);
    else
      outputs.push_back(slots[static_cast<std::size_t>(output)]);
  }
  // Temps die with `slots` here; OpenCL keeps their memory until the launches finish.
  return outputs;
}

}  // namespace weft::opencl
