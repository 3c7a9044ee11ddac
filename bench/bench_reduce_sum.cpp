// np::sum over 2^25 f32 under jit, in GB/s (4 bytes read per element), against the STREAM
// triad hand-written on the same device.
//
// Info rows split weft's time: its compiled kernels (both stages) enqueued by hand with their
// plan's launch geometry into buffers made once, and the hand-written prototype that weft's CPU
// reduction codegen follows: a two-stage reduction that gives each work-item one contiguous chunk
// of 8192 floats (64 work-groups of 64), folds it into eight independent accumulators, adds the
// group's sums in local memory and lets a one-work-item kernel add the 64 partials, its buffers
// made once. weft's own kernels choose their group count and chunk size themselves (the generated
// source is printed).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <vector>

#include "common.h"
#include "weft/weft.h"

namespace {

using weft::Array;
using weft::bench::format;
using weft::bench::set_arg;
namespace np = weft::np;

constexpr std::size_t kN = std::size_t{1} << 25;
constexpr int kRounds = 11;
constexpr std::size_t kGroups = 64, kLocal = 64;

constexpr const char* kSumSource = R"CL(
#define GROUP_SUM(acc)                                            \
  __local float scratch[64];                                      \
  scratch[lid] = (acc);                                           \
  barrier(CLK_LOCAL_MEM_FENCE);                                   \
  for (int step = 32; step > 0; step >>= 1) {                     \
    if (lid < step) scratch[lid] += scratch[lid + step];          \
    barrier(CLK_LOCAL_MEM_FENCE);                                 \
  }                                                               \
  if (lid == 0) partial[get_group_id(0)] = scratch[0];

// chunk is a multiple of 8.
__kernel __attribute__((reqd_work_group_size(64, 1, 1)))
void chunked_8acc(__global const float* restrict a0, __global float* restrict partial,
                  const int chunk) {
  const int lid = (int)get_local_id(0);
  const int first = (int)get_global_id(0) * chunk;
  float s[8] = {0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f};
  for (int r = first; r < first + chunk; r += 8)
    for (int j = 0; j < 8; ++j) s[j] += a0[r + j];
  GROUP_SUM(((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7])))
}

__kernel void sum_partials(__global const float* restrict partial, __global float* restrict out,
                           const int count) {
  if (get_global_id(0) != 0) return;
  float acc = 0.0f;
  for (int g = 0; g < count; ++g) acc += partial[g];
  out[0] = acc;
}
)CL";

void check_sum(float got, double expect, const char* who) {
  if (std::fabs(got - expect) > 1e-4 * std::fabs(expect)) {
    std::fprintf(stderr, "%s summed to %.8g, expected %.8g\n", who, static_cast<double>(got),
                 expect);
    std::exit(1);
  }
}

}  // namespace

int main() {
  std::printf("device: %s\n", weft::bench::device_line().c_str());
  std::vector<float> host(kN);
  double expect = 0;
  for (std::size_t i = 0; i < kN; ++i) {
    host[i] = static_cast<float>(i % 1024) / 1024.0f;
    expect += host[i];
  }
  Array x = Array::from_vector<float>({static_cast<std::int64_t>(kN)}, host);

  auto total = weft::jit([](const Array& v) { return np::sum(v); }, {.name = "total"});
  std::shared_ptr<weft::Executable> exe = total.lower(x).compile();
  const weft::CompiledInfo& info = exe->info();
  std::printf("jit: %zu kernel(s):", info.kernels.size());
  for (const auto& k : info.kernels)
    std::printf(" %s (%s, %d launch(es))", k.name.c_str(), k.kind.c_str(), k.launches);
  std::printf("\ngenerated source:\n%s\n", info.source.c_str());
  check_sum(total(x).item<float>(), expect, "weft");

  weft::bench::RawProgram program(kSumSource);
  weft::opencl::ClKernel partials = program.kernel("sum_partials");
  weft::opencl::ClMem in = weft::bench::make_buffer(host);
  weft::opencl::ClMem partial = weft::bench::make_buffer(kGroups * sizeof(float));
  weft::opencl::ClMem out = weft::bench::make_buffer(sizeof(float));
  set_arg(partials.get(), 0, partial.get());
  set_arg(partials.get(), 1, out.get());
  set_arg(partials.get(), 2, static_cast<cl_int>(kGroups));
  weft::opencl::ClKernel chunked = program.kernel("chunked_8acc");
  set_arg(chunked.get(), 0, in.get());
  set_arg(chunked.get(), 1, partial.get());
  set_arg(chunked.get(), 2, static_cast<cl_int>(kN / (kGroups * kLocal)));
  // Both stages, the second waiting on the first's event, as weft enqueues its two launches.
  auto run_chunked = [&] {
    cl_event first = nullptr;
    const std::size_t global = kGroups * kLocal, one = 1;
    weft::bench::check(clEnqueueNDRangeKernel(weft::bench::device().queue(), chunked.get(), 1,
                                              nullptr, &global, &kLocal, 0, nullptr, &first),
                       "clEnqueueNDRangeKernel");
    weft::opencl::ClEvent first_done(first);
    cl_event second = nullptr;
    weft::bench::check(clEnqueueNDRangeKernel(weft::bench::device().queue(), partials.get(), 1,
                                              nullptr, &one, &one, 1, &first, &second),
                       "clEnqueueNDRangeKernel");
    weft::opencl::ClEvent second_done(second);
    weft::bench::check(clWaitForEvents(1, &second), "clWaitForEvents");
  };
  run_chunked();
  check_sum(weft::bench::read_buffer(out.get(), 1)[0], expect, "hand-written sum");
  weft::bench::PlanLaunches generated(exe, {in.get()});
  generated.run();
  check_sum(weft::bench::read_buffer(generated.output(0), 1)[0], expect, "weft's kernels by hand");

  weft::bench::Triad triad(kN);
  const auto samples = weft::bench::time_interleaved(
      {[&] { total(x).block_until_ready(); }, [&] { generated.run(); }, run_chunked,
       [&] { triad.run_simple(); }, [&] { triad.run_blocked(); }},
      2, kRounds);
  triad.verify();

  const double sum_bytes = 4.0 * static_cast<double>(kN);
  const char* names[] = {"weft jit np::sum", "weft's kernels by hand, buffers made once",
                         "prototype: chunk per work-item, 8 accs",
                         "triad, 1 element/work-item (BabelStream form)",
                         "triad, 64 elements/work-item"};
  std::vector<double> gbps(samples.size());
  std::printf("\n%-48s %10s %10s %8s\n", "contender", "median ms", "best ms", "GB/s");
  for (std::size_t c = 0; c < samples.size(); ++c) {
    gbps[c] = (c >= 3 ? triad.bytes() : sum_bytes) / samples[c].median() / 1e9;
    std::printf("%-48s %10.2f %10.2f %8.2f\n", names[c], samples[c].median() * 1e3,
                samples[c].best() * 1e3, gbps[c]);
  }
  const double triad_gbps = std::max(gbps[3], gbps[4]);
  const std::string triad_text = format(triad_gbps, 2) + " GB/s (triad, best form)";
  weft::bench::print_summary({
      {"sum f32[2^25]", format(gbps[0], 2) + " GB/s", triad_text,
       format(gbps[0] / triad_gbps, 2) + "x weft/triad", ">= 0.60x",
       weft::bench::met(gbps[0] / triad_gbps >= 0.60)},
      {"  sum: weft's kernels, buffers made once", format(gbps[1], 2) + " GB/s", triad_text,
       format(gbps[1] / triad_gbps, 2) + "x kernels/triad", "info", "n/a"},
      {"  sum: prototype chunked, 8 accumulators", format(gbps[2], 2) + " GB/s", triad_text,
       format(gbps[2] / triad_gbps, 2) + "x proto/triad", "info", "n/a"},
  });
  return 0;
}
