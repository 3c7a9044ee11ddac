// select_tril on a 4096x4096 f32 matrix: the seed's numpy code fused under jit against the
// same code run op by op (eager: each np call dispatches its own kernel and materialises its
// result: two aranges, the reshape, the broadcast comparison, zeros_like and where).
//
// Info rows split the times: weft's generated kernel enqueued by hand into an output made
// once (what the runtime's per-call allocation costs), the same kernel without its
// per-work-item bounds check, a prototype with 64 consecutive elements per work-item, and
// each eager op on its own.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <vector>

#include "common.h"
#include "weft/weft.h"

namespace {

using weft::Array;
using weft::bench::format;
using weft::bench::set_arg;
namespace np = weft::np;

constexpr std::int64_t kN = 4096;
constexpr int kRounds = 9;

Array select_tril(const Array& x) {
  auto mask = np::arange(x.shape()[0]).reshape({-1, 1}) > np::arange(x.shape()[1]);
  return np::where(mask, x, np::zeros_like(x));
}

// weft's kernel, same index arithmetic, 64 consecutive elements per work-item.
constexpr const char* kPrototypeSource = R"CL(
__kernel void select_tril_blocked(__global const float* restrict a0, __global float* restrict out) {
  const int first = (int)get_global_id(0) * 64;
  for (int gid = first; gid < first + 64; ++gid) {
    const int i0 = gid / 4096;
    const int i1 = gid % 4096;
    out[gid] = i0 > i1 ? a0[gid] : 0.0f;
  }
}
)CL";

void verify(const std::vector<float>& got, const std::vector<float>& x, const char* who) {
  for (std::int64_t i = 0; i < kN; i += 127)
    for (std::int64_t j = 0; j < kN; j += 61) {
      const auto at = static_cast<std::size_t>(i * kN + j);
      const float expect = i > j ? x[at] : 0.0f;
      if (got[at] != expect) {
        std::fprintf(stderr, "%s computed %g at (%lld, %lld), expected %g\n", who, got[at],
                     static_cast<long long>(i), static_cast<long long>(j), expect);
        std::exit(1);
      }
    }
}

}  // namespace

int main() {
  std::printf("device: %s\n", weft::bench::device_line().c_str());
  std::vector<float> host(static_cast<std::size_t>(kN * kN));
  for (std::size_t i = 0; i < host.size(); ++i) host[i] = static_cast<float>(i % 1013) + 1.0f;
  Array x = Array::from_vector<float>({kN, kN}, host);

  auto fused = weft::jit(select_tril, {.name = "select_tril"});
  const weft::CompiledInfo& info = fused.lower(x).compile()->info();
  std::printf("jit: %zu kernel(s), %d intermediate buffer(s); generated source:\n%s\n",
              info.kernels.size(), info.intermediate_buffers, info.source.c_str());

  verify(fused(x).to_vector<float>(), host, "jit");
  verify(select_tril(x).to_vector<float>(), host, "eager");

  const auto elements = static_cast<std::size_t>(kN * kN);
  weft::opencl::ClMem in = weft::bench::make_buffer(host);
  weft::opencl::ClMem out = weft::bench::make_buffer(elements * sizeof(float));
  // 4096 * 4096 is a multiple of weft's local size 256, so no work-item needs the check.
  const std::string unchecked_source = weft::bench::without_bounds_checks(info.source);
  if (unchecked_source.empty())
    throw weft::Error("bench: found no \"if (gid >= N) return;\" in weft's kernel to remove");
  weft::bench::RawProgram generated(info.source), unchecked(unchecked_source),
      prototype(kPrototypeSource);
  const std::string& name = info.kernels.at(0).name;
  weft::opencl::ClKernel generated_kernel = generated.kernel(name.c_str());
  weft::opencl::ClKernel unchecked_kernel = unchecked.kernel(name.c_str());
  weft::opencl::ClKernel blocked = prototype.kernel("select_tril_blocked");
  for (cl_kernel k : {generated_kernel.get(), unchecked_kernel.get(), blocked.get()}) {
    set_arg(k, 0, in.get());
    set_arg(k, 1, out.get());
  }
  auto run_generated = [&] { weft::bench::launch_and_wait(generated_kernel.get(), elements, 256); };
  auto run_unchecked = [&] { weft::bench::launch_and_wait(unchecked_kernel.get(), elements, 256); };
  auto run_blocked = [&] { weft::bench::launch_and_wait(blocked.get(), elements / 64, 64); };
  run_generated();
  verify(weft::bench::read_buffer(out.get(), elements), host, "weft's kernel by hand");
  run_unchecked();
  verify(weft::bench::read_buffer(out.get(), elements), host, "unchecked kernel");
  run_blocked();
  verify(weft::bench::read_buffer(out.get(), elements), host, "prototype");

  const auto samples = weft::bench::time_interleaved(
      {[&] { fused(x).block_until_ready(); }, [&] { select_tril(x).block_until_ready(); },
       run_generated, run_unchecked, run_blocked},
      2, kRounds);
  // The eager ops one by one, on operands computed beforehand.
  Array row = np::arange(kN).reshape({-1, 1}), col = np::arange(kN);
  Array mask = row > col, zeros = np::zeros_like(x);
  auto arange_column = [&] { np::arange(kN).reshape({-1, 1}).block_until_ready(); };
  const auto ops =
      weft::bench::time_interleaved({arange_column, [&] { (row > col).block_until_ready(); },
                                     [&] { np::zeros_like(x).block_until_ready(); },
                                     [&] { np::where(mask, x, zeros).block_until_ready(); }},
                                    1, kRounds);

  const double bytes = 8.0 * static_cast<double>(elements);  // x read, result written
  const char* names[] = {"jit (fused), end to end",
                         "eager (op by op), end to end",
                         "weft's kernel by hand, output made once",
                         "weft's kernel without its bounds check, output made once",
                         "prototype: 64 elements/work-item, output made once",
                         "eager op: arange + reshape",
                         "eager op: row > col (bool 16 MiB)",
                         "eager op: zeros_like (f32 64 MiB)",
                         "eager op: where (f32 64 MiB)"};
  std::printf("\n%-58s %10s %10s %8s\n", "contender", "median ms", "best ms", "GB/s");
  for (std::size_t c = 0; c < 9; ++c) {
    const weft::bench::Samples& sm = c < 5 ? samples[c] : ops[c - 5];
    std::printf("%-58s %10.2f %10.2f", names[c], sm.median() * 1e3, sm.best() * 1e3);
    if (c != 1 && c < 5)
      std::printf(" %8.2f\n", bytes / sm.median() / 1e9);
    else
      std::printf(" %8s\n", "-");
  }
  // Bytes each way moves: fused reads x and writes the result; eager also writes the mask and
  // the zeros and reads both back in where.
  const double eager_bytes = static_cast<double>(elements) * (1 + 4 + (1 + 4 + 4 + 4));
  std::printf("memory traffic: fused %.0f MiB, eager %.0f MiB (%.2fx)\n", bytes / 1048576,
              eager_bytes / 1048576, eager_bytes / bytes);

  const double jit_ms = samples[0].median() * 1e3, eager_ms = samples[1].median() * 1e3;
  const double kernel_ms = samples[2].median() * 1e3, unchecked_ms = samples[3].median() * 1e3;
  const double proto_ms = samples[4].median() * 1e3;
  const double speedup = eager_ms / jit_ms;
  weft::bench::print_summary({
      {"select_tril f32[4096,4096]", format(jit_ms, 2) + " ms (jit)",
       format(eager_ms, 2) + " ms (eager, op by op)", format(speedup, 2) + "x eager/jit",
       ">= 5x faster", weft::bench::met(speedup >= 5)},
      {"  tril: weft's kernel, output made once", format(kernel_ms, 2) + " ms",
       format(eager_ms, 2) + " ms (eager)", format(eager_ms / kernel_ms, 2) + "x eager/kernel",
       "info", "n/a"},
      {"  tril: weft's kernel minus bounds check", format(unchecked_ms, 2) + " ms",
       format(eager_ms, 2) + " ms (eager)", format(eager_ms / unchecked_ms, 2) + "x eager/kernel",
       "info", "n/a"},
      {"  tril: prototype 64 elements/work-item", format(proto_ms, 2) + " ms",
       format(eager_ms, 2) + " ms (eager)", format(eager_ms / proto_ms, 2) + "x eager/proto",
       "info", "n/a"},
  });
  return 0;
}
