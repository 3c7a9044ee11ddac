// Tiered execution (weft/opencl/tiering.h, docs/runtime.md): a program's first calls run on the
// reference interpreter while its kernels are not built, a hot program builds in the
// background and switches to its kernels, and the switch changes no result beyond the
// interpreter's documented accuracy, no print's order, no error. CTest runs every other test
// with WEFT_TIERED=0; this one sets the mode per test.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include <unistd.h>

#include "support/print_capture.h"
#include "weft/cache/process_cache.h"
#include "weft/interp/cost.h"
#include "weft/opencl/executable.h"
#include "weft/opencl/register.h"
#include "weft/opencl/tiering.h"
#include "weft/weft.h"

namespace weft {
namespace {

using opencl::OpenCLExecutable;
using opencl::Tiering;
using testing::PrintCapture;

class TieredExecution : public ::testing::Test {
 protected:
  // The persistent cache stays on, with keys of this process's own: a program an earlier run
  // built and stored would be a hit here, built before its first call.
  static void SetUpTestSuite() {
    cache::CacheSettings settings = cache::ProcessCache::instance().settings();
    settings.user_hook =
        "tiered_execution_test " + std::to_string(::getpid()) + " " +
        std::to_string(std::chrono::steady_clock::now().time_since_epoch().count());
    cache::ProcessCache::instance().configure(settings);
  }
  static void TearDownTestSuite() { cache::ProcessCache::instance().configure_from_environment(); }
  void TearDown() override { opencl::set_tiering(std::nullopt); }
};

HostArray ramp(const Shape& shape, float scale) {
  HostArray a(DType::F32, shape);
  auto v = a.view<float>();
  for (std::size_t i = 0; i < v.size(); ++i)
    v[i] = scale * std::sin(0.37f * static_cast<float>(i + 1));
  return a;
}

void expect_near(const HostArray& got, const HostArray& want, double tolerance) {
  ASSERT_EQ(got.shape(), want.shape());
  for (std::int64_t i = 0; i < got.size(); ++i)
    EXPECT_NEAR(got.get_f64(i), want.get_f64(i), tolerance * (1 + std::fabs(want.get_f64(i))))
        << "element " << i;
}

// softmax(x @ w) * exp(-|x|) summed by rows: a dot, reductions and transcendentals.
Array small_model(const Array& x, const Array& w) {
  const Array logits = np::matmul(x, w);
  return np::sum(np::softmax(logits, 1) * np::exp(-np::abs(logits)), {1});
}

std::shared_ptr<OpenCLExecutable> executable_of(const std::shared_ptr<Executable>& exe) {
  auto opencl_exe = std::dynamic_pointer_cast<OpenCLExecutable>(exe);
  EXPECT_NE(opencl_exe, nullptr);
  return opencl_exe;
}

TEST_F(TieredExecution, FirstCallRunsOnTheInterpreterAndAgreesWithTheKernels) {
  opencl::set_tiering(Tiering::automatic);
  const Array x = Array::from_host(ramp({16, 24}, 1.5f));
  const Array w = Array::from_host(ramp({24, 10}, 0.7f));
  auto f = jit(small_model, {.name = "tiered_small_model"});
  const auto exe = executable_of(f.lower(x, w).compile());
  EXPECT_FALSE(exe->built());
  const HostArray interpreted = f(x, w).to_host();
  EXPECT_EQ(exe->last_ran_on(), "interpreter (build not started)");
  EXPECT_FALSE(exe->built()) << "one cheap call builds nothing";
  exe->build_now();
  const HostArray on_kernels = f(x, w).to_host();
  EXPECT_EQ(exe->last_ran_on(), "device");
  expect_near(interpreted, on_kernels, 1e-5);
  EXPECT_EQ(f.compile_count(), 1);
}

TEST_F(TieredExecution, AHotProgramBuildsInTheBackgroundAndSwitchesToItsKernels) {
  opencl::set_tiering(Tiering::automatic);
  const Array x = Array::from_host(ramp({32, 64}, 1.0f));
  const Array w = Array::from_host(ramp({64, 16}, 0.3f));
  auto f = jit(small_model, {.name = "tiered_hot_model"});
  const auto exe = executable_of(f.lower(x, w).compile());
  const HostArray first = f(x, w).to_host();
  std::vector<std::string> seen;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  while (exe->last_ran_on() != "device" && std::chrono::steady_clock::now() < deadline) {
    expect_near(f(x, w).to_host(), first, 1e-5);
    if (seen.empty() || seen.back() != exe->last_ran_on()) seen.push_back(exe->last_ran_on());
  }
  ASSERT_EQ(exe->last_ran_on(), "device") << "still on the interpreter after two minutes";
  EXPECT_TRUE(exe->built());
  // It was interpreted, then built in the background while its calls went on.
  EXPECT_EQ(seen.front(), "interpreter (build not started)");
  EXPECT_NE(std::find(seen.begin(), seen.end(), "interpreter (build pending)"), seen.end());
  expect_near(f(x, w).to_host(), first, 1e-5);
}

TEST_F(TieredExecution, InterpreterModeNeverBuilds) {
  opencl::set_tiering(Tiering::interpreter);
  const Array x = Array::from_host(ramp({8, 8}, 2.0f));
  auto f = jit([](const Array& a) { return np::tanh(a) * 2.0f + np::max(a, {0}); },
               {.name = "tiered_interpreter_only"});
  const auto exe = executable_of(f.lower(x).compile());
  HostArray first = f(x).to_host();
  for (int i = 0; i < 50; ++i) expect_near(f(x).to_host(), first, 0);
  EXPECT_FALSE(exe->built());
  EXPECT_EQ(exe->last_ran_on(), "interpreter (WEFT_TIERED=interpreter)");
  // An independent computation: tanh(a) * 2 + the column maxima.
  const HostArray x_host = x.to_host();
  const auto a = x_host.view<float>();
  for (std::int64_t r = 0; r < 8; ++r)
    for (std::int64_t c = 0; c < 8; ++c) {
      float column_max = a[static_cast<std::size_t>(c)];
      for (std::int64_t k = 0; k < 8; ++k)
        column_max = std::max(column_max, a[static_cast<std::size_t>(k * 8 + c)]);
      EXPECT_NEAR(first.get_f64(r * 8 + c),
                  std::tanh(a[static_cast<std::size_t>(r * 8 + c)]) * 2.0f + column_max, 1e-6);
    }
}

// Ordered prints keep program order when one program runs on its kernels (its prints on the
// device's receiver thread) and the next on the interpreter (on the calling thread).
TEST_F(TieredExecution, OrderedPrintsKeepProgramOrderAcrossTiers) {
  PrintCapture capture;
  opencl::set_tiering(Tiering::off);
  auto on_kernels = jit(
      [](const Array& a) {
        debug_print("kernels {}", np::sum(a), DebugPrintOptions{.ordered = true});
        return a + 1.0f;
      },
      {.name = "tiered_print_kernels"});
  const Array x = Array::from_vector<float>({3}, {1, 2, 3});
  ASSERT_TRUE(executable_of(on_kernels.lower(x).compile())->built());
  opencl::set_tiering(Tiering::interpreter);
  auto interpreted = jit(
      [](const Array& a) {
        debug_print("interpreter {}", np::sum(a), DebugPrintOptions{.ordered = true});
        return a * 2.0f;
      },
      {.name = "tiered_print_interpreter"});
  ASSERT_FALSE(executable_of(interpreted.lower(x).compile())->built());
  Array v = x;
  for (int i = 0; i < 3; ++i) v = interpreted(on_kernels(v));
  effects_barrier();
  EXPECT_EQ(capture.lines(),
            (std::vector<std::string>{"kernels 6.", "interpreter 9.", "kernels 18.",
                                      "interpreter 21.", "kernels 42.", "interpreter 45."}));
  const std::vector<float> got = v.to_vector<float>();
  EXPECT_EQ(got, (std::vector<float>{22, 30, 38}));
}

TEST_F(TieredExecution, ProgramsTheInterpreterCannotRunBuildAtCompile) {
  opencl::set_tiering(Tiering::automatic);
  auto with_callback = jit(
      [](const Array& a) {
        return io_callback([](const HostArray& h) { return h; }, ShapeDtype::like(a), a) + 1.0f;
      },
      {.name = "tiered_host_call"});
  const Array x = Array::from_vector<float>({2}, {1, 2});
  const auto exe = executable_of(with_callback.lower(x).compile());
  EXPECT_TRUE(exe->built());
  EXPECT_EQ(with_callback(x).to_vector<float>(), (std::vector<float>{2, 3}));
  EXPECT_EQ(exe->last_ran_on(), "device");
}

TEST_F(TieredExecution, FirstCallsTheInterpreterWouldBeSlowAtBuildAtCompile) {
  opencl::set_tiering(Tiering::automatic);
  // 2048^3 multiply-adds: over a second on the interpreter, several times the build.
  const Array a = np::ones({2048, 2048}, DType::F32);
  auto f = jit([](const Array& x) { return np::matmul(x, x); }, {.name = "tiered_big_dot"});
  const auto exe = executable_of(f.lower(a).compile());
  EXPECT_TRUE(exe->built());
  EXPECT_FLOAT_EQ(f(a).to_host().get_f64(0), 2048.0f);
}

TEST_F(TieredExecution, EagerOpsRunOnTheInterpreter) {
  opencl::set_tiering(Tiering::automatic);
  const Array x = Array::from_vector<float>({4}, {-1, 0.5f, 2, -3});
  EXPECT_EQ((-x).to_vector<float>(), (std::vector<float>{1, -0.5f, -2, 3}));
  const std::vector<float> e = np::exp(x).to_vector<float>();
  for (std::size_t i = 0; i < e.size(); ++i)
    EXPECT_NEAR(e[i], std::exp(x.to_vector<float>()[i]), 1e-6 * e[i]);
}

TEST_F(TieredExecution, TheEstimateCountsLoopsAndDots) {
  // Estimates come from traced graphs: a scan of 10 steps over a 100x100 dot.
  auto f = jit([](const Array& m) {
    return lax::fori_loop(
        0, 10, [](const Array&, const Array& v) { return np::matmul(v, v); }, m);
  });
  const Array m = np::ones({100, 100}, DType::F32);
  const InterpretationEstimate estimate = estimate_interpretation(f.lower(m).graph());
  EXPECT_TRUE(estimate.possible);
  // Multiply-adds count a sixtieth of an element op each (the interpreter's dot is blocked in
  // registers and cache tiles, its rows split over the cores), plus the loop's bookkeeping.
  EXPECT_GE(estimate.element_ops, 10 * 100.0 * 100 * 100 * 0.016);
  EXPECT_LE(estimate.element_ops, 10 * 100.0 * 100 * 100 * 0.016 * 1.6);
}

}  // namespace
}  // namespace weft
