#include "runtime/fork_guard.h"

#include <pthread.h>
#include <unistd.h>

#include <atomic>
#include <string>

#include "weft/error.h"
#include "weft/opencl/device.h"

namespace weft::opencl::detail {

namespace {

// The process this one was forked from after the driver started; 0: not such a child.
std::atomic<pid_t> forked_from{0};

void note_fork_in_child() {
  forked_from.store(getppid(), std::memory_order_relaxed);
}

}  // namespace

void watch_for_fork() {
  pthread_atfork(nullptr, nullptr, note_fork_in_child);
}

bool forked_after_driver_start() {
  return forked_from.load(std::memory_order_relaxed) != 0;
}

void refuse_if_forked(const OpenCLDevice& device) {
  const pid_t parent = forked_from.load(std::memory_order_relaxed);
  if (parent == 0) return;
  throw DeviceError("weft: this process (pid " + std::to_string(getpid()) +
                    ") was forked from process " + std::to_string(parent) +
                    " after weft had started the OpenCL driver there. fork() copies only the "
                    "calling thread, not the driver's threads nor weft's, so device work on " +
                    device.label() +
                    " here would wait forever; weft refuses it instead. Use weft in a child "
                    "only if the parent had not used it before fork(), or start the child with "
                    "exec (posix_spawn, or fork then exec) so that it loads the driver afresh.");
}

}  // namespace weft::opencl::detail
