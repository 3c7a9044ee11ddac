// Effects (host callbacks) on the device, each figure against a baseline timed in the same run
// (contenders interleaved round by round, medians over the rounds, compilation never timed):
//
//   tap in a loop  hcb::id_tap inside a jitted lax::fori_loop of 10,000 iterations of
//                  x = id_tap(count, x * 1.0001 + 0.5) on f32[16]; each run is the call,
//                  hcb::barrier_wait() and the result copied to the host, and must count
//                  exactly 10,000 taps. The figure is (loop with the tap - the same loop
//                  without it) / 10,000. Goal <= 20 us per tap. weft runs the loop without the
//                  tap as one kernel that iterates inside; an info row takes the difference
//                  against that loop compiled with one launch per iteration instead (the
//                  plan the loop with the tap needs), which leaves the tap's own cost.
//   ordering       2,000 back-to-back calls of a jitted f(x) = { io_callback(no-op, no
//                  results, x, ordered or not); return x + 1; } on f32[16], then one
//                  weft::effects_barrier() and a wait for the last result: us per call,
//                  ordered against unordered. Goal <= 1.3x. Info rows: the same with
//                  debug_print (written to a stream that discards it).
//   dispatch       x + 1 on f32[16] without effects, call + wait (bench_dispatch's jit
//                  contender), against the raw OpenCL enqueue + wait of the same kernel with
//                  an output allocated per call (bench_dispatch's goal baseline, <= 1.5x) and
//                  with one made once (info): effect-free dispatch must not get slower.
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ostream>
#include <streambuf>
#include <string>
#include <vector>

#include "common.h"
#include "report.h"
#include "weft/debug.h"
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
namespace hcb = weft::hcb;
namespace cl = weft::opencl;

constexpr int kTapIterations = 10000;
constexpr int kDispatches = 2000;
constexpr int kDispatchCalls = 200;
constexpr std::int64_t kN = 16;
constexpr int kRounds = 15;
constexpr double kTapGoalUs = 20.0;
constexpr double kOrderedGoal = 1.3;
constexpr double kDispatchGoal = 1.5;

std::vector<float> ramp(std::int64_t n) {
  std::vector<float> v(static_cast<std::size_t>(n));
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i % 7);
  return v;
}

[[noreturn]] void fail(const std::string& what) {
  std::fprintf(stderr, "bench_effects: %s\n", what.c_str());
  std::exit(1);
}

// An ostream that drops everything written to it.
class NullBuffer : public std::streambuf {
 protected:
  int overflow(int c) override { return traits_type::not_eof(c); }
  std::streamsize xsputn(const char*, std::streamsize n) override { return n; }
};

// "Loop[Launch, Host]": the kinds of a plan's steps, regions in brackets.
std::string describe(const cl::BlockPlan& block) {
  std::string out;
  for (const cl::StepPlan& step : block.steps) {
    if (!out.empty()) out += ", ";
    switch (step.kind) {
      case cl::StepPlan::Kind::Launch:
        out += "Launch";
        break;
      case cl::StepPlan::Kind::Loop:
        out += "Loop";
        break;
      case cl::StepPlan::Kind::While:
        out += "While";
        break;
      case cl::StepPlan::Kind::Cond:
        out += "Cond";
        break;
      case cl::StepPlan::Kind::Host:
        out += "Host";
        break;
      case cl::StepPlan::Kind::Join:
        out += "Join";
        break;
    }
    for (const cl::BlockPlan& region : step.regions) out += "[" + describe(region) + "]";
  }
  return out;
}

std::string plan_of(const std::shared_ptr<weft::Executable>& executable) {
  auto exe = std::dynamic_pointer_cast<cl::OpenCLExecutable>(executable);
  return exe ? describe(exe->plan()) : std::string("(not an OpenCL executable)");
}

// x * 1.0001 + 0.5, kTapIterations times, on the host in float (the device may contract the
// multiply-add into an fma, hence the tolerance of the comparison).
std::vector<float> loop_on_host(std::vector<float> x) {
  for (int k = 0; k < kTapIterations; ++k)
    for (float& v : x) v = v * 1.0001f + 0.5f;
  return x;
}

void check_close(const std::vector<float>& got, const std::vector<float>& want, const char* who) {
  if (got.size() != want.size()) fail(std::string(who) + ": wrong result size");
  for (std::size_t i = 0; i < got.size(); ++i)
    if (std::abs(got[i] - want[i]) > 1e-3f * (1.0f + std::abs(want[i])))
      fail(std::string(who) + ": element " + std::to_string(i) + " is " + std::to_string(got[i]) +
           ", want " + std::to_string(want[i]));
}

constexpr const char* kAddOneSource = R"CL(
__kernel void add_one(__global const float* restrict a0, __global float* restrict out) {
  const int gid = (int)get_global_id(0);
  if (gid >= 16) return;
  out[gid] = a0[gid] + 1.0f;
}
)CL";

}  // namespace

int main() {
  std::printf("bench_effects on %s\n", weft::bench::device_line().c_str());
  NullBuffer null_buffer;
  std::ostream null_stream(&null_buffer);
  weft::set_debug_print_stream(&null_stream);

  const Array x = Array::from_vector<float>({kN}, ramp(kN));
  const std::vector<float> want_loop = loop_on_host(ramp(kN));

  // --- tap in a loop ---------------------------------------------------------------------
  std::atomic<long> taps{0};
  auto tap_loop = weft::jit(
      [&taps](const Array& x0) {
        return lax::fori_loop(
            0, kTapIterations,
            [&taps](const Array&, const Array& v) {
              return hcb::id_tap(
                  [&taps](const weft::HostArray&) { taps.fetch_add(1, std::memory_order_relaxed); },
                  v * 1.0001f + 0.5f);
            },
            x0);
      },
      {.name = "tap_loop"});
  std::function<Array(const Array&)> plain_fn = [](const Array& x0) {
    return lax::fori_loop(
        0, kTapIterations, [](const Array&, const Array& v) { return v * 1.0001f + 0.5f; }, x0);
  };
  auto plain_loop = weft::jit(plain_fn, {.name = "plain_loop"});

  std::printf("plan, loop with the tap:    %s\n", plan_of(tap_loop.lower(x).compile()).c_str());
  std::printf("plan, loop without the tap: %s\n", plan_of(plain_loop.lower(x).compile()).c_str());
  weft::FusionOptions stepped_options;
  stepped_options.loops_in_one_kernel = false;
  auto stepped_loop = std::make_shared<cl::OpenCLExecutable>(
      device(), cl::plan_program(plain_loop.lower(x).graph(), device().caps(), stepped_options));
  std::printf("plan, loop without the tap, one launch per iteration: %s\n",
              describe(stepped_loop->plan()).c_str());
  std::fflush(stdout);

  // Each run: call, barrier, result on the host; exactly kTapIterations taps or exit 1.
  auto run_tap_loop = [&] {
    const long before = taps.load();
    Array y = tap_loop(x);
    hcb::barrier_wait();
    weft::HostArray host = y.to_host();
    const long counted = taps.load() - before;
    if (counted != kTapIterations)
      fail("the tap loop made " + std::to_string(counted) + " tap calls, not " +
           std::to_string(kTapIterations));
    return host;
  };
  auto run_plain_loop = [&] {
    Array y = plain_loop(x);
    hcb::barrier_wait();
    return y.to_host();
  };
  const std::vector<float> x_values = ramp(kN);
  std::vector<std::shared_ptr<weft::Buffer>> stepped_inputs = {
      device().upload(x_values.data(), x_values.size() * sizeof(float))};
  auto run_stepped_loop = [&] {
    std::vector<std::shared_ptr<weft::Buffer>> out = stepped_loop->run(stepped_inputs);
    hcb::barrier_wait();
    std::vector<float> host(static_cast<std::size_t>(kN));
    device().download(*out.at(0), host.data(), host.size() * sizeof(float));
    return host;
  };
  check_close(run_tap_loop().to_vector<float>(), want_loop, "the loop with the tap");
  check_close(run_plain_loop().to_vector<float>(), want_loop, "the loop without the tap");
  check_close(run_stepped_loop(), want_loop, "the loop without the tap, one launch per iteration");

  // --- ordered against unordered dispatch --------------------------------------------------
  std::atomic<long> callbacks{0};
  auto make_io = [&callbacks](bool ordered) {
    return weft::jit(
        [&callbacks, ordered](const Array& v) {
          weft::io_callback(
              [&callbacks](const weft::HostArray&) {
                callbacks.fetch_add(1, std::memory_order_relaxed);
              },
              weft::Results(std::vector<weft::ShapeDtype>{}), v,
              weft::CallbackOptions{.ordered = ordered});
          return v + 1.0f;
        },
        {.name = ordered ? "io_ordered" : "io_unordered"});
  };
  auto io_ordered = make_io(true);
  auto io_unordered = make_io(false);
  auto make_print = [](bool ordered) {
    return weft::jit(
        [ordered](const Array& v) {
          weft::debug_print("{}", v, weft::DebugPrintOptions{.ordered = ordered});
          return v + 1.0f;
        },
        {.name = ordered ? "print_ordered" : "print_unordered"});
  };
  auto print_ordered = make_print(true);
  auto print_unordered = make_print(false);
  std::printf("plan, io_callback ordered:   %s\n", plan_of(io_ordered.lower(x).compile()).c_str());
  std::printf("plan, io_callback unordered: %s\n",
              plan_of(io_unordered.lower(x).compile()).c_str());
  std::printf("plan, debug_print ordered:   %s\n",
              plan_of(print_ordered.lower(x).compile()).c_str());
  std::printf("plan, debug_print unordered: %s\n",
              plan_of(print_unordered.lower(x).compile()).c_str());
  std::fflush(stdout);

  const std::vector<float> want_plus_one = [&] {
    std::vector<float> v = ramp(kN);
    for (float& e : v) e += 1.0f;
    return v;
  }();
  // kDispatches calls back to back, one barrier, the last result on the host; with `counted`,
  // exactly kDispatches callbacks or exit 1.
  auto burst = [&](auto& fn, const char* who, bool counted) {
    const long before = callbacks.load();
    Array last;
    for (int i = 0; i < kDispatches; ++i) last = fn(x);
    weft::effects_barrier();
    const std::vector<float> got = last.to_vector<float>();
    if (got != want_plus_one) fail(std::string(who) + " computed a wrong x + 1");
    if (counted && callbacks.load() - before != kDispatches)
      fail(std::string(who) + " made " + std::to_string(callbacks.load() - before) +
           " callbacks for " + std::to_string(kDispatches) + " calls");
  };
  burst(io_ordered, "io_callback ordered", true);
  burst(io_unordered, "io_callback unordered", true);
  burst(print_ordered, "debug_print ordered", false);
  burst(print_unordered, "debug_print unordered", false);

  // --- effect-free dispatch -----------------------------------------------------------------
  auto add_one = weft::jit([](const Array& v) { return v + 1.0f; }, {.name = "add_one"});
  if (add_one(x).to_vector<float>() != want_plus_one) fail("weft computed a wrong x + 1");
  weft::bench::RawProgram add_program(kAddOneSource);
  cl::ClKernel add_kernel = add_program.kernel("add_one");
  cl::ClMem add_in = weft::bench::make_buffer(ramp(kN)),
            add_out = weft::bench::make_buffer(kN * sizeof(float));
  const std::size_t global = 64, local = 64;
  set_arg(add_kernel.get(), 0, add_in.get());
  set_arg(add_kernel.get(), 1, add_out.get());
  weft::bench::launch_and_wait(add_kernel.get(), global, local);
  if (weft::bench::read_buffer(add_out.get(), kN) != want_plus_one)
    fail("the raw OpenCL kernel computed a wrong x + 1");

  const auto samples = weft::bench::time_interleaved(
      {
          [&] { run_tap_loop(); },
          [&] { run_plain_loop(); },
          [&] { run_stepped_loop(); },
          [&] { burst(io_ordered, "io_callback ordered", true); },
          [&] { burst(io_unordered, "io_callback unordered", true); },
          [&] { burst(print_ordered, "debug_print ordered", false); },
          [&] { burst(print_unordered, "debug_print unordered", false); },
          [&] {
            for (int i = 0; i < kDispatchCalls; ++i) add_one(x).block_until_ready();
          },
          [&] {
            for (int i = 0; i < kDispatchCalls; ++i) {
              cl_int status = CL_SUCCESS;
              cl_mem out = clCreateBuffer(device().context(), CL_MEM_READ_WRITE, kN * sizeof(float),
                                          nullptr, &status);
              check(status, "clCreateBuffer");
              set_arg(add_kernel.get(), 0, add_in.get());
              set_arg(add_kernel.get(), 1, out);
              weft::bench::launch_and_wait(add_kernel.get(), global, local);
              clReleaseMemObject(out);
            }
          },
          [&] {
            for (int i = 0; i < kDispatchCalls; ++i) {
              set_arg(add_kernel.get(), 0, add_in.get());
              set_arg(add_kernel.get(), 1, add_out.get());
              weft::bench::launch_and_wait(add_kernel.get(), global, local);
            }
          },
      },
      /*warmups=*/2, kRounds);

  const double us = 1e6;
  const double tap_loop_s = samples[0].median(), plain_loop_s = samples[1].median(),
               stepped_loop_s = samples[2].median();
  const double tap_iter = tap_loop_s / kTapIterations * us,
               plain_iter = plain_loop_s / kTapIterations * us,
               stepped_iter = stepped_loop_s / kTapIterations * us;
  const double per_tap = tap_iter - plain_iter, per_tap_stepped = tap_iter - stepped_iter;
  const double io_ordered_us = samples[3].median() / kDispatches * us,
               io_unordered_us = samples[4].median() / kDispatches * us,
               print_ordered_us = samples[5].median() / kDispatches * us,
               print_unordered_us = samples[6].median() / kDispatches * us;
  const double dispatch_weft = samples[7].median() / kDispatchCalls * us,
               dispatch_alloc = samples[8].median() / kDispatchCalls * us,
               dispatch_prealloc = samples[9].median() / kDispatchCalls * us;

  std::printf("\ncontender (median of %d rounds)             | median      | best\n", kRounds);
  const char* names[] = {
      "fori 10000 x id_tap (call+barrier+host)",  "fori 10000 without tap (one kernel)",
      "fori 10000 without tap (launch per iter)", "2000 x io_callback ordered + barrier",
      "2000 x io_callback unordered + barrier",   "2000 x debug_print ordered + barrier",
      "2000 x debug_print unordered + barrier",   "200 x weft x+1 f32[16] call + wait",
      "200 x raw OpenCL x+1, output per call",    "200 x raw OpenCL x+1, output made once"};
  for (std::size_t i = 0; i < samples.size(); ++i)
    std::printf("%-44s | %8.3f ms | %8.3f ms\n", names[i], samples[i].median() * 1e3,
                samples[i].best() * 1e3);

  std::printf("load average: %s\n", weft::bench::load_average().c_str());
  weft::bench::print_summary({
      {"id_tap in fori_loop 10000 x f32[16], per tap",
       format(per_tap, 1) + " us/tap (" + format(tap_iter, 1) + " us/iter)",
       format(plain_iter, 2) + " us/iter (loop without tap)",
       format(tap_iter / plain_iter, 1) + "x tap/no tap", "<= 20 us/tap",
       weft::bench::met(per_tap <= kTapGoalUs)},
      {"  id_tap per tap, vs launch-per-iteration loop", format(per_tap_stepped, 1) + " us/tap",
       format(stepped_iter, 1) + " us/iter (no tap, launch per iter)",
       format(tap_iter / stepped_iter, 2) + "x tap/no tap", "info", "n/a"},
      {"io_callback 2000 calls + barrier, ordered", format(io_ordered_us, 1) + " us/call",
       format(io_unordered_us, 1) + " us/call (unordered)",
       format(io_ordered_us / io_unordered_us, 2) + "x ordered/unordered", "<= 1.3x",
       weft::bench::met(io_ordered_us / io_unordered_us <= kOrderedGoal)},
      {"  debug_print 2000 calls + barrier, ordered", format(print_ordered_us, 1) + " us/call",
       format(print_unordered_us, 1) + " us/call (unordered)",
       format(print_ordered_us / print_unordered_us, 2) + "x ordered/unordered", "info", "n/a"},
      {"dispatch x+1 f32[16] (no effects)", format(dispatch_weft, 1) + " us/call",
       format(dispatch_alloc, 1) + " us/call (raw, output per call)",
       format(dispatch_weft / dispatch_alloc, 2) + "x weft/raw", "<= 1.5x",
       weft::bench::met(dispatch_weft / dispatch_alloc <= kDispatchGoal)},
      {"  dispatch x+1 f32[16] vs preallocated", format(dispatch_weft, 1) + " us/call",
       format(dispatch_prealloc, 1) + " us/call (raw, output made once)",
       format(dispatch_weft / dispatch_prealloc, 2) + "x weft/raw", "info", "n/a"},
  });
  weft::set_debug_print_stream(nullptr);
  return 0;
}
