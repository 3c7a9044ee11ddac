#include "tiering/tier_policy.h"

#include <algorithm>

namespace weft::opencl::detail {

TierPolicy::TierPolicy(Tiering mode, InterpretationEstimate estimate, std::size_t kernels)
    : mode_(mode),
      estimate_(std::move(estimate)),
      expected_interpret_s_(kInterpretOverheadSeconds +
                            estimate_.element_ops * kSecondsPerElementOp),
      expected_build_s_(kBuildBaseSeconds + kBuildSecondsPerKernel * static_cast<double>(kernels)) {
}

TierPolicy::Next TierPolicy::next_call(bool build_started) {
  if (mode_ == Tiering::off || !estimate_.possible) return Next::device;
  if (mode_ == Tiering::interpreter) return Next::interpret;
  std::lock_guard lock(mutex_);
  if (calls_ == 0) {
    if (expected_interpret_s_ > expected_build_s_) return Next::device;
    return Next::interpret;
  }
  // Measured now: a call slower than the whole build waits for it.
  const double mean = interpreted_s_ / static_cast<double>(calls_);
  if (mean > expected_build_s_) return Next::device;
  if (!build_started && interpreted_s_ >= kHotFraction * expected_build_s_)
    return Next::interpret_then_build;
  return Next::interpret;
}

void TierPolicy::interpreted(double seconds) {
  std::lock_guard lock(mutex_);
  ++calls_;
  interpreted_s_ += std::max(0.0, seconds);
}

}  // namespace weft::opencl::detail
