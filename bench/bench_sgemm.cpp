// sgemm 1024x1024x1024 and 4096x4096x4096 in GFLOP/s (2 * M * N * K flops per call):
// jit(np::matmul) against CLBlast's clblast::Gemm on weft's own context and queue, and OpenBLAS's
// cblas_sgemm on the host. Baselines that were not found at configure time are left out.
//
// An info row runs the hand-written prototype of weft's CPU dot kernel: no local memory; each
// work-item computes an 8x8 block of C as eight float8 accumulators (one float8 of B and
// eight scalars of A per step of k), on a 2-D range with work-groups of 16x4. weft's kernel
// has the same inner loop on a 1-D range with index arithmetic and edge handling.
//
// Buffers: weft's output comes from its runtime on every call; CLBlast and the hand-written
// kernel write into a C made once (4 MiB; allocation is noise next to 2 GFLOP).
//
// Then 4096x4096x4096 (137 GFLOP a call): weft against OpenBLAS. JAX CPU's figures for both
// sizes come from bench/jax_sgemm_peer.py (jnp.matmul at precision HIGHEST, the same values),
// run as a child process when python3 can import jax. Goals (issue 29): >= 0.8x OpenBLAS's and
// >= 1.0x JAX's GFLOP/s at both sizes.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "common.h"
#include "weft/weft.h"

#ifdef WEFT_BENCH_HAVE_CLBLAST
#include <clblast.h>
#endif
#ifdef WEFT_BENCH_HAVE_CBLAS
#include <cblas.h>
#endif

namespace {

using weft::Array;
using weft::bench::format;
using weft::bench::set_arg;
namespace np = weft::np;

constexpr std::size_t kM = 1024, kN = 1024, kK = 1024;
constexpr int kRounds = 5;
constexpr const char* kClblastName = "CLBlast clblast::Gemm";
constexpr const char* kOpenblasName = "OpenBLAS cblas_sgemm (host)";

constexpr const char* kBlockedSource = R"CL(
// C (M x N) = A (M x K) * B (K x N), row-major; M % 8 == 0, N % 8 == 0.
__kernel void sgemm_8x8(__global const float* restrict A, __global const float* restrict B,
                        __global float* restrict C, const int M, const int N, const int K) {
  const int col8 = (int)get_global_id(0);
  const int row8 = (int)get_global_id(1);
  __global const float* a = A + (row8 * 8) * K;
  float8 c0 = 0.0f, c1 = 0.0f, c2 = 0.0f, c3 = 0.0f, c4 = 0.0f, c5 = 0.0f, c6 = 0.0f, c7 = 0.0f;
  for (int k = 0; k < K; ++k) {
    const float8 b = vload8(col8, B + k * N);
    c0 = fma((float8)(a[k]), b, c0);
    c1 = fma((float8)(a[K + k]), b, c1);
    c2 = fma((float8)(a[2 * K + k]), b, c2);
    c3 = fma((float8)(a[3 * K + k]), b, c3);
    c4 = fma((float8)(a[4 * K + k]), b, c4);
    c5 = fma((float8)(a[5 * K + k]), b, c5);
    c6 = fma((float8)(a[6 * K + k]), b, c6);
    c7 = fma((float8)(a[7 * K + k]), b, c7);
  }
  __global float* c = C + (row8 * 8) * N;
  vstore8(c0, col8, c);
  vstore8(c1, col8, c + N);
  vstore8(c2, col8, c + 2 * N);
  vstore8(c3, col8, c + 3 * N);
  vstore8(c4, col8, c + 4 * N);
  vstore8(c5, col8, c + 5 * N);
  vstore8(c6, col8, c + 6 * N);
  vstore8(c7, col8, c + 7 * N);
}
)CL";

// C[i][j] in double for a sample of entries; every contender's result is checked against it.
void verify(const std::vector<float>& c, const std::vector<float>& a, const std::vector<float>& b,
            const char* who) {
  for (std::size_t i = 3; i < kM; i += 97)
    for (std::size_t j = 5; j < kN; j += 89) {
      double expect = 0;
      for (std::size_t k = 0; k < kK; ++k)
        expect += static_cast<double>(a[i * kK + k]) * static_cast<double>(b[k * kN + j]);
      if (std::fabs(c[i * kN + j] - expect) > 1e-3 * (1 + std::fabs(expect))) {
        std::fprintf(stderr, "%s computed C[%zu][%zu] = %g, expected %g\n", who, i, j,
                     static_cast<double>(c[i * kN + j]), expect);
        std::exit(1);
      }
    }
}

// C = A * B at a sample of entries of n x n matrices filled as main fills them.
void verify_square(const std::vector<float>& c, const std::vector<float>& a,
                   const std::vector<float>& b, std::size_t n, const char* who) {
  for (std::size_t i = 7; i < n; i += 997)
    for (std::size_t j = 11; j < n; j += 1009) {
      double expect = 0;
      for (std::size_t k = 0; k < n; ++k)
        expect += static_cast<double>(a[i * n + k]) * static_cast<double>(b[k * n + j]);
      if (std::fabs(c[i * n + j] - expect) > 1e-3 * (1 + std::fabs(expect))) {
        std::fprintf(stderr, "%s computed C[%zu][%zu] = %g, expected %g\n", who, i, j,
                     static_cast<double>(c[i * n + j]), expect);
        std::exit(1);
      }
    }
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

int main() {
  std::printf("device: %s\n", weft::bench::device_line().c_str());
  std::vector<float> a(kM * kK), b(kK * kN);
  for (std::size_t i = 0; i < a.size(); ++i) a[i] = static_cast<float>(i % 17) / 16.0f - 0.5f;
  for (std::size_t i = 0; i < b.size(); ++i) b[i] = static_cast<float>(i % 13) / 12.0f - 0.5f;
  Array xa = Array::from_vector<float>({kM, kK}, a);
  Array xb = Array::from_vector<float>({kK, kN}, b);

  auto matmul = weft::jit([](const Array& p, const Array& q) { return np::matmul(p, q); },
                          {.name = "matmul"});
  auto start = std::chrono::steady_clock::now();
  std::shared_ptr<weft::Executable> exe = matmul.lower(xa, xb).compile();
  const weft::CompiledInfo& info = exe->info();
  std::printf("weft: built in %.2f s, %zu kernel(s):", seconds_since(start), info.kernels.size());
  for (const auto& k : info.kernels)
    std::printf(" %s (%s, %d launch(es))", k.name.c_str(), k.kind.c_str(), k.launches);
  std::printf("\ngenerated source:\n%s\n", info.source.c_str());
  verify(matmul(xa, xb).to_vector<float>(), a, b, "weft");

  weft::opencl::ClMem da = weft::bench::make_buffer(a), db = weft::bench::make_buffer(b);
  weft::opencl::ClMem dc = weft::bench::make_buffer(kM * kN * sizeof(float));
  weft::bench::RawProgram program(kBlockedSource);
  weft::opencl::ClKernel blocked = program.kernel("sgemm_8x8");
  set_arg(blocked.get(), 0, da.get());
  set_arg(blocked.get(), 1, db.get());
  set_arg(blocked.get(), 2, dc.get());
  set_arg(blocked.get(), 3, static_cast<cl_int>(kM));
  set_arg(blocked.get(), 4, static_cast<cl_int>(kN));
  set_arg(blocked.get(), 5, static_cast<cl_int>(kK));
  auto run_2d = [&](cl_kernel kernel) {
    const std::size_t global[2] = {kN / 8, kM / 8}, local[2] = {16, 4};
    cl_event done = nullptr;
    weft::bench::check(clEnqueueNDRangeKernel(weft::bench::device().queue(), kernel, 2, nullptr,
                                              global, local, 0, nullptr, &done),
                       "clEnqueueNDRangeKernel");
    weft::opencl::ClEvent event(done);
    weft::bench::check(clWaitForEvents(1, &done), "clWaitForEvents");
  };
  run_2d(blocked.get());
  verify(weft::bench::read_buffer(dc.get(), kM * kN), a, b, "hand-written 8x8 float8");

  std::vector<std::string> names = {"weft jit np::matmul", "hand-written 8x8 float8"};
  std::vector<std::function<void()>> contenders = {[&] { matmul(xa, xb).block_until_ready(); },
                                                   [&] { run_2d(blocked.get()); }};

#ifdef WEFT_BENCH_HAVE_CLBLAST
  cl_command_queue queue = weft::bench::device().queue();
  auto run_clblast = [&] {
    cl_event done = nullptr;
    const clblast::StatusCode status = clblast::Gemm<float>(
        clblast::Layout::kRowMajor, clblast::Transpose::kNo, clblast::Transpose::kNo, kM, kN, kK,
        1.0f, da.get(), 0, kK, db.get(), 0, kN, 0.0f, dc.get(), 0, kN, &queue, &done);
    if (status != clblast::StatusCode::kSuccess) {
      std::fprintf(stderr, "clblast::Gemm failed with status %d\n", static_cast<int>(status));
      std::exit(1);
    }
    weft::opencl::ClEvent event(done);
    weft::bench::check(clWaitForEvents(1, &done), "clWaitForEvents");
  };
  // CLBlast compiles its kernels on the first call; keep that out of the timed region.
  start = std::chrono::steady_clock::now();
  run_clblast();
  std::printf("CLBlast: first call (kernel compilation included) took %.2f s\n",
              seconds_since(start));
  verify(weft::bench::read_buffer(dc.get(), kM * kN), a, b, "CLBlast");
  names.push_back(kClblastName);
  contenders.push_back(run_clblast);
#else
  std::printf("CLBlast: not found at configure time (install libclblast-dev); skipped\n");
#endif

#ifdef WEFT_BENCH_HAVE_CBLAS
  std::vector<float> host_c(kM * kN);
  auto run_openblas = [&] {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, kM, kN, kK, 1.0f, a.data(), kK, b.data(),
                kN, 0.0f, host_c.data(), kN);
  };
  run_openblas();
  verify(host_c, a, b, "OpenBLAS");
  names.push_back(kOpenblasName);
  contenders.push_back(run_openblas);
#else
  std::printf("OpenBLAS: not found at configure time (install libopenblas-dev); skipped\n");
#endif

  const auto samples = weft::bench::time_interleaved(contenders, 1, kRounds);
  const double flops = 2.0 * kM * kN * kK;
  std::vector<double> gflops(samples.size());
  std::printf("\n%-32s %10s %10s %9s\n", "contender", "median ms", "best ms", "GFLOP/s");
  for (std::size_t c = 0; c < samples.size(); ++c) {
    gflops[c] = flops / samples[c].median() / 1e9;
    std::printf("%-32s %10.2f %10.2f %9.2f\n", names[c].c_str(), samples[c].median() * 1e3,
                samples[c].best() * 1e3, gflops[c]);
  }

  std::vector<weft::bench::SummaryRow> rows;
  const std::string weft_text = format(gflops[0], 2) + " GFLOP/s";
  // The figure of a named contender; baselines that were not built have none.
  auto figure = [&](const std::string& name) {
    for (std::size_t c = 0; c < names.size(); ++c)
      if (names[c] == name) return gflops[c];
    return 0.0;
  };
  const double clblast_gflops = figure(kClblastName);
  const double openblas_gflops = figure(kOpenblasName);
  if (clblast_gflops > 0) {
    rows.push_back({"sgemm 1024^3 vs CLBlast", weft_text,
                    format(clblast_gflops, 2) + " GFLOP/s (CLBlast, same queue)",
                    format(gflops[0] / clblast_gflops, 2) + "x weft/CLBlast", ">= 1.0x",
                    weft::bench::met(gflops[0] >= clblast_gflops)});
  } else {
    rows.push_back(
        {"sgemm 1024^3 vs CLBlast", weft_text, "CLBlast not built", "-", ">= 1.0x", "n/a"});
  }
  if (openblas_gflops > 0)
    rows.push_back({"sgemm 1024^3 vs OpenBLAS", weft_text,
                    format(openblas_gflops, 2) + " GFLOP/s (OpenBLAS, host)",
                    format(gflops[0] / openblas_gflops, 2) + "x weft/OpenBLAS", ">= 0.8x",
                    weft::bench::met(gflops[0] >= 0.8 * openblas_gflops)});
  rows.push_back({"  sgemm: hand-written 8x8 float8", format(gflops[1], 2) + " GFLOP/s",
                  weft_text + " (weft)", format(gflops[1] / gflops[0], 2) + "x raw/weft", "info",
                  "n/a"});
  const std::map<std::string, double> jax = weft::bench::jax_peer_seconds(
      std::string(WEFT_BENCH_SOURCE_DIR) + "/jax_sgemm_peer.py", kRounds);
  if (jax.empty()) std::printf("\nJAX peer skipped: python3 cannot import jax (pip install jax)\n");
  auto jax_row = [&](const char* name, std::size_t n, double weft_gflops) {
    const auto found = jax.find(name);
    const double nd = static_cast<double>(n);
    const double j = found == jax.end() ? 0 : 2.0 * nd * nd * nd / found->second / 1e9;
    const std::string title = "sgemm " + std::to_string(n) + "^3 vs JAX";
    rows.push_back({title, format(weft_gflops, 2) + " GFLOP/s",
                    j > 0 ? format(j, 2) + " GFLOP/s (JAX CPU)" : "JAX not installed",
                    j > 0 ? format(weft_gflops / j, 2) + "x weft/JAX" : "n/a", ">= 1.0x",
                    j > 0 ? weft::bench::met(weft_gflops >= j) : "n/a"});
  };
  jax_row("sgemm_1024", kM, gflops[0]);

  // 4096^3: weft against OpenBLAS (and JAX, above).
  constexpr std::size_t kBig = 4096;
  std::vector<float> a4(kBig * kBig), b4(kBig * kBig);
  for (std::size_t i = 0; i < a4.size(); ++i) a4[i] = static_cast<float>(i % 17) / 16.0f - 0.5f;
  for (std::size_t i = 0; i < b4.size(); ++i) b4[i] = static_cast<float>(i % 13) / 12.0f - 0.5f;
  const Array xa4 = Array::from_vector<float>({kBig, kBig}, a4);
  const Array xb4 = Array::from_vector<float>({kBig, kBig}, b4);
  verify_square(matmul(xa4, xb4).to_vector<float>(), a4, b4, kBig, "weft 4096^3");
  std::vector<std::function<void()>> big = {[&] { matmul(xa4, xb4).block_until_ready(); }};
#ifdef WEFT_BENCH_HAVE_CBLAS
  std::vector<float> host_c4(kBig * kBig);
  auto run_openblas4 = [&] {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, kBig, kBig, kBig, 1.0f, a4.data(), kBig,
                b4.data(), kBig, 0.0f, host_c4.data(), kBig);
  };
  run_openblas4();
  verify_square(host_c4, a4, b4, kBig, "OpenBLAS 4096^3");
  big.push_back(run_openblas4);
#endif
  const auto big_samples = weft::bench::time_interleaved(big, 1, 3);
  const double big_flops = 2.0 * kBig * kBig * kBig;
  const double weft4 = big_flops / big_samples[0].median() / 1e9;
  std::printf("\n4096^3: weft %.2f GFLOP/s", weft4);
  if (big_samples.size() > 1) {
    const double blas4 = big_flops / big_samples[1].median() / 1e9;
    std::printf(", OpenBLAS %.2f GFLOP/s", blas4);
    rows.push_back({"sgemm 4096^3 vs OpenBLAS", format(weft4, 2) + " GFLOP/s",
                    format(blas4, 2) + " GFLOP/s (OpenBLAS, host)",
                    format(weft4 / blas4, 2) + "x weft/OpenBLAS", ">= 0.8x",
                    weft::bench::met(weft4 >= 0.8 * blas4)});
  }
  std::printf("\n");
  jax_row("sgemm_4096", kBig, weft4);
  weft::bench::print_summary(rows);
  return 0;
}
