// PoCL's CPU driver runs work-groups on one worker thread per CPU. Unpinned, two workers
// sometimes share one CPU for the life of the process and every kernel then takes twice as
// long: on a 2-core VM a 64x768x3072 dot measured 1.6 ms in some processes and 3.1 ms in
// others, and 1.5-1.6 ms in every process with POCL_AFFINITY=1, which pins worker i to CPU i.
// Pinning to a CPU outside the process's affinity mask fails (newer PoCL aborts on that), so
// the variable is only set where the mask holds every CPU, 0 to n-1, with none offline.
#include "pocl_affinity.h"

#include <sched.h>
#include <unistd.h>

#include <cstdlib>

namespace weft::opencl::detail {

namespace {

bool may_run_on_every_cpu() {
  const long online = ::sysconf(_SC_NPROCESSORS_ONLN);
  const long configured = ::sysconf(_SC_NPROCESSORS_CONF);
  if (online <= 0 || online != configured || online > CPU_SETSIZE) return false;
  cpu_set_t mask;
  CPU_ZERO(&mask);
  if (::sched_getaffinity(0, sizeof mask, &mask) != 0) return false;
  for (long cpu = 0; cpu < online; ++cpu)
    if (!CPU_ISSET(static_cast<int>(cpu), &mask)) return false;
  return true;
}

}  // namespace

bool pin_pocl_workers_by_default() {
  if (std::getenv("POCL_AFFINITY") != nullptr) return false;
  if (!may_run_on_every_cpu()) return false;
  // Called once, before the first OpenCL call, so no driver thread reads the environment yet.
  return ::setenv("POCL_AFFINITY", "1", 0) == 0;
}

}  // namespace weft::opencl::detail
