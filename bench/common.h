// Shared pieces of weft's benchmarks: hand-written OpenCL kernels run on weft's own device
// (same context and queue), a timer that interleaves contenders, and the summary table.
#pragma once

#include <CL/cl.h>

#include <chrono>
#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "weft/backend.h"
#include "weft/opencl/cl_handle.h"
#include "weft/opencl/device.h"
#include "weft/opencl/program_plan.h"

namespace weft::bench {

// weft's default device, which every benchmark runs on, as the OpenCL device it is.
opencl::OpenCLDevice& device();
// "cpu:0 (pthread-haswell-AMD EPYC), Portable Computing Language OpenCL 3.0 PoCL 3.1 ..."
std::string device_line();

// Throws weft::DeviceError naming `call` when `status` is not CL_SUCCESS.
void check(cl_int status, const char* call);

// A hand-written program built for weft's device with weft's build options (-cl-std=CL1.2).
class RawProgram {
 public:
  explicit RawProgram(const std::string& source);
  // A fresh kernel object: each caller owns its argument state.
  opencl::ClKernel kernel(const char* name) const;

 private:
  opencl::ClProgram program_;
};

// An uninitialised device buffer in weft's context.
opencl::ClMem make_buffer(std::size_t bytes);
// A device buffer holding `values`.
opencl::ClMem make_buffer(const std::vector<float>& values);
std::vector<float> read_buffer(cl_mem mem, std::size_t count);

template <typename T>
void set_arg(cl_kernel kernel, cl_uint index, const T& value) {
  check(clSetKernelArg(kernel, index, sizeof(T), &value), "clSetKernelArg");
}
// Enqueues a 1-D launch on weft's queue and waits for it (clWaitForEvents on its event).
void launch_and_wait(cl_kernel kernel, std::size_t global, std::size_t local);

// weft's own compiled kernels, enqueued by hand with weft's launch geometry (the executable's
// ProgramPlan: every launch, bulk and tail or both reduction stages) into output and temporary
// buffers made once: the kernels' time without weft's runtime.
class PlanLaunches {
 public:
  // `executable` must come from weft's OpenCL device; `inputs` holds one buffer per parameter,
  // in parameter order.
  PlanLaunches(std::shared_ptr<Executable> executable, const std::vector<cl_mem>& inputs);
  // Enqueues every launch in plan order, each waiting for the one before, and waits for the
  // last.
  void run();
  // Replaces the output buffers with fresh ones from clCreateBuffer (and releases the old), as
  // a runtime without a buffer pool does before every call.
  void renew_outputs();
  // The buffer holding graph output `index` after run().
  cl_mem output(std::size_t index) const;

 private:
  std::shared_ptr<Executable> executable_;  // owns the program the kernels come from
  const opencl::ProgramPlan* plan_;
  std::vector<opencl::ClMem> owned_;                 // per plan buffer; empty for inputs
  std::vector<cl_mem> mems_;                         // per plan buffer
  std::vector<opencl::ClKernel> kernels_;            // per launch
  std::vector<const opencl::LaunchPlan*> launches_;  // the plan's launches, in order
};

// Wall-clock seconds of each repetition of every contender. Contenders run round-robin, one
// repetition each per round, so that load from other processes hits them all alike.
struct Samples {
  std::vector<double> seconds;
  double median() const;
  double best() const;
};
std::vector<Samples> time_interleaved(const std::vector<std::function<void()>>& contenders,
                                      int warmups, int rounds);

// One line of the summary: run_all.sh collects these from every benchmark binary.
struct SummaryRow {
  std::string benchmark;  // "dispatch x+1 f32[16]"
  std::string weft;       // "21.3 us/call"
  std::string baseline;   // "17.0 us/call (raw OpenCL)"
  std::string ratio;      // "1.25x weft/raw"
  std::string goal;       // "<= 1.5x"
  std::string met;        // "yes", "no" or "n/a"
};
// Prints the rows as an aligned table, and each as a tab-separated "@summary" line that
// run_all.sh gathers into the overall table.
void print_summary(const std::vector<SummaryRow>& rows);

std::string format(double value, int precision);

// Runs a JAX peer script (bench/*_peer.py, `--rounds N`) as a child process and returns its
// "jax_NAME SECONDS" lines as NAME -> seconds; empty when python3 or jax is missing.
std::map<std::string, double> jax_peer_seconds(const std::string& script, int rounds);
std::string met(bool yes);

// STREAM triad a[i] = b[i] + s * c[i] over `n` floats on weft's device, hand-written. Bytes
// moved per element: 12 (two reads, one write).
class Triad {
 public:
  explicit Triad(std::size_t n);
  // One element per work-item, 256 per work-group, no bounds check: BabelStream's kernel.
  void run_simple();
  // Each work-item does 16 consecutive float4s (64 elements): fewer, fatter work-items.
  void run_blocked();
  double bytes() const { return 12.0 * static_cast<double>(n_); }
  // Checks a few elements of the last run against the host formula; throws on mismatch.
  void verify() const;

 private:
  std::size_t n_;
  RawProgram program_;
  opencl::ClKernel simple_, blocked_;
  opencl::ClMem a_, b_, c_;
};

// Measures the triad both ways, `rounds` repetitions each (interleaved), and returns the
// better median GB/s: the device's streaming bandwidth that weft is compared against.
struct TriadResult {
  double simple_gbps;
  double blocked_gbps;
  double best_gbps() const { return simple_gbps > blocked_gbps ? simple_gbps : blocked_gbps; }
};
TriadResult measure_triad(std::size_t n, int rounds);

}  // namespace weft::bench
