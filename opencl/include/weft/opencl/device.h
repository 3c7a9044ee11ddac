// One OpenCL device with its command queue, program cache and executable cache.
#pragma once

#include <CL/cl.h>

#include <atomic>
#include <cstddef>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <unordered_map>
#include <utility>

#include "weft/backend.h"
#include "weft/cache/key.h"
#include "weft/opencl/buffer.h"
#include "weft/opencl/buffer_pool.h"
#include "weft/opencl/cl_handle.h"
#include "weft/opencl/device_info.h"
#include "weft/opencl/executable_cache.h"
#include "weft/opencl/program_plan.h"
#include "weft/opencl/recently_used.h"
#include "weft/telemetry/telemetry.h"

namespace weft::opencl {

namespace detail {
class DeviceRuntime;
}

class OpenCLExecutable;

class OpenCLDevice final : public Device {
 public:
  // Made by device discovery, which owns every device for the life of the process.
  OpenCLDevice(DeviceInfo info, cl_device_id id, ClContext context, ClQueue queue);
  ~OpenCLDevice() override;
  OpenCLDevice(const OpenCLDevice&) = delete;
  OpenCLDevice& operator=(const OpenCLDevice&) = delete;

  const std::string& name() const override { return info_.name; }
  std::string description() const override;
  bool supports(DType dtype) const override;
  std::shared_ptr<Buffer> upload(const void* host, std::size_t bytes) override;
  void download(const Buffer& buffer, void* host, std::size_t bytes) override;
  void wait(const Buffer& buffer) override;
  std::shared_ptr<Buffer> copy_from(const Buffer& source) override;
  std::shared_ptr<Buffer> fill(const void* pattern, std::size_t pattern_bytes,
                               std::size_t bytes) override;
  std::shared_ptr<Executable> compile(const Graph& graph) override;
  void synchronize() override;

  const DeviceInfo& info() const { return info_; }
  DeviceCaps caps() const;
  // "cpu:0 (pthread-haswell-AMD EPYC)": how error messages name the device.
  std::string label() const;
  cl_device_id id() const { return id_; }
  cl_context context() const { return context_.get(); }
  cl_command_queue queue() const { return queue_.get(); }

  // A buffer of `bytes` with undefined contents (at least 1 byte is allocated). Throws
  // OutOfMemoryError past CL_DEVICE_MAX_MEM_ALLOC_SIZE or when the driver refuses.
  // Reuses a released buffer of the same size when one is pooled; the caller's first command
  // writing it must wait for the buffer's take_prior_uses().
  std::shared_ptr<OpenCLBuffer> allocate(std::size_t bytes);
  // A token (a zero-byte buffer that orders effects) ready when `ready` completes, or now when
  // it is null. Tokens share one allocation that no command reads or writes.
  std::shared_ptr<OpenCLBuffer> make_token(ClEvent ready);
  std::shared_ptr<Buffer> token_after(std::span<const std::shared_ptr<Buffer>> tokens) override;
  // Called by released buffers: keeps the memory for reuse (see BufferPool).
  void recycle(std::size_t allocation_bytes, ClMem mem, std::vector<ClEvent> pending);
  const BufferPool& pool() const { return *pool_; }
  // Device memory the runtime has created (clCreateBuffer in allocate(), pool reuse not
  // counted): a loop that recycles its carries stops adding to it after its first iterations.
  struct MemoryStats {
    std::size_t created_bytes = 0;
    std::size_t created_buffers = 0;
    std::size_t pooled_bytes = 0;  // released memory kept for reuse now
    std::size_t in_use_bytes = 0;  // the sizes of the buffers alive now (tokens hold none)
  };
  MemoryStats memory_stats() const;
  // Called by each buffer when it is made (its size) and destroyed (minus its size): the
  // device_memory_bytes counter.
  void count_buffer_bytes(std::int64_t delta) { in_use_.add(delta); }
  // The thread that drives this device's while loops and conds (see device_runtime.h).
  detail::DeviceRuntime& runtime() { return *runtime_; }
  // Builds `source` with `options` for this device, or returns the earlier build of the same
  // pair. Throws BuildError with the start of the build log when the compiler rejects it.
  ClProgram build_program(const std::string& source, const std::string& options);
  // Builds a program from a binary this driver produced earlier. Throws BuildError when the
  // driver refuses it (a different driver, a damaged binary).
  ClProgram build_program_from_binary(std::span<const std::uint8_t> binary,
                                      const std::string& options);
  // The persistent-cache key components of compiling `graph` here (with the process cache's
  // user hook), as compile() computes them.
  cache::CacheKeyComponents cache_components(const Graph& graph) const;
  // Forgets the programs and executables compiled so far in this process, so the next compile
  // of each graph consults the persistent cache again. Executables already handed out stay
  // valid. For tests and benchmarks of the persistent cache.
  void forget_compiled();
  // Programs and executables kept for reuse once nothing holds them (the most recently used):
  // some 170 KB each on PoCL, so a process that keeps making new programs stays bounded.
  static constexpr std::size_t kRecentlyUsedPrograms = 128;

 private:
  void check_allocation(std::size_t bytes) const;
  // The persistent-cache path of compile(): null when the cache is off or has no usable entry.
  // Null when the persistent cache is off. `compile_id` (0: not recording) parents the
  // telemetry of its lookup.
  std::shared_ptr<OpenCLExecutable> compile_with_cache(const Graph& graph,
                                                       telemetry::Id compile_id);
  // An executable for `plan`, built now, or with its build deferred while its first calls run
  // on the interpreter (tiered execution, weft/opencl/tiering.h).
  std::shared_ptr<OpenCLExecutable> build_or_defer(const Graph& graph, ProgramPlan plan);

  DeviceInfo info_;
  cl_device_id id_;
  ClContext context_;
  ClQueue queue_;

  std::unique_ptr<BufferPool> pool_;
  telemetry::CounterGauge in_use_;
  std::unique_ptr<detail::DeviceRuntime> runtime_;
  std::atomic<std::size_t> created_bytes_{0};
  std::atomic<std::size_t> created_buffers_{0};
  ExecutableCache executables_{kRecentlyUsedPrograms};  // by graph text
  std::once_flag token_mem_once_;
  ClMem token_mem_;
  struct SourceHash {
    std::size_t operator()(const std::pair<std::string, std::string>& key) const {
      return std::hash<std::string>()(key.first) * 31 + std::hash<std::string>()(key.second);
    }
  };
  std::mutex programs_mutex_;
  RecentlyUsed<std::pair<std::string, std::string>, ClProgram, SourceHash> programs_{
      kRecentlyUsedPrograms};  // by source, options
};

}  // namespace weft::opencl
