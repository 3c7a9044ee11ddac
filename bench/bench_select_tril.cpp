// select_tril on a 4096x4096 f32 matrix: JAX's omnistaging example's numpy code fused under jit
// against the same code run op by op (eager: each np call dispatches its own kernel and
// materialises its result: two aranges, the reshape, the broadcast comparison, zeros_like and
// where).
//
// Info rows split the times: weft's compiled kernel enqueued by hand with its plan's launch
// geometry into an output made once (the rest of jit's time is the runtime's: the output
// buffer, argument setting, dispatch), and each eager op on its own.
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

constexpr std::int64_t kN = 4096;
constexpr int kRounds = 9;

Array select_tril(const Array& x) {
  auto mask = np::arange(x.shape()[0]).reshape({-1, 1}) > np::arange(x.shape()[1]);
  return np::where(mask, x, np::zeros_like(x));
}

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
  std::shared_ptr<weft::Executable> exe = fused.lower(x).compile();
  const weft::CompiledInfo& info = exe->info();
  std::printf("jit: %zu kernel(s), %d intermediate buffer(s); generated source:\n%s\n",
              info.kernels.size(), info.intermediate_buffers, info.source.c_str());

  verify(fused(x).to_vector<float>(), host, "jit");
  verify(select_tril(x).to_vector<float>(), host, "eager");
  if (info.kernels.size() != 1)
    throw weft::Error("bench: expected select_tril to fuse into one kernel, got " +
                      std::to_string(info.kernels.size()));

  const auto elements = static_cast<std::size_t>(kN * kN);
  weft::opencl::ClMem in = weft::bench::make_buffer(host);
  weft::bench::PlanLaunches generated(exe, {in.get()});
  auto run_generated = [&] { generated.run(); };
  run_generated();
  verify(weft::bench::read_buffer(generated.output(0), elements), host, "weft's kernel by hand");

  const auto samples =
      weft::bench::time_interleaved({[&] { fused(x).block_until_ready(); },
                                     [&] { select_tril(x).block_until_ready(); }, run_generated},
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
                         "eager op: arange + reshape",
                         "eager op: row > col (bool 16 MiB)",
                         "eager op: zeros_like (f32 64 MiB)",
                         "eager op: where (f32 64 MiB)"};
  std::printf("\n%-58s %10s %10s %8s\n", "contender", "median ms", "best ms", "GB/s");
  for (std::size_t c = 0; c < 7; ++c) {
    const weft::bench::Samples& sm = c < 3 ? samples[c] : ops[c - 3];
    std::printf("%-58s %10.2f %10.2f", names[c], sm.median() * 1e3, sm.best() * 1e3);
    if (c != 1 && c < 3)
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
  const double kernel_ms = samples[2].median() * 1e3;
  const double speedup = eager_ms / jit_ms;
  weft::bench::print_summary({
      {"select_tril f32[4096,4096]", format(jit_ms, 2) + " ms (jit)",
       format(eager_ms, 2) + " ms (eager, op by op)", format(speedup, 2) + "x eager/jit",
       ">= 5x faster", weft::bench::met(speedup >= 5)},
      {"  tril: weft's kernel, output made once", format(kernel_ms, 2) + " ms",
       format(eager_ms, 2) + " ms (eager)", format(eager_ms / kernel_ms, 2) + "x eager/kernel",
       "info", "n/a"},
      {"  tril: memory traffic", format(bytes / 1048576, 0) + " MiB (fused)",
       format(eager_bytes / 1048576, 0) + " MiB (eager)",
       format(eager_bytes / bytes, 2) + "x eager/fused", "info", "n/a"},
  });
  return 0;
}
