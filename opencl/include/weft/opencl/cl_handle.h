// Owning handles for OpenCL objects: copying retains, destruction releases, so a handle can
// be shared between buffers, executables and caches without manual reference counting.
#pragma once

#include <CL/cl.h>

#include <utility>

namespace weft::opencl {

// Reference-count operations per OpenCL object type; overloads pick the right API call.
inline void cl_retain(cl_context h) {
  clRetainContext(h);
}
inline void cl_release(cl_context h) {
  clReleaseContext(h);
}
inline void cl_retain(cl_command_queue h) {
  clRetainCommandQueue(h);
}
inline void cl_release(cl_command_queue h) {
  clReleaseCommandQueue(h);
}
inline void cl_retain(cl_mem h) {
  clRetainMemObject(h);
}
inline void cl_release(cl_mem h) {
  clReleaseMemObject(h);
}
inline void cl_retain(cl_program h) {
  clRetainProgram(h);
}
inline void cl_release(cl_program h) {
  clReleaseProgram(h);
}
inline void cl_retain(cl_kernel h) {
  clRetainKernel(h);
}
inline void cl_release(cl_kernel h) {
  clReleaseKernel(h);
}
inline void cl_retain(cl_event h) {
  clRetainEvent(h);
}
inline void cl_release(cl_event h) {
  clReleaseEvent(h);
}

template <typename T>
class ClHandle {
 public:
  ClHandle() = default;
  // Takes over the reference the creating call returned.
  explicit ClHandle(T handle) : handle_(handle) {}
  // Adds a reference of our own to a handle someone else owns.
  static ClHandle retain(T handle) {
    if (handle) cl_retain(handle);
    return ClHandle(handle);
  }

  ClHandle(const ClHandle& other) : handle_(other.handle_) {
    if (handle_) cl_retain(handle_);
  }
  ClHandle(ClHandle&& other) noexcept : handle_(std::exchange(other.handle_, nullptr)) {}
  ClHandle& operator=(ClHandle other) noexcept {
    std::swap(handle_, other.handle_);
    return *this;
  }
  ~ClHandle() {
    if (handle_) cl_release(handle_);
  }

  T get() const { return handle_; }
  explicit operator bool() const { return handle_ != nullptr; }
  // Gives up ownership without releasing.
  T release() { return std::exchange(handle_, nullptr); }
  void reset() { ClHandle().swap(*this); }
  void swap(ClHandle& other) noexcept { std::swap(handle_, other.handle_); }

 private:
  T handle_ = nullptr;
};

using ClContext = ClHandle<cl_context>;
using ClQueue = ClHandle<cl_command_queue>;
using ClMem = ClHandle<cl_mem>;
using ClProgram = ClHandle<cl_program>;
using ClKernel = ClHandle<cl_kernel>;
using ClEvent = ClHandle<cl_event>;

}  // namespace weft::opencl
