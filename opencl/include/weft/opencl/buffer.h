// Device memory on one OpenCL device plus the event that marks its contents ready.
#pragma once

#include <CL/cl.h>

#include <cstddef>

#include "weft/backend.h"
#include "weft/opencl/cl_handle.h"

namespace weft::opencl {

class OpenCLDevice;

class OpenCLBuffer final : public Buffer {
 public:
  // Owns `mem`. `bytes` is the logical size; empty arrays still hold a 1-byte allocation
  // because OpenCL rejects size-0 buffers. A null `ready` event means ready now.
  OpenCLBuffer(OpenCLDevice& device, ClMem mem, std::size_t bytes, ClEvent ready = {});
  // Shared through shared_ptr only: a copy would alias the same device memory.
  OpenCLBuffer(const OpenCLBuffer&) = delete;
  OpenCLBuffer& operator=(const OpenCLBuffer&) = delete;

  Device& device() const override;
  std::size_t bytes() const override { return bytes_; }

  OpenCLDevice& opencl_device() const { return *device_; }
  cl_mem mem() const { return mem_.get(); }
  // The command that writes the contents; null when they were ready at creation.
  cl_event ready_event() const { return ready_.get(); }
  // For the runtime: the buffer becomes ready when `event` completes. Only valid before the
  // buffer is handed to anyone else, since buffers are immutable once shared.
  void set_ready_event(ClEvent event) { ready_ = std::move(event); }
  // Polls without blocking; throws DeviceError when the writing command failed.
  bool is_ready() const;

 private:
  OpenCLDevice* device_;
  ClMem mem_;
  std::size_t bytes_;
  ClEvent ready_;
};

}  // namespace weft::opencl
