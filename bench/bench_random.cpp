// weft::random::normal on f32[2^24] under jit (the key an argument) beside
// jax.random.normal on CPU. JAX's figure comes from bench/jax_random_peer.py, run as a child
// process when python3 can import jax. The result's mean and variance are checked first.
#include <cmath>
#include <cstdio>
#include <string>

#include "common.h"
#include "weft/weft.h"

namespace {

constexpr int kRounds = 15;
constexpr std::int64_t kSize = std::int64_t{1} << 24;

// JAX's seconds per call, or a negative number when python3 or jax is missing.
double jax_seconds() {
  const std::string command = std::string("python3 '") + WEFT_BENCH_SOURCE_DIR +
                              "/jax_random_peer.py' --rounds " + std::to_string(kRounds) +
                              " 2>/dev/null";
  FILE* pipe = popen(command.c_str(), "r");
  if (!pipe) return -1;
  char line[256];
  double seconds = -1;
  while (fgets(line, sizeof line, pipe)) std::sscanf(line, "jax_normal_seconds %lf", &seconds);
  return pclose(pipe) == 0 ? seconds : -1;
}

}  // namespace

int main() {
  using namespace weft;
  std::printf("device: %s\n", bench::device_line().c_str());
  auto draw = jit([](const Array& key) { return random::normal(key, {kSize}); });
  const Array key = random::key(0);
  {
    const std::vector<float> x = draw(key).to_vector<float>();
    double sum = 0, squares = 0;
    for (const float v : x) sum += v, squares += static_cast<double>(v) * v;
    const double mean = sum / kSize, variance = squares / kSize - mean * mean;
    if (std::abs(mean) > 1e-3 || std::abs(variance - 1) > 1e-3) {
      std::fprintf(stderr, "normal samples have mean %g, variance %g\n", mean, variance);
      return 1;
    }
  }
  const auto samples =
      bench::time_interleaved({[&] { draw(key).block_until_ready(); }}, 2, kRounds);
  const double weft_s = samples[0].median();
  const double jax_s = jax_seconds();
  if (jax_s < 0) std::printf("\nJAX peer skipped: python3 cannot import jax (pip install jax)\n");
  std::printf("\nrandom normal f32[2^24]: weft %.3f ms, JAX CPU %.3f ms\n", weft_s * 1e3,
              jax_s * 1e3);
  bench::print_summary(
      {{"random normal f32[2^24] vs JAX", bench::format(weft_s * 1e3, 3) + " ms",
        jax_s > 0 ? bench::format(jax_s * 1e3, 3) + " ms (JAX CPU)" : "JAX not installed",
        jax_s > 0 ? bench::format(weft_s / jax_s, 2) + "x weft/JAX time" : "n/a", "<= 1.0x",
        jax_s > 0 ? bench::met(weft_s <= jax_s) : "n/a"}});
  return 0;
}
