// fork() and the OpenCL driver. A driver runs threads of its own (PoCL: workers and an event
// thread), and so does weft (receivers, runtime threads); fork() copies only the calling thread.
// In a child forked after the driver started, device work would wait forever for threads that
// do not exist. weft notices such a fork (pthread_atfork, armed when the driver starts) and
// refuses device work in the child with a DeviceError that says why; the parent is unaffected,
// and the child's exit handlers leave the driver alone.
#pragma once

namespace weft::opencl {
class OpenCLDevice;
}

namespace weft::opencl::detail {

// Arms the fork handler; called once, when the driver has started.
void watch_for_fork();
// Whether this process was forked after the driver started (in it or in an ancestor).
bool forked_after_driver_start();
// Throws DeviceError, naming the fork, in such a child.
void refuse_if_forked(const OpenCLDevice& device);

}  // namespace weft::opencl::detail
