// Where the calls of a program whose kernels are not built yet run, and when its build starts:
// a call the interpreter is expected to finish sooner than the build runs there; a program
// whose interpreted calls add up to half its expected build time is hot, and builds in the
// background; a call expected to take the interpreter longer than the build waits for it.
#pragma once

#include <cstddef>
#include <mutex>
#include <string>

#include "weft/interp/cost.h"
#include "weft/opencl/tiering.h"

namespace weft::opencl::detail {

class TierPolicy {
 public:
  TierPolicy(Tiering mode, InterpretationEstimate estimate, std::size_t kernels);

  enum class Next {
    interpret,             // on the interpreter
    interpret_then_build,  // on the interpreter, and start the background build
    device,                // build (or wait for the build) and run the kernels
  };
  // Before a call while the kernels are not built; `build_started` says whether a build is
  // under way.
  Next next_call(bool build_started);
  // After an interpreted call: its wall time.
  void interpreted(double seconds);

  bool interpreter_only() const { return mode_ == Tiering::interpreter; }
  double expected_interpret_seconds() const { return expected_interpret_s_; }
  double expected_build_seconds() const { return expected_build_s_; }
  const InterpretationEstimate& estimate() const { return estimate_; }

  // The interpreter's speed and PoCL's build time, measured on this project's 2-core CPU
  // machine (bench/cold_start.sh); they only steer the choice.
  static constexpr double kSecondsPerElementOp = 12e-9;
  static constexpr double kInterpretOverheadSeconds = 50e-6;
  static constexpr double kBuildBaseSeconds = 0.15;
  // Per kernel the driver compiles (a `__kernel` in the program's source; launches of a kernel
  // whose code another has run as that one): the examples' steps took 0.04-0.17 s a kernel,
  // their build and first launches together.
  static constexpr double kBuildSecondsPerKernel = 0.1;
  static constexpr double kHotFraction = 0.5;

 private:
  Tiering mode_;
  InterpretationEstimate estimate_;
  double expected_interpret_s_;
  double expected_build_s_;
  std::mutex mutex_;
  long calls_ = 0;  // interpreted so far
  double interpreted_s_ = 0;
};

}  // namespace weft::opencl::detail
