// Device memory on one OpenCL device plus the event that marks its contents ready.
#pragma once

#include <CL/cl.h>

#include <cstddef>
#include <exception>
#include <functional>
#include <mutex>
#include <vector>

#include "weft/backend.h"
#include "weft/opencl/cl_handle.h"
#include "weft/telemetry/record.h"

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
  // Hands recyclable memory back to the device's pool.
  ~OpenCLBuffer() override;

  Device& device() const override;
  std::size_t bytes() const override { return bytes_; }
  bool settled() const override;

  OpenCLDevice& opencl_device() const { return *device_; }
  cl_mem mem() const { return mem_.get(); }
  // The command that writes the contents; null when they were ready at creation.
  cl_event ready_event() const { return ready_.get(); }
  // For the runtime: the buffer becomes ready when `event` completes. Only valid before the
  // buffer is handed to anyone else, since buffers are immutable once shared.
  void set_ready_event(ClEvent event) { ready_ = std::move(event); }
  // Polls without blocking; throws DeviceError when the writing command failed.
  bool is_ready() const;
  // For the runtime: the run that was to write this buffer failed on the device's runtime
  // thread (before or after enqueueing its writer). Its ready event fails too; waits then
  // rethrow this error, which says what went wrong, instead of a bare OpenCL status.
  void set_failure(std::exception_ptr failure);
  void rethrow_failure() const;  // no-op when none was set
  std::exception_ptr failure() const;
  // For the runtime: calls `listener` once set_failure is called (at once if it has been;
  // never if the run succeeds). A run waiting for this buffer listens here as well as on the
  // ready event, since a driver need not call an event callback when a user event is set to
  // an error.
  void on_failure(std::function<void()> listener);
  // An output of a run on the device's runtime thread: its ready event is a user event the
  // runtime sets when the run has filled it. No command may wait on such an event in a queue
  // (a driver may never start it if the event fails, and clFinish would wait for it): users
  // of the buffer wait on the host, or run on the runtime thread after it (see
  // OpenCLExecutable::run).
  void mark_runtime_output() { runtime_output_ = true; }
  // True while it is a runtime output whose run has not finished; rethrows the run's error
  // when it failed.
  bool pending_runtime_output() const;

  // Pool bookkeeping. A recyclable buffer returns to its device's pool when released, with
  // every command that may still use it; `prior_uses` are such commands of its previous life,
  // which its first writer must wait for (take_prior_uses hands them over once).
  void make_recyclable(std::vector<ClEvent> prior_uses);
  std::vector<ClEvent> take_prior_uses();
  // Hands back prior uses that no command ended up waiting for (nothing wrote the buffer), so
  // they still hold its memory back when it returns to the pool.
  void restore_prior_uses(std::vector<ClEvent> prior_uses);
  // Records a command that reads this buffer (thread-safe; completed ones are pruned).
  void add_reader(ClEvent event) const;

  // Telemetry, for tokens: the host steps whose completion this token stands for (edges in the
  // trace). Set before the token's ready event completes; read once it has.
  void set_trace_sources(std::vector<telemetry::Id> sources);
  std::vector<telemetry::Id> trace_sources() const;

 private:
  OpenCLDevice* device_;
  ClMem mem_;
  std::size_t bytes_;
  ClEvent ready_;
  bool recyclable_ = false;
  std::vector<ClEvent> prior_uses_;
  bool runtime_output_ = false;
  mutable std::mutex failure_mutex_;
  std::vector<std::function<void()>> failure_listeners_;
  std::exception_ptr failure_;
  mutable std::mutex readers_mutex_;
  mutable std::vector<ClEvent> readers_;
  mutable std::size_t prune_at_ = 32;  // readers_ size that triggers the next prune
  mutable std::mutex trace_mutex_;
  std::vector<telemetry::Id> trace_sources_;
};

}  // namespace weft::opencl
