#include "weft/opencl/buffer.h"

#include <algorithm>
#include <utility>

#include "weft/opencl/buffer_pool.h"
#include "weft/opencl/cl_error.h"
#include "weft/opencl/device.h"

namespace weft::opencl {

OpenCLBuffer::OpenCLBuffer(OpenCLDevice& device, ClMem mem, std::size_t bytes, ClEvent ready)
    : device_(&device), mem_(std::move(mem)), bytes_(bytes), ready_(std::move(ready)) {
  if (bytes_) device_->count_buffer_bytes(static_cast<std::int64_t>(bytes_));
}

OpenCLBuffer::~OpenCLBuffer() {
  if (bytes_) device_->count_buffer_bytes(-static_cast<std::int64_t>(bytes_));
  if (!recyclable_ || !mem_) return;
  std::vector<ClEvent> pending = std::move(readers_);
  for (auto& e : prior_uses_) pending.push_back(std::move(e));
  if (ready_) pending.push_back(std::move(ready_));
  device_->recycle(std::max<std::size_t>(bytes_, 1), std::move(mem_), std::move(pending));
}

void OpenCLBuffer::make_recyclable(std::vector<ClEvent> prior_uses) {
  recyclable_ = true;
  prior_uses_ = std::move(prior_uses);
}

std::vector<ClEvent> OpenCLBuffer::take_prior_uses() {
  return std::exchange(prior_uses_, {});
}

void OpenCLBuffer::restore_prior_uses(std::vector<ClEvent> prior_uses) {
  for (ClEvent& e : prior_uses) prior_uses_.push_back(std::move(e));
}

void OpenCLBuffer::add_reader(ClEvent event) const {
  std::lock_guard lock(readers_mutex_);
  // Long-lived inputs (weights, a loop's captured values) are read by every call: keep only
  // unfinished readers. When the queue runs far ahead most are unfinished, so the next prune
  // waits until the list has doubled: amortised, each reader is queried about once.
  if (readers_.size() >= prune_at_) {
    prune_completed(readers_);
    prune_at_ = std::max<std::size_t>(32, 2 * readers_.size());
  }
  readers_.push_back(std::move(event));
}

Device& OpenCLBuffer::device() const {
  return *device_;
}

void OpenCLBuffer::set_failure(std::exception_ptr failure) {
  std::vector<std::function<void()>> listeners;
  {
    std::lock_guard lock(failure_mutex_);
    failure_ = std::move(failure);
    listeners.swap(failure_listeners_);
  }
  for (const auto& listener : listeners) listener();
}

void OpenCLBuffer::on_failure(std::function<void()> listener) {
  {
    std::lock_guard lock(failure_mutex_);
    if (!failure_) {
      failure_listeners_.push_back(std::move(listener));
      return;
    }
  }
  listener();
}

std::exception_ptr OpenCLBuffer::failure() const {
  std::lock_guard lock(failure_mutex_);
  return failure_;
}

void OpenCLBuffer::rethrow_failure() const {
  std::exception_ptr failure;
  {
    std::lock_guard lock(failure_mutex_);
    failure = failure_;
  }
  if (failure) std::rethrow_exception(failure);
}

bool OpenCLBuffer::pending_runtime_output() const {
  if (!runtime_output_ || !ready_) return false;
  cl_int status = CL_COMPLETE;
  check_cl(clGetEventInfo(ready_.get(), CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof(status), &status,
                          nullptr),
           "clGetEventInfo", device_->label());
  if (status < 0) {
    rethrow_failure();
    throw_cl_error(status, "the run that was to write this buffer", device_->label());
  }
  return status != CL_COMPLETE;
}

bool OpenCLBuffer::settled() const {
  if (!ready_) return true;
  cl_int status = CL_COMPLETE;
  if (clGetEventInfo(ready_.get(), CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof(status), &status,
                     nullptr) != CL_SUCCESS)
    return true;  // a broken event never completes later either
  return status == CL_COMPLETE || status < 0;
}

bool OpenCLBuffer::is_ready() const {
  if (!ready_) return true;
  cl_int status = CL_COMPLETE;
  check_cl(clGetEventInfo(ready_.get(), CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof(status), &status,
                          nullptr),
           "clGetEventInfo", device_->label());
  // A negative execution status is the error code of the failed command.
  if (status < 0) {
    rethrow_failure();
    throw_cl_error(status, "the command writing this buffer", device_->label());
  }
  return status == CL_COMPLETE;
}

void OpenCLBuffer::set_trace_sources(std::vector<telemetry::Id> sources) {
  std::lock_guard lock(trace_mutex_);
  trace_sources_ = std::move(sources);
}

std::vector<telemetry::Id> OpenCLBuffer::trace_sources() const {
  std::lock_guard lock(trace_mutex_);
  return trace_sources_;
}

}  // namespace weft::opencl
