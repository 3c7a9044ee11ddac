// Device-vs-interpreter checks for functions with control flow: the function runs under jit on
// a device (and, optionally, eagerly, outside any trace) and every output must match the
// reference interpreter evaluating the lowered graph on the same inputs, the closed-over arrays
// (Lowered::captured) included. Functions take and return std::vector<Array>, so trees of
// carries are flattened by the test itself.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "support/test_support.h"
#include "weft/compile/schedule.h"
#include "weft/interp/interpreter.h"
#include "weft/opencl/codegen.h"
#include "weft/opencl/device.h"
#include "weft/opencl/executable.h"
#include "weft/weft.h"

namespace weft::testing {

using Arrays = std::vector<Array>;
using ArraysFn = std::function<Arrays(const Arrays&)>;

struct CheckOptions {
  double rtol = 1e-5;  // floats: the device and the interpreter agree to a few ulps
  double atol = 1e-6;
  Device* device = nullptr;  // null: the default device
  bool eager = true;         // also call the function outside jit
};

inline Arrays upload_all(const std::vector<HostArray>& inputs, Device* device = nullptr) {
  Arrays args;
  for (const HostArray& h : inputs) args.push_back(Array::from_host(h, device));
  return args;
}

// The interpreter's outputs for `lowered`: the argument leaves' values, then the captured.
inline std::vector<HostArray> interpret_lowered(const Lowered& lowered,
                                                const std::vector<HostArray>& inputs) {
  std::vector<HostArray> feed = inputs;
  for (const Array& c : lowered.captured()) feed.push_back(c.to_host());
  return interpret(lowered.graph(), feed);
}

// Empty when every output agrees in dtype, shape and values (integers and bools exactly).
inline std::string compare_outputs(const Arrays& got, const std::vector<HostArray>& expected,
                                   double rtol, double atol) {
  if (got.size() != expected.size())
    return "got " + std::to_string(got.size()) + " outputs, expected " +
           std::to_string(expected.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    const HostArray h = got[i].to_host();
    const bool is_int = !is_float(h.dtype());
    std::string diff = compare_arrays(h, expected[i], is_int ? 0 : rtol, is_int ? 0 : atol);
    if (!diff.empty()) return "output " + std::to_string(i) + ": " + diff;
  }
  return {};
}

// The oracle for a jitted function called on `inputs` (already uploaded as `args`).
template <typename J>
std::vector<HostArray> expected_of(const J& f, const Arrays& args,
                                   const std::vector<HostArray>& inputs) {
  return interpret_lowered(f.lower(args), inputs);
}

inline bool has_loop_kernel(const ScheduleBlock& block) {
  for (const ScheduleStep& step : block.steps) {
    if (step.kind == ScheduleStep::Kind::LoopKernel) return true;
    for (const ScheduleBlock& region : step.regions)
      if (has_loop_kernel(region)) return true;
  }
  return false;
}

// `graph` compiled for `device` with no loop run as one kernel (FusionOptions).
inline std::shared_ptr<opencl::OpenCLExecutable> launch_per_iteration_executable(
    opencl::OpenCLDevice& device, const Graph& graph) {
  FusionOptions options;
  options.loops_in_one_kernel = false;
  return std::make_shared<opencl::OpenCLExecutable>(
      device, opencl::plan_program(graph, device.caps(), options));
}

// Static loops that run as one kernel by default (ScheduleStep::Kind::LoopKernel) also run
// here with one launch per iteration, the plan every other loop gets, so that both stay
// checked by every test. Empty when that plan is not different or agrees.
inline std::string check_launch_per_iteration(const Lowered& lowered,
                                              const std::vector<HostArray>& inputs,
                                              const std::vector<HostArray>& expected,
                                              const CheckOptions& options) {
  auto* device =
      dynamic_cast<opencl::OpenCLDevice*>(options.device ? options.device : &default_device());
  if (!device || !has_loop_kernel(lower_to_schedule(lowered.graph()))) return {};
  auto executable = launch_per_iteration_executable(*device, lowered.graph());
  std::vector<std::shared_ptr<Buffer>> buffers;
  std::vector<HostArray> feed = inputs;
  for (const Array& c : lowered.captured()) feed.push_back(c.to_host());
  for (const HostArray& h : feed) buffers.push_back(device->upload(h.raw(), h.nbytes()));
  const std::vector<std::shared_ptr<Buffer>> outputs = executable->run(buffers);
  if (outputs.size() != expected.size()) return "the launch-per-iteration plan: output count";
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    HostArray got(expected[i].dtype(), expected[i].shape());
    device->download(*outputs[i], got.raw(), got.nbytes());
    const bool is_int = !is_float(got.dtype());
    std::string diff =
        compare_arrays(got, expected[i], is_int ? 0 : options.rtol, is_int ? 0 : options.atol);
    if (!diff.empty())
      return "the launch-per-iteration plan, output " + std::to_string(i) + ": " + diff;
  }
  return {};
}

// Runs `fn` under jit (and eagerly when options.eager) and compares with the interpreter.
// Empty on agreement, else what differs, with the graph text.
inline std::string check_on_device(const ArraysFn& fn, const std::vector<HostArray>& inputs,
                                   const CheckOptions& options = {}) {
  auto f = jit([&fn](const Arrays& xs) { return fn(xs); },
               {.name = "checked", .device = options.device});
  const Arrays args = upload_all(inputs, options.device);
  const Lowered lowered = f.lower(args);
  const std::vector<HostArray> expected = interpret_lowered(lowered, inputs);
  const Arrays got = f(args);
  if (options.device)
    for (const Array& a : got)
      if (&a.device() != options.device) return "a jit result is on " + a.device().name();
  std::string diff = compare_outputs(got, expected, options.rtol, options.atol);
  if (!diff.empty()) return "jit " + diff + "\n" + lowered.as_text();
  diff = check_launch_per_iteration(lowered, inputs, expected, options);
  if (!diff.empty()) return diff + "\n" + lowered.as_text();
  if (options.eager) {
    const Arrays eager = fn(args);
    diff = compare_outputs(eager, expected, options.rtol, options.atol);
    if (!diff.empty()) return "eager " + diff + "\n" + lowered.as_text();
  }
  return {};
}

}  // namespace weft::testing
