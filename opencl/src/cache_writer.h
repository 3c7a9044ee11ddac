// Writing compiled programs into the persistent cache. A program binary is read only after the
// program's first run has finished, because PoCL compiles each kernel's work-group function at
// its first launch and includes those compiled specializations in CL_PROGRAM_BINARIES; a binary
// read right after clBuildProgram would leave a later process most of the compiling to do.
// A background thread waits for the first run's events, reads the binary and inserts it.
#pragma once

#include <CL/cl.h>

#include <chrono>
#include <memory>
#include <shared_mutex>
#include <string>
#include <vector>

#include "first_run_launches.h"
#include "weft/cache/key.h"
#include "weft/cache/store.h"
#include "weft/opencl/cl_handle.h"

namespace weft::opencl::detail {

struct CacheWrite {
  std::shared_ptr<cache::ProgramStore> store;
  cache::CacheKeyComponents components;
  std::string key;
  std::string metadata;  // the serialized ProgramPlan
  ClProgram program;
  cl_device_id device = nullptr;
  std::string device_label;
  double build_seconds = 0;  // code generation and clBuildProgram
  // Set when the first run is enqueued.
  std::chrono::steady_clock::time_point first_run_start;
  FirstRunLaunches first_run_launches;
};

// Queues `write` for the background writer (started on first use).
void schedule_cache_write(CacheWrite write);
// Waits until every queued write is done; `stop` also ends the writer thread (at exit, after
// the queues drained). Later writes are then done on the calling thread.
void finish_cache_writes(bool stop);

// Kernel launches hold this shared; reading a program binary holds it exclusively, after every
// queue has drained. PoCL compiles a generic work-group function of each kernel while it
// serialises CL_PROGRAM_BINARIES and updates its process-wide table of compiled kernels as it
// does; kernels finishing on PoCL's worker threads at the same moment trip its reference
// counting (`pocl_release_dlhandle_cache: Assertion found->ref_count > 0`, PoCL 3.1).
// Host callbacks cannot deadlock against it: no queued command ever waits on a callback (see
// runtime/host_tasks.h), so the drain under the exclusive gate finishes without one, and a
// callback that launches kernels waits at most for that drain; dispatching threads run
// inline callbacks and wait for callback-queue space only after releasing the gate.
std::shared_mutex& launch_gate();

// CL_PROGRAM_BINARIES of a program built for one device. Throws DeviceError.
std::vector<std::uint8_t> read_program_binary(cl_program program, cl_device_id device,
                                              const std::string& device_label);

}  // namespace weft::opencl::detail
