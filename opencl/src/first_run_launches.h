// The kernel launches of a program's first run, which the cache writer waits for before it
// reads the program's binary and whose kernel time it subtracts from the run's wall time (see
// cache_writer.h). A loop launches without bound (a while loop whose predicate never turns
// false, for ever), and every event kept holds driver memory, so launches that have finished
// are folded into a running total as the run goes: only unfinished ones stay. A while loop
// waits for each predicate, so it keeps a handful whatever its trip count.
#pragma once

#include <cstddef>
#include <vector>

#include "weft/opencl/cl_handle.h"

namespace weft::opencl::detail {

class FirstRunLaunches {
 public:
  // Records a launch. Amortised: each launch is asked once about whether it has finished.
  void add(ClEvent launch);
  // Blocks until every launch recorded has finished; false when one failed.
  bool wait();
  // The launches' total kernel time in seconds (profiling), or 0 when a launch has no profile.
  // Complete after wait().
  double execution_seconds() const { return profiled_ ? seconds_ : 0; }
  // Launches recorded and not yet folded into the total.
  std::size_t unfinished() const { return unfinished_.size(); }

 private:
  // Folds the launches that have finished into the total and drops their events.
  void fold_finished();
  void fold(const ClEvent& launch, cl_int status);

  std::vector<ClEvent> unfinished_;
  std::size_t fold_at_ = kFirstFold;  // unfinished_ size that triggers the next fold
  double seconds_ = 0;
  bool profiled_ = true;
  bool failed_ = false;
  static constexpr std::size_t kFirstFold = 64;
};

}  // namespace weft::opencl::detail
