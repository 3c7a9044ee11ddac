// A fused chain of 8 elementwise ops over 2^25 f32 under jit, in GB/s, against the STREAM
// triad a[i] = b[i] + s * c[i] hand-written on the same device.
//
// The chain (cheap ops, so that it is bound by memory like the triad):
//   y = min(max(((x * 1.5 + 0.5) * 0.75 - 0.25) * 1.25 + 0.125, 0), 6)
//   = mul, add, mul, sub, mul, add, maximum, minimum.
// Bytes counted once: x read and y written, 8 per element. The triad moves 12 per element.
//
// To show where the time goes, the same work also runs as:
//   - weft's generated kernel (CompiledInfo::source) enqueued by hand, with its output
//     created per call as weft's runtime does, and written into a buffer made once;
//   - that kernel with its per-work-item "if (gid >= N) return;" removed (N is a multiple of
//     the local size 256), which lets PoCL vectorise the work-group;
//   - a prototype of the same expression (NaN-propagating max/min as weft emits them) with
//     64 consecutive elements per work-item and the bounds check hoisted out of the loop.
// A second, info-only section does the same for a chain with transcendentals:
//   y = min(max(tanh(exp(x * 0.5) - 1) * 2 + 0.5, 0), 2),
// with a second prototype that computes 16 float4 per work-item (vector exp and tanh).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "common.h"
#include "weft/weft.h"

namespace {

using weft::Array;
using weft::bench::format;
using weft::bench::set_arg;
namespace np = weft::np;

constexpr std::size_t kN = std::size_t{1} << 25;
constexpr int kRounds = 9;
constexpr int kTranscendentalRounds = 3;

Array cheap_chain(const Array& x) {
  Array t = (x * 1.5f + 0.5f) * 0.75f - 0.25f;
  t = t * 1.25f + 0.125f;
  return np::minimum(np::maximum(t, np::scalar_like(0.0, t)), np::scalar_like(6.0, t));
}

float cheap_chain_host(float x) {
  float t = (x * 1.5f + 0.5f) * 0.75f - 0.25f;
  t = t * 1.25f + 0.125f;
  return std::fmin(std::fmax(t, 0.0f), 6.0f);
}

Array transcendental_chain(const Array& x) {
  Array t = np::tanh(np::exp(x * 0.5f) - 1.0f) * 2.0f + 0.5f;
  return np::minimum(np::maximum(t, np::scalar_like(0.0, t)), np::scalar_like(2.0, t));
}

float transcendental_chain_host(float x) {
  const float t = std::tanh(std::exp(x * 0.5f) - 1.0f) * 2.0f + 0.5f;
  return std::fmin(std::fmax(t, 0.0f), 2.0f);
}

// The prototypes: weft's expressions, fatter work-items. N is a multiple of 64.
constexpr const char* kPrototypeSource = R"CL(
#define MAX0(v) ((isnan(v) || isnan(0.0f)) ? ((v) + 0.0f) : fmax((v), 0.0f))
#define MIN(v, c) ((isnan(v) || isnan(c)) ? ((v) + (c)) : fmin((v), (c)))
#define CHEAP(x) MIN(MAX0((((x) * 1.5f + 0.5f) * 0.75f - 0.25f) * 1.25f + 0.125f), 6.0f)
#define TRANSCENDENTAL(x) MIN(MAX0(tanh(exp((x) * 0.5f) - 1.0f) * 2.0f + 0.5f), 2.0f)

// 64 consecutive elements per work-item; the bounds check runs once per work-item.
__kernel void cheap_blocked(__global const float* restrict a0, __global float* restrict out,
                            const int n) {
  const int first = (int)get_global_id(0) * 64;
  if (first + 64 <= n) {
    for (int gid = first; gid < first + 64; ++gid) out[gid] = CHEAP(a0[gid]);
  } else {
    for (int gid = first; gid < n; ++gid) out[gid] = CHEAP(a0[gid]);
  }
}

__kernel void transcendental_blocked(__global const float* restrict a0,
                                     __global float* restrict out, const int n) {
  const int first = (int)get_global_id(0) * 64;
  if (first + 64 <= n) {
    for (int gid = first; gid < first + 64; ++gid) out[gid] = TRANSCENDENTAL(a0[gid]);
  } else {
    for (int gid = first; gid < n; ++gid) out[gid] = TRANSCENDENTAL(a0[gid]);
  }
}

// 16 float4 per work-item: the vector overloads of exp and tanh.
__kernel void transcendental_float4(__global const float* restrict a0,
                                    __global float* restrict out) {
  const int first = (int)get_global_id(0) * 16;
  for (int k = first; k < first + 16; ++k) vstore4(TRANSCENDENTAL(vload4(k, a0)), k, out);
}
)CL";

template <typename F>
void verify(const std::vector<float>& got, const std::vector<float>& x, F host_fn,
            const char* who) {
  for (std::size_t i = 0; i < got.size(); i += 9973) {
    const float expect = host_fn(x[i]);
    if (std::fabs(got[i] - expect) > 1e-5f * (1 + std::fabs(expect))) {
      std::fprintf(stderr, "%s computed %g at %zu, expected %g\n", who, got[i], i, expect);
      std::exit(1);
    }
  }
}

// weft's single generated loop kernel, enqueued by hand with weft's launch geometry.
class GeneratedKernel {
 public:
  GeneratedKernel(const std::string& source, const std::string& name, cl_mem input)
      : program_(source), kernel_(program_.kernel(name.c_str())) {
    cl_uint arity = 0;
    weft::bench::check(
        clGetKernelInfo(kernel_.get(), CL_KERNEL_NUM_ARGS, sizeof(arity), &arity, nullptr),
        "clGetKernelInfo");
    if (arity != 2)
      throw weft::Error("bench: expected weft's loop kernel to take (input, output), it takes " +
                        std::to_string(arity) + " arguments");
    set_arg(kernel_.get(), 0, input);
  }
  void run(cl_mem out) {
    set_arg(kernel_.get(), 1, out);
    weft::bench::launch_and_wait(kernel_.get(), kN, 256);
  }
  void run_allocating() {
    weft::opencl::ClMem out = weft::bench::make_buffer(kN * sizeof(float));
    run(out.get());
  }

 private:
  weft::bench::RawProgram program_;
  weft::opencl::ClKernel kernel_;
};

void print_kernels(const char* what, const weft::CompiledInfo& info) {
  std::printf("%s: %zu kernel(s)", what, info.kernels.size());
  for (const auto& k : info.kernels) {
    std::printf(" [%s, %s:", k.name.c_str(), k.kind.c_str());
    for (const auto& op : k.fused_ops) std::printf(" %s", op.c_str());
    std::printf("]");
  }
  std::printf("\n");
}

void print_table(const std::vector<const char*>& names,
                 const std::vector<weft::bench::Samples>& samples, const std::vector<double>& bytes,
                 std::vector<double>& gbps) {
  std::printf("\n%-56s %10s %10s %8s\n", "contender", "median ms", "best ms", "GB/s");
  gbps.resize(samples.size());
  for (std::size_t c = 0; c < samples.size(); ++c) {
    gbps[c] = bytes[c] / samples[c].median() / 1e9;
    std::printf("%-56s %10.2f %10.2f %8.2f\n", names[c], samples[c].median() * 1e3,
                samples[c].best() * 1e3, gbps[c]);
  }
}

}  // namespace

int main() {
  std::printf("device: %s\n", weft::bench::device_line().c_str());
  std::vector<float> host(kN);
  for (std::size_t i = 0; i < kN; ++i) host[i] = static_cast<float>(i % 4096) / 512.0f - 4.0f;
  Array x = Array::from_vector<float>({static_cast<std::int64_t>(kN)}, host);

  auto cheap = weft::jit(cheap_chain, {.name = "cheap_chain"});
  auto transcendental = weft::jit(transcendental_chain, {.name = "transcendental_chain"});
  const weft::CompiledInfo& info = cheap.lower(x).compile()->info();
  const weft::CompiledInfo& info_t = transcendental.lower(x).compile()->info();
  print_kernels("cheap chain", info);
  print_kernels("exp/tanh chain", info_t);
  std::printf("generated source of the cheap chain:\n%s\n", info.source.c_str());
  const bool one_kernel = info.kernels.size() == 1 && info.kernels[0].kind == "loop";
  const bool one_kernel_t = info_t.kernels.size() == 1 && info_t.kernels[0].kind == "loop";
  if (!one_kernel || !one_kernel_t) {
    std::printf("a chain did not fuse into one loop kernel; nothing else to measure\n");
    weft::bench::print_summary(
        {{"fused 8-op chain kernel count", std::to_string(info.kernels.size()) + " kernel(s)",
          "1 kernel", std::to_string(info.kernels.size()) + "/1", "== 1", "no"}});
    return 0;
  }

  weft::opencl::ClMem in = weft::bench::make_buffer(host);
  weft::opencl::ClMem out = weft::bench::make_buffer(kN * sizeof(float));
  const std::string& name = info.kernels[0].name;
  GeneratedKernel generated(info.source, name, in.get());
  GeneratedKernel generated_t(info_t.source, info_t.kernels[0].name, in.get());
  // kN is a multiple of weft's local size 256, so no work-item needs the check.
  const std::string unchecked_source = weft::bench::without_bounds_checks(info.source);
  if (unchecked_source.empty())
    throw weft::Error("bench: found no \"if (gid >= N) return;\" in weft's kernel to remove");
  GeneratedKernel unchecked(unchecked_source, name, in.get());
  weft::bench::RawProgram prototypes(kPrototypeSource);
  weft::opencl::ClKernel blocked = prototypes.kernel("cheap_blocked");
  weft::opencl::ClKernel blocked_t = prototypes.kernel("transcendental_blocked");
  weft::opencl::ClKernel vector4 = prototypes.kernel("transcendental_float4");
  set_arg(blocked.get(), 0, in.get());
  set_arg(blocked.get(), 1, out.get());
  set_arg(blocked.get(), 2, static_cast<cl_int>(kN));
  set_arg(blocked_t.get(), 0, in.get());
  set_arg(blocked_t.get(), 1, out.get());
  set_arg(blocked_t.get(), 2, static_cast<cl_int>(kN));
  set_arg(vector4.get(), 0, in.get());
  set_arg(vector4.get(), 1, out.get());
  weft::bench::Triad triad(kN);

  verify(cheap(x).to_vector<float>(), host, cheap_chain_host, "weft");
  generated.run(out.get());
  verify(weft::bench::read_buffer(out.get(), kN), host, cheap_chain_host, "weft's kernel");
  unchecked.run(out.get());
  verify(weft::bench::read_buffer(out.get(), kN), host, cheap_chain_host, "unchecked kernel");
  weft::bench::launch_and_wait(blocked.get(), kN / 64, 64);
  verify(weft::bench::read_buffer(out.get(), kN), host, cheap_chain_host, "prototype");

  const double chain_bytes = 8.0 * static_cast<double>(kN);
  std::vector<double> gbps;
  const auto samples = weft::bench::time_interleaved(
      {[&] { cheap(x).block_until_ready(); }, [&] { generated.run_allocating(); },
       [&] { generated.run(out.get()); }, [&] { unchecked.run(out.get()); },
       [&] { weft::bench::launch_and_wait(blocked.get(), kN / 64, 64); },
       [&] { triad.run_simple(); }, [&] { triad.run_blocked(); }},
      2, kRounds);
  triad.verify();
  print_table({"weft jit (end to end)", "weft's kernel by hand, output created per call",
               "weft's kernel by hand, output made once",
               "weft's kernel without its bounds check, output made once",
               "prototype: 64 elements/work-item, output made once",
               "triad, 1 element/work-item (BabelStream)", "triad, 64 elements/work-item"},
              samples,
              {chain_bytes, chain_bytes, chain_bytes, chain_bytes, chain_bytes, triad.bytes(),
               triad.bytes()},
              gbps);

  std::vector<double> gbps_t;
  verify(transcendental(x).to_vector<float>(), host, transcendental_chain_host, "weft");
  weft::bench::launch_and_wait(blocked_t.get(), kN / 64, 64);
  verify(weft::bench::read_buffer(out.get(), kN), host, transcendental_chain_host,
         "blocked prototype");
  weft::bench::launch_and_wait(vector4.get(), kN / 64, 64);
  verify(weft::bench::read_buffer(out.get(), kN), host, transcendental_chain_host,
         "float4 prototype");
  const auto samples_t = weft::bench::time_interleaved(
      {[&] { transcendental(x).block_until_ready(); }, [&] { generated_t.run(out.get()); },
       [&] { weft::bench::launch_and_wait(blocked_t.get(), kN / 64, 64); },
       [&] { weft::bench::launch_and_wait(vector4.get(), kN / 64, 64); }},
      1, kTranscendentalRounds);
  print_table({"exp/tanh chain: weft jit (end to end)",
               "exp/tanh chain: weft's kernel by hand, output made once",
               "exp/tanh chain: prototype 64 elements/work-item",
               "exp/tanh chain: prototype 16 float4/work-item"},
              samples_t, {chain_bytes, chain_bytes, chain_bytes, chain_bytes}, gbps_t);

  const double triad_gbps = std::max(gbps[5], gbps[6]);
  const std::string triad_text = format(triad_gbps, 2) + " GB/s (triad, best form)";
  auto vs_triad = [&](double g, const char* who) {
    return format(g / triad_gbps, 2) + "x " + who + "/triad";
  };
  weft::bench::print_summary({
      {"fused 8-op chain f32[2^25]", format(gbps[0], 2) + " GB/s", triad_text,
       vs_triad(gbps[0], "weft"), ">= 0.70x", weft::bench::met(gbps[0] / triad_gbps >= 0.70)},
      {"fused 8-op chain kernel count", "1 kernel", "1 kernel", "1/1", "== 1", "yes"},
      {"  chain: weft's kernel, output made once", format(gbps[2], 2) + " GB/s", triad_text,
       vs_triad(gbps[2], "kernel"), "info", "n/a"},
      {"  chain: weft's kernel minus bounds check", format(gbps[3], 2) + " GB/s", triad_text,
       vs_triad(gbps[3], "kernel"), "info", "n/a"},
      {"  chain: prototype 64 elements/work-item", format(gbps[4], 2) + " GB/s", triad_text,
       vs_triad(gbps[4], "proto"), "info", "n/a"},
      {"exp/tanh 8-op chain f32[2^25]", format(gbps_t[0], 2) + " GB/s", triad_text,
       vs_triad(gbps_t[0], "weft"), "info", "n/a"},
      {"  exp/tanh: prototype 64 elements/work-item", format(gbps_t[2], 2) + " GB/s", triad_text,
       vs_triad(gbps_t[2], "proto"), "info", "n/a"},
      {"  exp/tanh: prototype 16 float4/work-item", format(gbps_t[3], 2) + " GB/s", triad_text,
       vs_triad(gbps_t[3], "proto"), "info", "n/a"},
  });
  return 0;
}
