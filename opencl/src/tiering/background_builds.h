// The thread that builds hot programs' kernels while their calls run on the interpreter
// (tiered execution). One build at a time: PoCL compiles one kernel at a time per process
// anyway, and the interpreter keeps the other core. At exit the build under way finishes and
// the queued ones are dropped, so a process never waits for programs it no longer calls.
#pragma once

#include <memory>

namespace weft::opencl {
class OpenCLExecutable;
}

namespace weft::opencl::detail {

void schedule_background_build(std::weak_ptr<OpenCLExecutable> executable);
// Waits for the build under way, drops the queued ones and ends the thread; later schedules
// are ignored. Called when the process exits.
void stop_background_builds();
// Blocks until no build is queued or under way (tests).
void wait_for_background_builds();
// Whether the process is exiting: a build under way stops compiling ahead (kernel_warmup.h)
// rather than making the exit wait for it.
bool background_builds_stopping();

}  // namespace weft::opencl::detail
