// Dispatch overhead: a jitted x + 1 on 16 floats, called and waited for in a loop, against
// the same kernel enqueued through the raw OpenCL C API on the same context and queue.
//
// Contenders (Google Benchmark, wall-clock time per call):
//   weft_jit            f(x) then y.block_until_ready(): signature lookup, an output buffer
//                       from the runtime, clSetKernelArg, clEnqueueNDRangeKernel, clFlush,
//                       clWaitForEvents.
//   weft_executable     the compiled Executable::run + Device::wait, skipping jit's lookup.
//   raw_alloc_per_call  clCreateBuffer for the output, clSetKernelArg x2, clEnqueueNDRange-
//                       Kernel, clWaitForEvents, release: the work of a runtime without a
//                       buffer pool. The goal's baseline.
//   raw_preallocated    the output buffer made once: the floor of any OpenCL dispatch, and the
//                       fairer comparison now that weft reuses released buffers.
// Every contender launches 64 work-items in one work-group of 64, each checking its index:
// weft's geometry for a loop kernel shorter than 256 elements (a checked tail launch only).
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include <unistd.h>

#include "common.h"
#include "weft/weft.h"

namespace {

using weft::Array;
using weft::bench::check;
using weft::bench::device;
using weft::bench::set_arg;

constexpr int kN = 16;
constexpr std::size_t kGlobal = 64, kLocal = 64;

constexpr const char* kAddOneSource = R"CL(
__kernel void add_one(__global const float* restrict a0, __global float* restrict out) {
  const int gid = (int)get_global_id(0);
  if (gid >= 16) return;
  out[gid] = a0[gid] + 1.0f;
}
)CL";

std::vector<float> input_values() {
  std::vector<float> v(kN);
  for (int i = 0; i < kN; ++i) v[static_cast<std::size_t>(i)] = static_cast<float>(i);
  return v;
}

auto add_one = weft::jit([](const Array& x) { return x + 1.0f; }, {.name = "add_one"});

void check_result(const std::vector<float>& out, const char* who) {
  for (int i = 0; i < kN; ++i)
    if (out[static_cast<std::size_t>(i)] != static_cast<float>(i) + 1.0f) {
      std::fprintf(stderr, "%s computed a wrong x + 1 at %d\n", who, i);
      std::exit(1);
    }
}

void BM_weft_jit(benchmark::State& state) {
  Array x = Array::from_vector<float>({kN}, input_values());
  Array y = add_one(x);
  check_result(y.to_vector<float>(), "weft");
  for (auto _ : state) {
    Array out = add_one(x);
    out.block_until_ready();
    benchmark::DoNotOptimize(out);
  }
}

void BM_weft_executable(benchmark::State& state) {
  Array x = Array::from_vector<float>({kN}, input_values());
  std::shared_ptr<weft::Executable> exe = add_one.lower(x).compile();
  const std::vector<float> values = input_values();
  std::vector<std::shared_ptr<weft::Buffer>> inputs = {
      device().upload(values.data(), values.size() * sizeof(float))};
  for (auto _ : state) {
    auto outputs = exe->run(inputs);
    device().wait(*outputs[0]);
    benchmark::DoNotOptimize(outputs);
  }
}

void BM_raw_alloc_per_call(benchmark::State& state) {
  weft::bench::RawProgram program(kAddOneSource);
  weft::opencl::ClKernel kernel = program.kernel("add_one");
  weft::opencl::ClMem in = weft::bench::make_buffer(input_values());
  {
    weft::opencl::ClMem out = weft::bench::make_buffer(kN * sizeof(float));
    set_arg(kernel.get(), 0, in.get());
    set_arg(kernel.get(), 1, out.get());
    weft::bench::launch_and_wait(kernel.get(), kGlobal, kLocal);
    check_result(weft::bench::read_buffer(out.get(), kN), "raw OpenCL");
  }
  for (auto _ : state) {
    cl_int status = CL_SUCCESS;
    cl_mem out =
        clCreateBuffer(device().context(), CL_MEM_READ_WRITE, kN * sizeof(float), nullptr, &status);
    check(status, "clCreateBuffer");
    set_arg(kernel.get(), 0, in.get());
    set_arg(kernel.get(), 1, out);
    cl_event done = nullptr;
    check(clEnqueueNDRangeKernel(device().queue(), kernel.get(), 1, nullptr, &kGlobal, &kLocal, 0,
                                 nullptr, &done),
          "clEnqueueNDRangeKernel");
    check(clWaitForEvents(1, &done), "clWaitForEvents");
    clReleaseEvent(done);
    clReleaseMemObject(out);
  }
}

void BM_raw_preallocated(benchmark::State& state) {
  weft::bench::RawProgram program(kAddOneSource);
  weft::opencl::ClKernel kernel = program.kernel("add_one");
  weft::opencl::ClMem in = weft::bench::make_buffer(input_values());
  weft::opencl::ClMem out = weft::bench::make_buffer(kN * sizeof(float));
  for (auto _ : state) {
    set_arg(kernel.get(), 0, in.get());
    set_arg(kernel.get(), 1, out.get());
    cl_event done = nullptr;
    check(clEnqueueNDRangeKernel(device().queue(), kernel.get(), 1, nullptr, &kGlobal, &kLocal, 0,
                                 nullptr, &done),
          "clEnqueueNDRangeKernel");
    check(clWaitForEvents(1, &done), "clWaitForEvents");
    clReleaseEvent(done);
  }
}

constexpr int kRepetitions = 7;
constexpr double kMinSeconds = 0.3;

BENCHMARK(BM_weft_jit)
    ->Unit(benchmark::kMicrosecond)
    ->UseRealTime()
    ->MinTime(kMinSeconds)
    ->Repetitions(kRepetitions);
BENCHMARK(BM_weft_executable)
    ->Unit(benchmark::kMicrosecond)
    ->UseRealTime()
    ->MinTime(kMinSeconds)
    ->Repetitions(kRepetitions);
BENCHMARK(BM_raw_alloc_per_call)
    ->Unit(benchmark::kMicrosecond)
    ->UseRealTime()
    ->MinTime(kMinSeconds)
    ->Repetitions(kRepetitions);
BENCHMARK(BM_raw_preallocated)
    ->Unit(benchmark::kMicrosecond)
    ->UseRealTime()
    ->MinTime(kMinSeconds)
    ->Repetitions(kRepetitions);

// The console output as usual, plus the median real time per call of each benchmark.
class MedianCollector : public benchmark::ConsoleReporter {
 public:
  explicit MedianCollector(OutputOptions options) : ConsoleReporter(options) {}
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const Run& run : runs)
      if (run.run_type == Run::RT_Aggregate && run.aggregate_name == "median")
        medians_us[run.run_name.function_name] = run.GetAdjustedRealTime();
    ConsoleReporter::ReportRuns(runs);
  }
  std::map<std::string, double> medians_us;
};

}  // namespace

int main(int argc, char** argv) {
  // Repetitions of different benchmarks run in random order unless the caller says otherwise,
  // so that load from other processes spreads over all contenders.
  std::vector<char*> args(argv, argv + argc);
  std::string interleave = "--benchmark_enable_random_interleaving=true";
  bool given = false;
  for (int i = 1; i < argc; ++i)
    given |= std::strncmp(argv[i], "--benchmark_enable_random_interleaving", 38) == 0;
  if (!given) args.insert(args.begin() + 1, interleave.data());
  int count = static_cast<int>(args.size());
  benchmark::Initialize(&count, args.data());
  if (benchmark::ReportUnrecognizedArguments(count, args.data())) return 1;

  std::printf("device: %s\n", weft::bench::device_line().c_str());
  Array probe = Array::from_vector<float>({kN}, input_values());
  const weft::CompiledInfo& info = add_one.lower(probe).compile()->info();
  std::printf("weft compiled x + 1 into %zu kernel(s); generated source:\n%s\n",
              info.kernels.size(), info.source.c_str());

  MedianCollector reporter(isatty(fileno(stdout)) ? benchmark::ConsoleReporter::OO_ColorTabular
                                                  : benchmark::ConsoleReporter::OO_Tabular);
  benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::Shutdown();

  auto median = [&](const char* name) {
    auto found = reporter.medians_us.find(name);
    return found == reporter.medians_us.end() ? -1.0 : found->second;
  };
  const double jit = median("BM_weft_jit"), exe = median("BM_weft_executable");
  const double raw = median("BM_raw_alloc_per_call"), pre = median("BM_raw_preallocated");
  using weft::bench::format;
  std::vector<weft::bench::SummaryRow> rows;
  if (jit > 0 && raw > 0)
    rows.push_back({"dispatch x+1 f32[16], jit call", format(jit, 1) + " us/call",
                    format(raw, 1) + " us/call (raw OpenCL, output allocated per call)",
                    format(jit / raw, 2) + "x weft/raw", "<= 1.5x",
                    weft::bench::met(jit / raw <= 1.5)});
  if (exe > 0 && raw > 0)
    rows.push_back({"dispatch x+1 f32[16], Executable::run", format(exe, 1) + " us/call",
                    format(raw, 1) + " us/call (raw OpenCL, output allocated per call)",
                    format(exe / raw, 2) + "x weft/raw", "info", "n/a"});
  if (jit > 0 && pre > 0)
    rows.push_back({"dispatch x+1 f32[16], jit vs preallocated", format(jit, 1) + " us/call",
                    format(pre, 1) + " us/call (raw OpenCL, output preallocated)",
                    format(jit / pre, 2) + "x weft/raw", "info", "n/a"});
  if (!rows.empty()) weft::bench::print_summary(rows);
  return 0;
}
