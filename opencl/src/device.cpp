#include "weft/opencl/device.h"

#include "runtime/host_tasks.h"

#include "runtime/device_runtime.h"
#include "runtime/fork_guard.h"
#include "runtime/run_telemetry.h"

#include "discovery.h"

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdlib>
#include <mutex>
#include <sstream>
#include <vector>

#include "weft/error.h"
#include "weft/ir/text.h"
#include "weft/log.h"
#include "weft/opencl/cl_error.h"
#include "weft/opencl/codegen.h"
#include "weft/opencl/executable.h"

namespace weft::opencl {

namespace {

// A transfer outside any run (parent 0): timed by the command's profile, or on this thread.
telemetry::Span transfer_span(const char* name, std::size_t bytes, const std::string& device) {
  telemetry::Span span;
  span.id = telemetry::next_id();
  span.kind = telemetry::SpanKind::transfer;
  span.name = name;
  span.args = {{"bytes", std::to_string(bytes)}, {"device", device}};
  return span;
}

// WEFT_MATH=weft|builtin picks who computes f32 transcendentals; unset, weft's functions on
// CPUs (they vectorise, the drivers' do not) and the driver's on GPUs. Read at each compile, so
// a program compiled after a change uses the new choice (it is part of the cache key).
bool use_builtin_math(bool is_gpu) {
  const char* value = std::getenv("WEFT_MATH");
  if (!value || !*value) return is_gpu;
  const std::string_view choice(value);
  if (choice == "builtin") return true;
  if (choice == "weft") return false;
  static std::once_flag warned;
  std::call_once(warned, [&] {
    log::warning("codegen", "WEFT_MATH=\"" + std::string(choice) +
                                "\" is neither \"weft\" nor \"builtin\"; using the default (" +
                                (is_gpu ? "builtin" : "weft") + ")");
  });
  return is_gpu;
}

// WEFT_DETERMINISTIC_SCATTER=1: scatters give the same sums on every run (see
// DeviceCaps::deterministic_scatter). Read at each compile; part of the cache key.
bool deterministic_scatter() {
  const char* value = std::getenv("WEFT_DETERMINISTIC_SCATTER");
  return value && std::string_view(value) == "1";
}

}  // namespace

namespace {

constexpr int kBuildLogLines = 40;
constexpr std::string_view kBuildComponent = "build";

// "1073741824 bytes (1.0 GiB)": exact for scripts, rounded for people.
std::string describe_bytes(std::uint64_t bytes) {
  static constexpr const char* kUnits[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  std::ostringstream out;
  out << bytes << " bytes";
  if (bytes >= 1024) {
    double value = static_cast<double>(bytes);
    int unit = -1;
    while (value >= 1024 && unit < 5) {
      value /= 1024;
      ++unit;
    }
    out.precision(1);
    out << std::fixed << " (" << value << ' ' << kUnits[unit] << ')';
  }
  return out.str();
}

std::string build_log(cl_program program, cl_device_id device) {
  std::size_t size = 0;
  if (clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, 0, nullptr, &size) !=
          CL_SUCCESS ||
      size == 0)
    return {};
  std::string log(size, '\0');
  if (clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, size, log.data(), nullptr) !=
      CL_SUCCESS)
    return {};
  while (!log.empty() && (log.back() == '\0' || log.back() == '\n')) log.pop_back();
  return log;
}

// The first `limit` lines, with a note saying how many were left out.
std::string head_lines(const std::string& text, int limit) {
  std::istringstream in(text);
  std::string line, out;
  int count = 0;
  while (std::getline(in, line)) {
    if (count < limit) out += "  " + line + "\n";
    ++count;
  }
  if (count > limit) out += "  ... (" + std::to_string(count - limit) + " more lines)\n";
  return out;
}

}  // namespace

namespace {
// An eighth of device memory, within [64 MiB, 1 GiB]: enough for the working set of repeated
// calls without holding much memory the application might need elsewhere.
std::size_t pool_capacity(const DeviceInfo& info) {
  return std::clamp<std::size_t>(static_cast<std::size_t>(info.global_mem_bytes / 8),
                                 std::size_t{64} << 20, std::size_t{1} << 30);
}
}  // namespace

OpenCLDevice::OpenCLDevice(DeviceInfo info, cl_device_id id, ClContext context, ClQueue queue)
    : info_(std::move(info)),
      id_(id),
      context_(std::move(context)),
      queue_(std::move(queue)),
      pool_(std::make_unique<BufferPool>(pool_capacity(info_), info_.name)),
      in_use_("device_memory_bytes", info_.name),
      runtime_(std::make_unique<detail::DeviceRuntime>(info_.name, label())) {}

OpenCLDevice::~OpenCLDevice() = default;

void OpenCLDevice::recycle(std::size_t allocation_bytes, ClMem mem, std::vector<ClEvent> pending) {
  pool_->give(allocation_bytes, std::move(mem), std::move(pending));
}

std::string OpenCLDevice::description() const {
  return info_.platform_name + ": " + info_.device_name;
}

std::string OpenCLDevice::label() const {
  return info_.name + " (" + info_.device_name + ")";
}

bool OpenCLDevice::supports(DType dtype) const {
  return dtype != DType::F64 || info_.fp64;
}

DeviceCaps OpenCLDevice::caps() const {
  DeviceCaps caps;
  caps.fp64 = info_.fp64;
  caps.max_work_group_size = info_.max_work_group_size;
  caps.local_mem_bytes = static_cast<std::size_t>(info_.local_mem_bytes);
  caps.compute_units = info_.compute_units;
  caps.is_gpu = info_.type == DeviceType::Gpu;
  caps.native_float_vector_width = info_.native_float_vector_width;
  caps.builtin_math = use_builtin_math(caps.is_gpu);
  caps.deterministic_scatter = deterministic_scatter();
  caps.int64_atomics = info_.int64_atomics;
  return caps;
}

void OpenCLDevice::check_allocation(std::size_t bytes) const {
  if (bytes <= info_.max_alloc_bytes) return;
  throw OutOfMemoryError("weft: cannot allocate " + describe_bytes(bytes) + " on " + label() +
                         ": the largest single buffer this device allows "
                         "(CL_DEVICE_MAX_MEM_ALLOC_SIZE) is " +
                         describe_bytes(info_.max_alloc_bytes) +
                         ". Work on smaller arrays or choose a device with a larger limit "
                         "(WEFT_DEVICE; `clinfo` lists each device's limit).");
}

std::shared_ptr<OpenCLBuffer> OpenCLDevice::allocate(std::size_t bytes) {
  check_allocation(bytes);
  if (auto reused = pool_->take(std::max<std::size_t>(bytes, 1))) {
    auto buffer = std::make_shared<OpenCLBuffer>(*this, std::move(reused->mem), bytes);
    buffer->make_recyclable(std::move(reused->pending));
    return buffer;
  }
  cl_int status = CL_SUCCESS;
  cl_mem mem = clCreateBuffer(context_.get(), CL_MEM_READ_WRITE, std::max<std::size_t>(bytes, 1),
                              nullptr, &status);
  if (status != CL_SUCCESS)
    throw_cl_error(status, "clCreateBuffer (" + describe_bytes(bytes) + ")", label());
  created_bytes_ += std::max<std::size_t>(bytes, 1);
  ++created_buffers_;
  auto buffer = std::make_shared<OpenCLBuffer>(*this, ClMem(mem), bytes);
  buffer->make_recyclable({});
  return buffer;
}

OpenCLDevice::MemoryStats OpenCLDevice::memory_stats() const {
  return {created_bytes_.load(), created_buffers_.load(), pool_->pooled_bytes(),
          static_cast<std::size_t>(in_use_.value())};
}

std::shared_ptr<OpenCLBuffer> OpenCLDevice::make_token(ClEvent ready) {
  std::call_once(token_mem_once_, [&] {
    cl_int status = CL_SUCCESS;
    cl_mem mem = clCreateBuffer(context_.get(), CL_MEM_READ_WRITE, 1, nullptr, &status);
    if (status != CL_SUCCESS) throw_cl_error(status, "clCreateBuffer (a token)", label());
    token_mem_ = ClMem(mem);
  });
  return std::make_shared<OpenCLBuffer>(*this, token_mem_, 0, std::move(ready));
}

std::shared_ptr<Buffer> OpenCLDevice::token_after(std::span<const std::shared_ptr<Buffer>> tokens) {
  std::vector<std::shared_ptr<OpenCLBuffer>> inputs;
  for (const auto& token : tokens) {
    auto buffer = std::dynamic_pointer_cast<OpenCLBuffer>(token);
    if (!buffer || buffer->bytes() != 0)
      throw InvalidArgumentError("weft: token_after on " + label() +
                                 " was given something that is not a token (a zero-byte OpenCL "
                                 "buffer)");
    inputs.push_back(std::move(buffer));
  }
  return detail::join_tokens(*this, inputs, inputs);
}

std::shared_ptr<Buffer> OpenCLDevice::upload(const void* host, std::size_t bytes) {
  detail::refuse_if_forked(*this);
  check_allocation(bytes);
  if (bytes == 0) return allocate(0);
  if (!host)
    throw InvalidArgumentError("weft: upload to " + label() + " of " + describe_bytes(bytes) +
                               " from a null host pointer");
  cl_int status = CL_SUCCESS;
  const std::int64_t start_ns = telemetry::enabled() ? telemetry::now_ns() : 0;
  // COPY_HOST_PTR copies before returning, so the caller may free `host` at once and the
  // buffer needs no ready event.
  cl_mem mem = clCreateBuffer(context_.get(), CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, bytes,
                              const_cast<void*>(host), &status);
  if (status != CL_SUCCESS)
    throw_cl_error(status, "clCreateBuffer (" + describe_bytes(bytes) + ")", label());
  if (start_ns) {
    // The copy happens inside clCreateBuffer, on this thread.
    telemetry::Span span = transfer_span("upload", bytes, name());
    span.track = telemetry::this_thread_track();
    span.start_ns = start_ns;
    span.end_ns = telemetry::now_ns();
    telemetry::emit(std::move(span));
  }
  return std::make_shared<OpenCLBuffer>(*this, ClMem(mem), bytes);
}

void OpenCLDevice::download(const Buffer& buffer, void* host, std::size_t bytes) {
  detail::refuse_if_forked(*this);
  const auto* source = dynamic_cast<const OpenCLBuffer*>(&buffer);
  // Only the owning device's queue can read a buffer.
  if (!source || &source->opencl_device() != this) {
    buffer.device().download(buffer, host, bytes);
    return;
  }
  if (bytes > source->bytes())
    throw InvalidArgumentError("weft: download of " + describe_bytes(bytes) + " from a " +
                               describe_bytes(source->bytes()) + " buffer on " + label());
  if (bytes == 0) {
    wait(buffer);
    return;
  }
  if (!host)
    throw InvalidArgumentError("weft: download from " + label() + " into a null host pointer");
  // A runtime run's output is waited for on the host: no queued command waits on its event.
  if (source->pending_runtime_output()) wait(buffer);
  cl_event ready = source->ready_event();
  const bool recording = telemetry::enabled();
  cl_event read = nullptr;
  if (cl_int err =
          clEnqueueReadBuffer(queue_.get(), source->mem(), CL_TRUE, 0, bytes, host, ready ? 1 : 0,
                              ready ? &ready : nullptr, recording ? &read : nullptr)) {
    source->rethrow_failure();  // the run that was to write it failed: say why
    throw_cl_error(err, "clEnqueueReadBuffer", label());
  }
  if (read) {
    ClEvent event(read);
    detail::record_command(*this, event.get(), transfer_span("download", bytes, name()));
  }
}

void OpenCLDevice::wait(const Buffer& buffer) {
  detail::refuse_if_forked(*this);
  const auto* source = dynamic_cast<const OpenCLBuffer*>(&buffer);
  if (!source || &source->opencl_device() != this) {
    buffer.device().wait(buffer);
    return;
  }
  cl_event ready = source->ready_event();
  if (!ready) {
    source->rethrow_failure();
    return;
  }
  cl_int status = clWaitForEvents(1, &ready);
  if (status == CL_SUCCESS) {
    // A token completes even when the host step behind it failed; its failure says so.
    source->rethrow_failure();
    return;
  }
  // The event's own status names the failure better than the wait's generic error.
  cl_int execution = CL_COMPLETE;
  if (clGetEventInfo(ready, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof(execution), &execution,
                     nullptr) == CL_SUCCESS &&
      execution < 0)
    status = execution;
  source->rethrow_failure();
  throw_cl_error(status, "clWaitForEvents (the command writing this buffer)", label());
}

std::shared_ptr<Buffer> OpenCLDevice::copy_from(const Buffer& source) {
  detail::refuse_if_forked(*this);
  const auto* from = dynamic_cast<const OpenCLBuffer*>(&source);
  if (!from || from->opencl_device().context() != context()) {
    // Different contexts share no memory: go through the host.
    std::vector<std::byte> host(source.bytes());
    source.device().download(source, host.data(), host.size());
    return upload(host.data(), host.size());
  }
  // A runtime run's output is waited for on the host: no queued command waits on its event.
  if (from->pending_runtime_output()) from->opencl_device().wait(*from);
  auto copy = allocate(from->bytes());
  if (from->bytes() == 0) return copy;
  // Same context: enqueue on our queue; the source event orders it after the source's writer
  // even when that ran on another device's queue.
  std::vector<ClEvent> prior = copy->take_prior_uses();
  std::vector<cl_event> wait;
  if (from->ready_event()) wait.push_back(from->ready_event());
  for (const ClEvent& e : prior) wait.push_back(e.get());
  cl_event done = nullptr;
  check_cl(clEnqueueCopyBuffer(queue_.get(), from->mem(), copy->mem(), 0, 0, from->bytes(),
                               static_cast<cl_uint>(wait.size()),
                               wait.empty() ? nullptr : wait.data(), &done),
           "clEnqueueCopyBuffer", label());
  copy->set_ready_event(ClEvent(done));
  from->add_reader(ClEvent::retain(done));
  if (telemetry::enabled())
    detail::record_command(*this, done, transfer_span("copy", from->bytes(), name()));
  check_cl(clFlush(queue_.get()), "clFlush", label());
  return copy;
}

std::shared_ptr<Buffer> OpenCLDevice::fill(const void* pattern, std::size_t pattern_bytes,
                                           std::size_t bytes) {
  detail::refuse_if_forked(*this);
  if (pattern_bytes == 0 || bytes % pattern_bytes != 0 ||
      (pattern_bytes & (pattern_bytes - 1)) != 0 || pattern_bytes > 128)
    throw InvalidArgumentError("weft: fill on " + label() + " with a " +
                               std::to_string(pattern_bytes) + "-byte pattern over " +
                               describe_bytes(bytes) +
                               ": the pattern must be 1 to 128 bytes, a power of two, dividing "
                               "the buffer");
  auto filled = allocate(bytes);
  if (bytes == 0) return filled;
  std::vector<ClEvent> prior = filled->take_prior_uses();
  std::vector<cl_event> wait;
  for (const ClEvent& e : prior) wait.push_back(e.get());
  cl_event done = nullptr;
  // The pattern is copied before clEnqueueFillBuffer returns.
  check_cl(clEnqueueFillBuffer(queue_.get(), filled->mem(), pattern, pattern_bytes, 0, bytes,
                               static_cast<cl_uint>(wait.size()),
                               wait.empty() ? nullptr : wait.data(), &done),
           "clEnqueueFillBuffer (" + describe_bytes(bytes) + ")", label());
  filled->set_ready_event(ClEvent(done));
  if (telemetry::enabled())
    detail::record_command(*this, done, transfer_span("fill", bytes, name()));
  check_cl(clFlush(queue_.get()), "clFlush", label());
  return filled;
}

void OpenCLDevice::synchronize() {
  detail::refuse_if_forked(*this);
  check_cl(clFinish(queue_.get()), "clFinish", label());
}

ClProgram OpenCLDevice::build_program(const std::string& source, const std::string& options) {
  auto key = std::make_pair(source, options);
  {
    std::lock_guard lock(programs_mutex_);
    if (std::optional<ClProgram> found = programs_.find(key)) return *found;
  }
  // Built outside the lock so other builds on this device proceed; a racing build of the same
  // source only wastes time, and the first one stored wins.
  const char* text = source.c_str();
  std::size_t length = source.size();
  cl_int status = CL_SUCCESS;
  ClProgram program(clCreateProgramWithSource(context_.get(), 1, &text, &length, &status));
  check_cl(status, "clCreateProgramWithSource", label());
  status = clBuildProgram(program.get(), 1, &id_, options.c_str(), nullptr, nullptr);
  if (status != CL_SUCCESS) {
    if (is_out_of_memory(status)) throw_cl_error(status, "clBuildProgram", label());
    std::string log = build_log(program.get(), id_);
    // PoCL fails every build, with an empty log, when it cannot write its kernel cache.
    if (info_.platform_name.find("Portable Computing Language") != std::string::npos) {
      if (auto problem = detail::pocl_cache_problem("PoCL then fails every program build"))
        throw BuildError("weft: " + label() + " could not build a program: " + *problem);
    }
    throw BuildError("weft: the OpenCL compiler rejected a generated program on " + label() + ": " +
                     std::string(cl_error_name(status)) + " (" + std::to_string(status) +
                     "). This is a weft codegen bug; please report it with the build log below, "
                     "the graph (weft::print_graph) and the output of `clinfo`.\nBuild options: " +
                     (options.empty() ? "(none)" : options) + "\nBuild log:\n" +
                     (log.empty() ? "  (empty)\n" : head_lines(log, kBuildLogLines)));
  }
  // Generated code builds without diagnostics (tests assert it), so a successful build's log
  // is only for people debugging codegen: WEFT_LOG=build=debug.
  if (log::enabled(kBuildComponent, log::Level::debug)) {
    const std::string log = build_log(program.get(), id_);
    log::debug(kBuildComponent,
               "built " + std::to_string(source.size()) + " bytes of OpenCL C on " + label() +
                   " with \"" + options +
                   "\": " + (log.empty() ? "empty build log" : "build log:\n" + log));
  }
  std::vector<ClProgram> released;  // after the lock
  std::lock_guard lock(programs_mutex_);
  // A racing build of the same source stored first: its program wins.
  if (std::optional<ClProgram> first = programs_.find(key)) return *first;
  released = programs_.put(std::move(key), program);
  return program;
}

ClProgram OpenCLDevice::build_program_from_binary(std::span<const std::uint8_t> binary,
                                                  const std::string& options) {
  const unsigned char* bytes = binary.data();
  std::size_t length = binary.size();
  cl_int binary_status = CL_SUCCESS;
  cl_int status = CL_SUCCESS;
  ClProgram program(
      clCreateProgramWithBinary(context_.get(), 1, &id_, &length, &bytes, &binary_status, &status));
  if (status == CL_SUCCESS && binary_status != CL_SUCCESS) status = binary_status;
  if (status != CL_SUCCESS) {
    if (is_out_of_memory(status)) throw_cl_error(status, "clCreateProgramWithBinary", label());
    throw BuildError("weft: " + label() + " refused a stored program binary: " +
                     std::string(cl_error_name(status)) + " (" + std::to_string(status) + ")");
  }
  status = clBuildProgram(program.get(), 1, &id_, options.c_str(), nullptr, nullptr);
  if (status != CL_SUCCESS) {
    if (is_out_of_memory(status)) throw_cl_error(status, "clBuildProgram", label());
    std::string log = build_log(program.get(), id_);
    throw BuildError("weft: " + label() + " could not build a stored program binary: " +
                     std::string(cl_error_name(status)) + " (" + std::to_string(status) + ")" +
                     (log.empty() ? std::string() : "\n" + head_lines(log, kBuildLogLines)));
  }
  return program;
}

void OpenCLDevice::forget_compiled() {
  executables_.clear();
  std::vector<ClProgram> released;  // after the lock
  std::lock_guard lock(programs_mutex_);
  released = programs_.clear();
}

}  // namespace weft::opencl
