// Transformations, each figure against a baseline timed in the same run (contenders
// interleaved round by round, medians over the rounds, compilation never timed):
//
//   grad MLP   one training step of the MLP demo's shape (batch 64, 784 -> 256 -> 10, tanh,
//              softmax cross-entropy): jit(value_and_grad(loss)) over the four parameters,
//              call + wait. Baselines: the jitted forward (loss only) in the same run, and
//              JAX on CPU (bench/jax_transforms_peer.py, run as a child process when python3
//              can import jax; skipped otherwise). Also the number of kernels of each.
//   vmap       a per-example function (dense layer 784 -> 256, tanh, then a sum) vmapped over
//              1,024 examples under jit, against the same computation written batched by hand
//              under jit. Goal <= 1.1x.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "common.h"
#include "weft/transforms/grad.h"
#include "weft/transforms/vmap.h"
#include "weft/weft.h"

namespace {

using weft::Array;
using weft::ArrayFunction;
using weft::bench::format;
namespace lax = weft::lax;

constexpr int kRounds = 15;
constexpr int kCallsPerRound = 20;
constexpr double kVmapGoal = 1.1;

[[noreturn]] void fail(const std::string& what) {
  std::fprintf(stderr, "bench_transforms: %s\n", what.c_str());
  std::exit(1);
}

Array random(const weft::Shape& shape, float scale, std::mt19937& rng) {
  std::int64_t n = 1;
  for (std::int64_t d : shape) n *= d;
  std::normal_distribution<float> normal(0, scale);
  std::vector<float> v(static_cast<std::size_t>(n));
  for (float& x : v) x = normal(rng);
  return Array::from_vector<float>(shape, v);
}

const lax::DotDims kMatmul{
    .lhs_contracting = {1}, .rhs_contracting = {0}, .lhs_batch = {}, .rhs_batch = {}};

Array row_broadcast(const Array& b, const weft::Shape& shape) {
  return lax::broadcast_in_dim(b, shape, {1});
}

// Softmax cross-entropy of the MLP's logits against one-hot labels, averaged over the batch.
Array mlp_loss(const std::vector<Array>& a) {
  const Array &w1 = a[0], &b1 = a[1], &w2 = a[2], &b2 = a[3], &x = a[4], &labels = a[5];
  const std::int64_t batch = x.shape()[0];
  const Array h = lax::tanh(lax::dot_general(x, w1, kMatmul) + row_broadcast(b1, {batch, 256}));
  const Array logits = lax::dot_general(h, w2, kMatmul) + row_broadcast(b2, {batch, 10});
  const Array m = lax::reduce_max(logits, {1});
  const Array shifted = logits - lax::broadcast_in_dim(m, logits.shape(), {0});
  const Array lse = lax::log(lax::reduce_sum(lax::exp(shifted), {1}));
  const Array picked = lax::reduce_sum(shifted * labels, {1});
  return lax::reduce_sum(lse - picked, {0}) / static_cast<double>(batch);
}

std::size_t kernels_of(const weft::Lowered& lowered) {
  return lowered.compile()->info().kernels.size();
}

// JAX's seconds per step from bench/jax_transforms_peer.py, or a negative value when python3
// or jax is missing.
double jax_step_seconds() {
  const std::string command = std::string("python3 '") + WEFT_BENCH_SOURCE_DIR +
                              "/jax_transforms_peer.py' --rounds " + std::to_string(kRounds) +
                              " --calls " + std::to_string(kCallsPerRound) + " 2>/dev/null";
  FILE* pipe = popen(command.c_str(), "r");
  if (!pipe) return -1;
  std::string output;
  char buffer[256];
  while (fgets(buffer, sizeof buffer, pipe)) output += buffer;
  const int status = pclose(pipe);
  if (status != 0) return -1;
  std::istringstream lines(output);
  std::string line;
  while (std::getline(lines, line))
    if (line.rfind("jax_grad_step_seconds ", 0) == 0) return std::stod(line.substr(22));
  return -1;
}

}  // namespace

int main() {
  std::printf("bench_transforms on %s\n", weft::bench::device_line().c_str());
  std::mt19937 rng(1);
  const std::int64_t batch = 64;
  const Array w1 = random({784, 256}, 0.05f, rng), b1 = random({256}, 0.01f, rng);
  const Array w2 = random({256, 10}, 0.05f, rng), b2 = random({10}, 0.01f, rng);
  const Array x = random({batch, 784}, 1.0f, rng);
  std::vector<float> onehot(static_cast<std::size_t>(batch * 10), 0.0f);
  for (std::int64_t i = 0; i < batch; ++i) onehot[static_cast<std::size_t>(i * 10 + i % 10)] = 1;
  const Array labels = Array::from_vector<float>({batch, 10}, onehot);
  const std::vector<Array> args{w1, b1, w2, b2, x, labels};

  const ArrayFunction loss = [](const std::vector<Array>& a) {
    return std::vector<Array>{mlp_loss(a)};
  };
  auto step = weft::jit(weft::value_and_grad(loss, {.argnums = {0, 1, 2, 3}}));
  auto forward = weft::jit(loss);
  const std::vector<Array> first = step(args);
  if (first.size() != 5) fail("value_and_grad returned " + std::to_string(first.size()));
  // The step's value is the forward's, and a finite-difference check on one weight.
  const float value = first[0].to_vector<float>()[0];
  const float forward_value = forward(args).at(0).to_vector<float>()[0];
  if (std::abs(value - forward_value) > 1e-5f * (1 + std::abs(value)))
    fail("the step's loss " + std::to_string(value) + " differs from the forward's " +
         std::to_string(forward_value));
  {
    std::vector<float> bumped = b2.to_vector<float>();
    const float h = 1e-2f;
    bumped[3] += h;
    std::vector<Array> plus = args;
    plus[3] = Array::from_vector<float>({10}, bumped);
    const float fd = (forward(plus).at(0).to_vector<float>()[0] - forward_value) / h;
    const float g = first[4].to_vector<float>()[3];
    if (std::abs(fd - g) > 2e-2f * (1 + std::abs(g)))
      fail("d loss / d b2[3] is " + std::to_string(g) + " but finite differences give " +
           std::to_string(fd));
  }
  const std::size_t step_kernels = kernels_of(step.lower(args));
  const std::size_t forward_kernels = kernels_of(forward.lower(args));

  // vmap: per-example dense layer + tanh + sum, over 1,024 examples.
  const std::int64_t examples = 1024;
  const Array xs = random({examples, 784}, 1.0f, rng);
  const ArrayFunction per_example = [&](const std::vector<Array>& a) {
    const lax::DotDims matvec{
        .lhs_contracting = {0}, .rhs_contracting = {0}, .lhs_batch = {}, .rhs_batch = {}};
    const Array h = lax::tanh(lax::dot_general(a[0], w1, matvec) + b1);
    return std::vector<Array>{lax::reduce_sum(h, {0})};
  };
  auto vmapped = weft::jit(weft::vmap(per_example));
  auto by_hand = weft::jit([&](const Array& batch_x) {
    const Array h = lax::tanh(lax::dot_general(batch_x, w1, kMatmul) +
                              row_broadcast(b1, {batch_x.shape()[0], 256}));
    return lax::reduce_sum(h, {1});
  });
  {
    const std::vector<float> a = vmapped(std::vector<Array>{xs}).at(0).to_vector<float>();
    const std::vector<float> b = by_hand(xs).to_vector<float>();
    for (std::size_t i = 0; i < a.size(); ++i)
      if (std::abs(a[i] - b[i]) > 1e-3f * (1 + std::abs(b[i])))
        fail("vmap and the hand-batched function differ at " + std::to_string(i));
  }
  const std::size_t vmap_kernels = kernels_of(vmapped.lower(std::vector<Array>{xs}));
  const std::size_t hand_kernels = kernels_of(by_hand.lower(xs));

  const auto samples = weft::bench::time_interleaved(
      {
          [&] {
            for (int i = 0; i < kCallsPerRound; ++i) step(args).at(0).block_until_ready();
          },
          [&] {
            for (int i = 0; i < kCallsPerRound; ++i) forward(args).at(0).block_until_ready();
          },
          [&] {
            for (int i = 0; i < kCallsPerRound; ++i)
              vmapped(std::vector<Array>{xs}).at(0).block_until_ready();
          },
          [&] {
            for (int i = 0; i < kCallsPerRound; ++i) by_hand(xs).block_until_ready();
          },
      },
      2, kRounds);
  const double ms = 1e3 / kCallsPerRound;
  const double step_ms = samples[0].median() * ms, forward_ms = samples[1].median() * ms;
  const double vmap_ms = samples[2].median() * ms, hand_ms = samples[3].median() * ms;

  std::printf("\ncontender                         median ms/call   kernels\n");
  std::printf("grad step (value_and_grad, jit)   %14.3f   %7zu\n", step_ms, step_kernels);
  std::printf("forward (loss, jit)               %14.3f   %7zu\n", forward_ms, forward_kernels);
  std::printf("vmap of per-example (jit)         %14.3f   %7zu\n", vmap_ms, vmap_kernels);
  std::printf("hand-batched (jit)                %14.3f   %7zu\n", hand_ms, hand_kernels);

  const double jax_s = jax_step_seconds();
  std::vector<weft::bench::SummaryRow> rows;
  rows.push_back({"grad MLP step 64x784x256x10", format(step_ms, 3) + " ms",
                  format(forward_ms, 3) + " ms (forward)",
                  format(step_ms / forward_ms, 2) + "x step/forward", "info", "n/a"});
  if (jax_s > 0) {
    rows.push_back({"grad MLP step vs JAX (CPU)", format(step_ms, 3) + " ms",
                    format(jax_s * 1e3, 3) + " ms (JAX)",
                    format(step_ms / (jax_s * 1e3), 2) + "x weft/JAX", "<= 1.0x",
                    weft::bench::met(step_ms <= jax_s * 1e3)});
  } else {
    std::printf("\nJAX peer skipped: python3 cannot import jax (pip install jax)\n");
  }
  rows.push_back({"grad MLP kernels", std::to_string(step_kernels) + " kernels",
                  std::to_string(forward_kernels) + " (forward)", "-", "info", "n/a"});
  const double vmap_ratio = vmap_ms / hand_ms;
  rows.push_back({"vmap per-example x1024", format(vmap_ms, 3) + " ms",
                  format(hand_ms, 3) + " ms (hand-batched)", format(vmap_ratio, 2) + "x vmap/hand",
                  "<= 1.1x", weft::bench::met(vmap_ratio <= kVmapGoal)});
  weft::bench::print_summary(rows);
  return 0;
}
