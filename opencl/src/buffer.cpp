#include "weft/opencl/buffer.h"

#include "weft/opencl/cl_error.h"
#include "weft/opencl/device.h"

namespace weft::opencl {

OpenCLBuffer::OpenCLBuffer(OpenCLDevice& device, ClMem mem, std::size_t bytes, ClEvent ready)
    : device_(&device), mem_(std::move(mem)), bytes_(bytes), ready_(std::move(ready)) {}

Device& OpenCLBuffer::device() const {
  return *device_;
}

bool OpenCLBuffer::is_ready() const {
  if (!ready_) return true;
  cl_int status = CL_COMPLETE;
  check_cl(clGetEventInfo(ready_.get(), CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof(status), &status,
                          nullptr),
           "clGetEventInfo", device_->label());
  // A negative execution status is the error code of the failed command.
  if (status < 0) throw_cl_error(status, "the command writing this buffer", device_->label());
  return status == CL_COMPLETE;
}

}  // namespace weft::opencl
