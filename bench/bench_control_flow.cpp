// Control flow on the device, each figure against a hand-written baseline timed in the same
// run (contenders interleaved round by round):
//
//   fori_loop   1,000 iterations of x = x * a + b on f32[1024] (a, b closed over), jitted and
//               waited for, against weft's own body kernel enqueued 1,000 times by hand (two
//               buffers in turn, each launch waiting for the one before). Goal <= 1.2x.
//               weft runs this elementwise loop as one kernel that iterates inside; two more
//               rows: the same function compiled with one launch per iteration (the plan of
//               every loop whose body is not elementwise) against the hand loop, and the one
//               kernel against a hand-written loop-in-kernel (each work-item iterating its
//               element 1,000 times).
//   while_loop  per-iteration cost of a loop whose predicate the device computes (an i32
//               counter up to 1,000): against a hand-written loop doing what any host-driven
//               loop must, a predicate kernel, a blocking read of the flag, a body kernel.
//               Goal <= 1.5x.
//   scan        cumulative sum over 10,000 steps of f32[256]: microseconds per step (no
//               baseline: each step is a row copy in, the add kernel, a row copy out).
//   dispatch    x + 1 on f32[16] without control flow, against the raw OpenCL enqueue of the
//               same kernel (bench_dispatch's contenders): must not get slower.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "common.h"
#include "report.h"
#include "weft/opencl/codegen.h"
#include "weft/opencl/executable.h"
#include "weft/weft.h"

namespace {

using weft::Array;
using weft::bench::check;
using weft::bench::device;
using weft::bench::format;
using weft::bench::set_arg;
namespace lax = weft::lax;
namespace np = weft::np;
namespace cl = weft::opencl;

constexpr int kForiIterations = 1000;
constexpr std::int64_t kForiN = 1024;
constexpr int kWhileIterations = 1000;
constexpr std::int64_t kScanSteps = 10000;
constexpr std::int64_t kScanRow = 256;
constexpr int kRounds = 15;

std::vector<float> ramp(std::int64_t n, float scale) {
  std::vector<float> v(static_cast<std::size_t>(n));
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = scale * static_cast<float>(i % 7);
  return v;
}

[[noreturn]] void fail(const std::string& what) {
  std::fprintf(stderr, "bench_control_flow: %s\n", what.c_str());
  std::exit(1);
}

// --- fori_loop --------------------------------------------------------------------------

struct ForiCase {
  Array x = Array::from_vector<float>({kForiN}, ramp(kForiN, 0.25f));
  Array a = Array::from_vector<float>({kForiN}, std::vector<float>(kForiN, 0.5f));
  Array b = Array::from_vector<float>({kForiN}, ramp(kForiN, 0.125f));
  // Captures a and b: the loop body reads them as region parameters.
  std::function<Array(const Array&)> fn = [this](const Array& x0) {
    return lax::fori_loop(
        0, kForiIterations, [this](const Array&, const Array& x) { return x * a + b; }, x0);
  };
  decltype(weft::jit(fn)) jitted = weft::jit(fn, {.name = "fori_axpb"});
};

// The same function compiled with one launch per iteration: its loop step and body kernel.
std::shared_ptr<cl::OpenCLExecutable> launch_per_iteration(const ForiCase& c) {
  weft::FusionOptions options;
  options.loops_in_one_kernel = false;
  return std::make_shared<cl::OpenCLExecutable>(
      device(), cl::plan_program(c.jitted.lower(c.x).graph(), device().caps(), options));
}

// weft's body kernel, found in the launch-per-iteration plan, enqueued by hand.
class HandFori {
 public:
  HandFori(const ForiCase& c, std::shared_ptr<cl::OpenCLExecutable> exe) : executable_(exe) {
    const cl::ProgramPlan& plan = exe->plan();
    if (plan.steps.size() != 1 || plan.steps[0].kind != cl::StepPlan::Kind::Loop)
      fail("expected the plan to be one loop step");
    const cl::BlockPlan& body = plan.steps[0].regions.at(0);
    if (body.steps.size() != 1 || body.steps[0].kind != cl::StepPlan::Kind::Launch)
      fail("expected the loop body to be one kernel launch (x * a + b fused)");
    launch_ = body.steps[0].launch;
    cl_int status = CL_SUCCESS;
    kernel_ = cl::ClKernel(clCreateKernel(exe->program(), launch_.kernel.c_str(), &status));
    check(status, "clCreateKernel");
    // Body parameters: 0 the iteration (unused), 1 the carry, then the captured a and b in
    // the order the plan lists them; the kernel writes the body's one output.
    const std::vector<float> x = c.x.to_vector<float>(), a = c.a.to_vector<float>(),
                             b = c.b.to_vector<float>();
    carry_[0] = weft::bench::make_buffer(x);
    carry_[1] = weft::bench::make_buffer(x.size() * sizeof(float));
    captured_[0] = weft::bench::make_buffer(a);
    captured_[1] = weft::bench::make_buffer(b);
    for (int arg : launch_.args) {
      const cl::BufferPlan& buffer = body.buffers.at(static_cast<std::size_t>(arg));
      roles_.push_back(buffer.role == cl::BufferPlan::Role::Input ? buffer.index : -1);
    }
    initial_ = x;
  }

  void run() {
    // Restart from x each call, as the jitted function does.
    check(
        clEnqueueWriteBuffer(device().queue(), carry_[0].get(), CL_TRUE, 0,
                             initial_.size() * sizeof(float), initial_.data(), 0, nullptr, nullptr),
        "clEnqueueWriteBuffer");
    cl::ClEvent previous;
    for (int i = 0; i < kForiIterations; ++i) {
      cl_mem in = carry_[i % 2].get(), out = carry_[(i + 1) % 2].get();
      for (std::size_t k = 0; k < roles_.size(); ++k) {
        cl_mem mem = roles_[k] == 1   ? in
                     : roles_[k] == 2 ? captured_[0].get()
                     : roles_[k] == 3 ? captured_[1].get()
                                      : out;
        set_arg(kernel_.get(), static_cast<cl_uint>(k), mem);
      }
      cl_event wait = previous.get(), done = nullptr;
      check(
          clEnqueueNDRangeKernel(device().queue(), kernel_.get(), 1, nullptr, &launch_.global_size,
                                 launch_.local_size ? &launch_.local_size : nullptr, wait ? 1 : 0,
                                 wait ? &wait : nullptr, &done),
          "clEnqueueNDRangeKernel");
      previous = cl::ClEvent(done);
    }
    cl_event last = previous.get();
    check(clWaitForEvents(1, &last), "clWaitForEvents");
  }

  std::vector<float> result() const {
    return weft::bench::read_buffer(carry_[kForiIterations % 2].get(),
                                    static_cast<std::size_t>(kForiN));
  }

 private:
  std::shared_ptr<cl::OpenCLExecutable> executable_;
  cl::LaunchPlan launch_;
  cl::ClKernel kernel_;
  cl::ClMem carry_[2], captured_[2];
  std::vector<int> roles_;  // per kernel argument: body parameter index, or -1 for the output
  std::vector<float> initial_;
};

// The loop inside the kernel: x = x * a + b, 1,000 times per element.
constexpr const char* kForiInKernelSource = R"CL(
__kernel void fori_in_kernel(__global const float* restrict x, __global const float* restrict a,
                             __global const float* restrict b, __global float* restrict out) {
  const int i = (int)get_global_id(0);
  float v = x[i];
  const float ai = a[i], bi = b[i];
  for (int k = 0; k < 1000; ++k) v = v * ai + bi;
  out[i] = v;
}
)CL";

// --- while_loop -------------------------------------------------------------------------

constexpr const char* kWhileSource = R"CL(
__kernel void less_than(__global const int* restrict i, __global uchar* restrict flag) {
  flag[0] = i[0] < 1000;
}
__kernel void increment(__global const int* restrict i, __global int* restrict out) {
  out[0] = i[0] + 1;
}
)CL";

class HandWhile {
 public:
  HandWhile() : program_(kWhileSource) {
    less_than_ = program_.kernel("less_than");
    increment_ = program_.kernel("increment");
    counter_[0] = weft::bench::make_buffer(sizeof(int));
    counter_[1] = weft::bench::make_buffer(sizeof(int));
    flag_ = weft::bench::make_buffer(1);
  }

  int run() {
    const int zero = 0;
    check(clEnqueueWriteBuffer(device().queue(), counter_[0].get(), CL_TRUE, 0, sizeof zero, &zero,
                               0, nullptr, nullptr),
          "clEnqueueWriteBuffer");
    const std::size_t one = 1;
    int k = 0;
    // The queue may run commands out of order: each waits for the one it depends on.
    cl::ClEvent incremented;
    while (true) {
      set_arg(less_than_.get(), 0, counter_[k % 2].get());
      set_arg(less_than_.get(), 1, flag_.get());
      cl_event wait = incremented.get(), tested = nullptr;
      check(clEnqueueNDRangeKernel(device().queue(), less_than_.get(), 1, nullptr, &one, nullptr,
                                   wait ? 1 : 0, wait ? &wait : nullptr, &tested),
            "clEnqueueNDRangeKernel");
      cl::ClEvent test(tested);
      unsigned char flag = 0;
      check(clEnqueueReadBuffer(device().queue(), flag_.get(), CL_TRUE, 0, 1, &flag, 1, &tested,
                                nullptr),
            "clEnqueueReadBuffer");
      if (!flag) break;
      set_arg(increment_.get(), 0, counter_[k % 2].get());
      set_arg(increment_.get(), 1, counter_[(k + 1) % 2].get());
      cl_event done = nullptr;
      check(clEnqueueNDRangeKernel(device().queue(), increment_.get(), 1, nullptr, &one, nullptr, 0,
                                   nullptr, &done),
            "clEnqueueNDRangeKernel");
      incremented = cl::ClEvent(done);
      ++k;
    }
    return k;
  }

 private:
  weft::bench::RawProgram program_;
  cl::ClKernel less_than_, increment_;
  cl::ClMem counter_[2], flag_;
};

// --- dispatch ---------------------------------------------------------------------------

constexpr const char* kAddOneSource = R"CL(
__kernel void add_one(__global const float* restrict a0, __global float* restrict out) {
  const int gid = (int)get_global_id(0);
  if (gid >= 16) return;
  out[gid] = a0[gid] + 1.0f;
}
)CL";

}  // namespace

int main() {
  std::printf("bench_control_flow on %s\n", weft::bench::device_line().c_str());

  ForiCase fori;
  {
    auto exe = std::dynamic_pointer_cast<cl::OpenCLExecutable>(fori.jitted.lower(fori.x).compile());
    if (!exe || exe->plan().steps.empty() ||
        exe->plan().steps[0].kind != cl::StepPlan::Kind::Launch)
      fail("expected weft to run the elementwise fori_loop as one kernel");
  }
  std::shared_ptr<cl::OpenCLExecutable> per_iteration = launch_per_iteration(fori);
  HandFori hand_fori(fori, per_iteration);
  std::vector<std::shared_ptr<weft::Buffer>> per_iteration_inputs;
  for (const Array* array : {&fori.x, &fori.a, &fori.b}) {
    const std::vector<float> values = array->to_vector<float>();
    per_iteration_inputs.push_back(device().upload(values.data(), values.size() * sizeof(float)));
  }
  auto run_per_iteration = [&] {
    std::vector<std::shared_ptr<weft::Buffer>> out = per_iteration->run(per_iteration_inputs);
    device().wait(*out.at(0));
    return out;
  };
  {
    const std::vector<float> got = fori.jitted(fori.x).to_vector<float>();
    hand_fori.run();
    const std::vector<float> want = hand_fori.result();
    std::vector<float> stepped(want.size());
    device().download(*run_per_iteration().at(0), stepped.data(), stepped.size() * sizeof(float));
    if (stepped != want)
      fail("weft's launch-per-iteration loop and the hand-enqueued kernel differ");
    // One kernel may contract x * a + b into an fma where the body kernel did not.
    for (std::size_t i = 0; i < got.size(); ++i)
      if (std::abs(got[i] - want[i]) > 1e-4f * (1.0f + std::abs(want[i])))
        fail("weft's fori_loop (one kernel) and the hand-enqueued kernel differ");
  }

  weft::bench::RawProgram in_kernel_program(kForiInKernelSource);
  cl::ClKernel in_kernel = in_kernel_program.kernel("fori_in_kernel");
  cl::ClMem in_kernel_x = weft::bench::make_buffer(fori.x.to_vector<float>()),
            in_kernel_a = weft::bench::make_buffer(fori.a.to_vector<float>()),
            in_kernel_b = weft::bench::make_buffer(fori.b.to_vector<float>()),
            in_kernel_out = weft::bench::make_buffer(kForiN * sizeof(float));
  auto run_in_kernel = [&] {
    set_arg(in_kernel.get(), 0, in_kernel_x.get());
    set_arg(in_kernel.get(), 1, in_kernel_a.get());
    set_arg(in_kernel.get(), 2, in_kernel_b.get());
    set_arg(in_kernel.get(), 3, in_kernel_out.get());
    weft::bench::launch_and_wait(in_kernel.get(), static_cast<std::size_t>(kForiN), 256);
  };
  {
    run_in_kernel();
    const std::vector<float> got =
        weft::bench::read_buffer(in_kernel_out.get(), static_cast<std::size_t>(kForiN));
    const std::vector<float> want = hand_fori.result();
    for (std::size_t i = 0; i < got.size(); ++i)
      if (std::abs(got[i] - want[i]) > 1e-4f * (1.0f + std::abs(want[i])))
        fail("the loop-in-kernel prototype differs from weft's fori_loop");
  }

  auto count_up = weft::jit(
      [](const Array& start) {
        return lax::while_loop([](const Array& i) { return i < 1000; },
                               [](const Array& i) { return i + 1; }, start);
      },
      {.name = "count_up"});
  Array zero = Array::from_vector<int>({}, {0});
  HandWhile hand_while;
  if (const int counted = count_up(zero).item<int>(); counted != kWhileIterations)
    fail("weft's while_loop counted to " + std::to_string(counted) + ", not 1000");
  if (const int counted = hand_while.run(); counted != kWhileIterations)
    fail("the hand-written loop counted to " + std::to_string(counted) + ", not 1000");

  auto cumsum = weft::jit(
      [](const Array& xs) {
        return lax::scan(
                   [](const Array& c, const Array& x) {
                     Array s = c + x;
                     return std::pair{s, s};
                   },
                   np::zeros({kScanRow}), xs)
            .second;
      },
      {.name = "cumsum"});
  Array xs = Array::from_vector<float>({kScanSteps, kScanRow},
                                       std::vector<float>(kScanSteps * kScanRow, 1.0f));
  {
    const std::vector<float> sums = cumsum(xs).to_vector<float>();
    if (sums.back() != static_cast<float>(kScanSteps)) fail("the scan's cumulative sum is wrong");
  }

  auto add_one = weft::jit([](const Array& x) { return x + 1.0f; }, {.name = "add_one"});
  Array small = Array::from_vector<float>({16}, ramp(16, 1.0f));
  add_one(small).block_until_ready();
  weft::bench::RawProgram add_program(kAddOneSource);
  cl::ClKernel add_kernel = add_program.kernel("add_one");
  cl::ClMem add_in = weft::bench::make_buffer(ramp(16, 1.0f)),
            add_out = weft::bench::make_buffer(16 * sizeof(float));
  constexpr int kDispatchCalls = 200;

  const auto samples = weft::bench::time_interleaved(
      {
          [&] { fori.jitted(fori.x).block_until_ready(); },
          [&] { hand_fori.run(); },
          [&] { count_up(zero).block_until_ready(); },
          [&] { hand_while.run(); },
          [&] { cumsum(xs).block_until_ready(); },
          [&] {
            for (int i = 0; i < kDispatchCalls; ++i) add_one(small).block_until_ready();
          },
          [&] {
            const std::size_t global = 64, local = 64;
            for (int i = 0; i < kDispatchCalls; ++i) {
              set_arg(add_kernel.get(), 0, add_in.get());
              set_arg(add_kernel.get(), 1, add_out.get());
              weft::bench::launch_and_wait(add_kernel.get(), global, local);
            }
          },
          run_in_kernel,
          [&] { run_per_iteration(); },
      },
      /*warmups=*/2, kRounds);

  const double fori_weft = samples[0].median(), fori_hand = samples[1].median();
  const double while_weft = samples[2].median() / kWhileIterations * 1e6,
               while_hand = samples[3].median() / kWhileIterations * 1e6;
  const double scan_step = samples[4].median() / kScanSteps * 1e6;
  const double fori_in_kernel = samples[7].median(), fori_stepped = samples[8].median();
  const double dispatch_weft = samples[5].median() / kDispatchCalls * 1e6,
               dispatch_raw = samples[6].median() / kDispatchCalls * 1e6;
  std::printf("load average: %s\n", weft::bench::load_average().c_str());
  weft::bench::print_summary({
      {"fori_loop 1000 x (x*a+b) f32[1024]", format(fori_weft * 1e3, 2) + " ms",
       format(fori_hand * 1e3, 2) + " ms (kernel by hand)",
       format(fori_weft / fori_hand, 2) + "x weft/hand", "<= 1.2x",
       weft::bench::met(fori_weft / fori_hand <= 1.2)},
      {"  fori, one launch per iteration", format(fori_stepped * 1e3, 2) + " ms",
       format(fori_hand * 1e3, 2) + " ms (kernel by hand)",
       format(fori_stepped / fori_hand, 2) + "x weft/hand", "<= 1.2x",
       weft::bench::met(fori_stepped / fori_hand <= 1.2)},
      {"  fori, one kernel: against a hand-written one", format(fori_weft * 1e3, 2) + " ms",
       format(fori_in_kernel * 1e3, 2) + " ms (loop in a kernel by hand)",
       format(fori_weft / fori_in_kernel, 2) + "x weft/hand", "info", "n/a"},
      {"while_loop per iteration, device predicate", format(while_weft, 1) + " us",
       format(while_hand, 1) + " us (enqueue + blocking read)",
       format(while_weft / while_hand, 2) + "x weft/hand", "<= 1.5x",
       weft::bench::met(while_weft / while_hand <= 1.5)},
      {"scan cumsum 10000 steps f32[256]", format(scan_step, 1) + " us/step", "-", "-", "-", "n/a"},
      {"dispatch x+1 f32[16] (no control flow)", format(dispatch_weft, 1) + " us/call",
       format(dispatch_raw, 1) + " us/call (raw, buffers made once)",
       format(dispatch_weft / dispatch_raw, 2) + "x weft/raw", "not slower than before", "n/a"},
  });
  return 0;
}
