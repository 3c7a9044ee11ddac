// A fused chain of 8 elementwise ops over 2^25 f32 under jit, in GB/s, against the STREAM
// triad a[i] = b[i] + s * c[i] hand-written on the same device.
//
// The chain (cheap ops, so that it is bound by memory like the triad):
//   y = min(max(((x * 1.5 + 0.5) * 0.75 - 0.25) * 1.25 + 0.125, 0), 6)
//   = mul, add, mul, sub, mul, add, maximum, minimum.
// Bytes counted once: x read and y written, 8 per element. The triad moves 12 per element.
//
// To split weft's time into runtime and kernel, weft's compiled kernel also runs enqueued by
// hand with the launch geometry of its plan, writing into an output made once and into one
// created per call with clCreateBuffer (what a runtime without a buffer pool pays: PoCL backs
// each new buffer with fresh pages, so the kernel takes a page fault per 4 KiB).
// Hand-written prototypes of the same expression (NaN-propagating max/min as weft emits them)
// show what another vector width would give: weft's CPU loop kernels compute one float per
// work-item for pure f32 arithmetic (PoCL vectorises across work-items); the prototypes
// compute one float, float8 or float16 per work-item, with weft's geometry otherwise (256 per
// work-group, no bounds check).
// A second section does the same for a chain with transcendentals, against the triad timed in
// its own rounds (goal: >= 0.5x the triad):
//   y = min(max(tanh(exp(x * 0.5) - 1) * 2 + 0.5, 0), 2).
// PoCL does not vectorise scalar exp/tanh across work-items; weft's kernel computes 4
// interleaved float16 vectors per work-item with its own vectorised exp and tanh, the
// prototypes one float8 or float16 with the driver's vector builtins.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
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
constexpr int kTranscendentalRounds = 7;
constexpr std::size_t kLocal = 256;  // weft's local size for loop kernels

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

// The prototypes: weft's expressions, one float or one vector of `W` floats per work-item. With
// a vector condition, a ? b : c selects per lane; isnan and || on vectors give -1 or 0 per lane.
constexpr const char* kPrototypeSource = R"CL(
#define MAX0(v) ((isnan(v) || isnan(0.0f)) ? ((v) + 0.0f) : fmax((v), 0.0f))
#define MIN(v, c) ((isnan(v) || isnan(c)) ? ((v) + (c)) : fmin((v), (c)))
#define CHEAP(x) MIN(MAX0((((x) * 1.5f + 0.5f) * 0.75f - 0.25f) * 1.25f + 0.125f), 6.0f)
#define TRANSCENDENTAL(x) MIN(MAX0(tanh(exp((x) * 0.5f) - 1.0f) * 2.0f + 0.5f), 2.0f)

#define SCALAR_KERNEL(name, F)                                                        \
  __kernel void name(__global const float* restrict a0, __global float* restrict out) { \
    const int gid = (int)get_global_id(0);                                            \
    out[gid] = F(a0[gid]);                                                            \
  }
#define VECTOR_KERNEL(name, F, W)                                                     \
  __kernel void name(__global const float* restrict a0, __global float* restrict out) { \
    const int gid = (int)get_global_id(0);                                            \
    vstore##W(F(vload##W(gid, a0)), gid, out);                                        \
  }

SCALAR_KERNEL(cheap_scalar, CHEAP)
VECTOR_KERNEL(cheap_float8, CHEAP, 8)
VECTOR_KERNEL(cheap_float16, CHEAP, 16)
VECTOR_KERNEL(transcendental_float8, TRANSCENDENTAL, 8)
VECTOR_KERNEL(transcendental_float16, TRANSCENDENTAL, 16)
)CL";

// One prototype kernel, `width` elements per work-item, writing into `out`.
class Prototype {
 public:
  Prototype(const weft::bench::RawProgram& program, const char* name, std::size_t width, cl_mem in,
            cl_mem out)
      : kernel_(program.kernel(name)), width_(width) {
    set_arg(kernel_.get(), 0, in);
    set_arg(kernel_.get(), 1, out);
  }
  void run() { weft::bench::launch_and_wait(kernel_.get(), kN / width_, kLocal); }

 private:
  weft::opencl::ClKernel kernel_;
  std::size_t width_;
};

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

void print_kernels(const char* what, const weft::CompiledInfo& info) {
  std::printf("%s: %zu kernel(s)", what, info.kernels.size());
  for (const auto& k : info.kernels) {
    std::printf(" [%s, %s, %d launch(es):", k.name.c_str(), k.kind.c_str(), k.launches);
    for (const auto& op : k.fused_ops) std::printf(" %s", op.c_str());
    std::printf("]");
  }
  std::printf("\n");
}

void print_table(const std::vector<const char*>& names,
                 const std::vector<weft::bench::Samples>& samples, const std::vector<double>& bytes,
                 std::vector<double>& gbps) {
  std::printf("\n%-64s %10s %10s %8s\n", "contender", "median ms", "best ms", "GB/s");
  gbps.resize(samples.size());
  for (std::size_t c = 0; c < samples.size(); ++c) {
    gbps[c] = bytes[c] / samples[c].median() / 1e9;
    std::printf("%-64s %10.2f %10.2f %8.2f\n", names[c], samples[c].median() * 1e3,
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
  std::shared_ptr<weft::Executable> exe = cheap.lower(x).compile();
  std::shared_ptr<weft::Executable> exe_t = transcendental.lower(x).compile();
  const weft::CompiledInfo& info = exe->info();
  const weft::CompiledInfo& info_t = exe_t->info();
  print_kernels("cheap chain", info);
  print_kernels("exp/tanh chain", info_t);
  std::printf("generated source of the cheap chain:\n%s\n", info.source.c_str());
  auto one_kernel = [](const weft::CompiledInfo& i) {
    return i.kernels.size() == 1 && i.kernels[0].kind == "loop";
  };
  const std::string count_text =
      std::to_string(info.kernels.size()) + (info.kernels.size() == 1 ? " kernel" : " kernels");
  if (!one_kernel(info) || !one_kernel(info_t)) {
    std::printf("a chain did not fuse into one loop kernel; nothing else to measure\n");
    weft::bench::print_summary({{"fused 8-op chain kernel count", count_text, "1 kernel",
                                 std::to_string(info.kernels.size()) + "/1", "== 1",
                                 weft::bench::met(info.kernels.size() == 1)}});
    return 0;
  }

  weft::opencl::ClMem in = weft::bench::make_buffer(host);
  weft::opencl::ClMem out = weft::bench::make_buffer(kN * sizeof(float));
  weft::bench::PlanLaunches generated(exe, {in.get()}), generated_t(exe_t, {in.get()});
  weft::bench::RawProgram prototypes(kPrototypeSource);
  Prototype cheap_scalar(prototypes, "cheap_scalar", 1, in.get(), out.get());
  Prototype cheap_float8(prototypes, "cheap_float8", 8, in.get(), out.get());
  Prototype cheap_float16(prototypes, "cheap_float16", 16, in.get(), out.get());
  Prototype transcendental_float8(prototypes, "transcendental_float8", 8, in.get(), out.get());
  Prototype transcendental_float16(prototypes, "transcendental_float16", 16, in.get(), out.get());
  weft::bench::Triad triad(kN);

  verify(cheap(x).to_vector<float>(), host, cheap_chain_host, "weft");
  generated.run();
  verify(weft::bench::read_buffer(generated.output(0), kN), host, cheap_chain_host,
         "weft's kernel");
  for (Prototype* p : {&cheap_scalar, &cheap_float8, &cheap_float16}) {
    p->run();
    verify(weft::bench::read_buffer(out.get(), kN), host, cheap_chain_host, "prototype");
  }

  const double chain_bytes = 8.0 * static_cast<double>(kN);
  std::vector<double> gbps;
  const auto samples = weft::bench::time_interleaved(
      {[&] { cheap(x).block_until_ready(); },
       [&] {
         generated.renew_outputs();
         generated.run();
       },
       [&] { generated.run(); }, [&] { cheap_scalar.run(); }, [&] { cheap_float8.run(); },
       [&] { cheap_float16.run(); }, [&] { triad.run_simple(); }, [&] { triad.run_blocked(); }},
      2, kRounds);
  triad.verify();
  print_table(
      {"weft jit (end to end)", "weft's kernel by hand, output created per call",
       "weft's kernel by hand, output made once", "prototype: 1 float/work-item, output made once",
       "prototype: 1 float8/work-item, output made once",
       "prototype: 1 float16/work-item, output made once",
       "triad, 1 element/work-item (BabelStream)", "triad, 64 elements/work-item"},
      samples,
      {chain_bytes, chain_bytes, chain_bytes, chain_bytes, chain_bytes, chain_bytes, triad.bytes(),
       triad.bytes()},
      gbps);

  std::vector<double> gbps_t;
  verify(transcendental(x).to_vector<float>(), host, transcendental_chain_host, "weft");
  generated_t.run();
  verify(weft::bench::read_buffer(generated_t.output(0), kN), host, transcendental_chain_host,
         "weft's kernel");
  for (Prototype* p : {&transcendental_float8, &transcendental_float16}) {
    p->run();
    verify(weft::bench::read_buffer(out.get(), kN), host, transcendental_chain_host, "prototype");
  }
  const auto samples_t = weft::bench::time_interleaved(
      {[&] { transcendental(x).block_until_ready(); }, [&] { generated_t.run(); },
       [&] { transcendental_float8.run(); }, [&] { transcendental_float16.run(); },
       [&] { triad.run_simple(); }, [&] { triad.run_blocked(); }},
      1, kTranscendentalRounds);
  triad.verify();
  print_table({"exp/tanh chain: weft jit (end to end)",
               "exp/tanh chain: weft's kernel by hand, output made once",
               "exp/tanh chain: prototype 1 float8/work-item, output made once",
               "exp/tanh chain: prototype 1 float16/work-item, output made once",
               "triad, 1 element/work-item (BabelStream), beside the exp/tanh chain",
               "triad, 64 elements/work-item, beside the exp/tanh chain"},
              samples_t,
              {chain_bytes, chain_bytes, chain_bytes, chain_bytes, triad.bytes(), triad.bytes()},
              gbps_t);

  // The exp/tanh rows compare with the triad timed in the same interleaved rounds: this
  // machine's memory bandwidth drifts between the two sections by up to 2x.
  const double triad_gbps = std::max(gbps[6], gbps[7]);
  const double triad_t_gbps = std::max(gbps_t[4], gbps_t[5]);
  // A row of GB/s against a triad: the goal is a minimum ratio, or info-only when 0.
  auto row = [](const char* name, double g, double triad, const char* who, double goal) {
    return weft::bench::SummaryRow{name,
                                   format(g, 2) + " GB/s",
                                   format(triad, 2) + " GB/s (triad, best form)",
                                   format(g / triad, 2) + "x " + who + "/triad",
                                   goal > 0 ? ">= " + format(goal, 2) + "x" : "info",
                                   goal > 0 ? weft::bench::met(g / triad >= goal) : "n/a"};
  };
  weft::bench::print_summary({
      row("fused 8-op chain f32[2^25]", gbps[0], triad_gbps, "weft", 0.70),
      {"fused 8-op chain kernel count", count_text, "1 kernel", "1/1", "== 1", "yes"},
      row("  chain: weft's kernel, fresh output per call", gbps[1], triad_gbps, "kernel", 0),
      row("  chain: weft's kernel, output made once", gbps[2], triad_gbps, "kernel", 0),
      row("  chain: prototype 1 float/work-item", gbps[3], triad_gbps, "proto", 0),
      row("  chain: prototype 1 float8/work-item", gbps[4], triad_gbps, "proto", 0),
      row("  chain: prototype 1 float16/work-item", gbps[5], triad_gbps, "proto", 0),
      row("exp/tanh 8-op chain f32[2^25]", gbps_t[0], triad_t_gbps, "weft", 0.50),
      row("  exp/tanh: weft's kernel, output made once", gbps_t[1], triad_t_gbps, "kernel", 0),
      row("  exp/tanh: prototype 1 float8/work-item", gbps_t[2], triad_t_gbps, "proto", 0),
      row("  exp/tanh: prototype 1 float16/work-item", gbps_t[3], triad_t_gbps, "proto", 0),
  });
  return 0;
}
