// Memory a process keeps as it runs: a while loop's must not depend on its trip count, and the
// programs it no longer uses must not pile up. Each resident-set measurement runs in a forked
// child (the parent starts no device before forking), so the figures are the child's own and
// no earlier test's allocations blur them.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>

#include "support/peak_resident.h"
#include "support/temp_dir.h"
#include "weft/opencl/executable_cache.h"
#include "weft/weft.h"

namespace weft {
namespace {

using testing::PeakResident;
using testing::resident_bytes;

// Runs `child` in a forked process and returns the line it wrote to its pipe ("" when it
// failed: the test then fails with what it printed on stderr).
template <typename F>
std::string run_in_child(F child) {
  int pipe_ends[2];
  if (pipe(pipe_ends) != 0) return "";
  const pid_t pid = fork();
  if (pid < 0) return "";
  if (pid == 0) {
    close(pipe_ends[0]);
    std::string line;
    try {
      line = child();
    } catch (const std::exception& e) {
      std::fprintf(stderr, "child failed: %s\n", e.what());
      std::_Exit(2);
    }
    if (write(pipe_ends[1], line.data(), line.size()) != static_cast<ssize_t>(line.size()))
      std::_Exit(3);
    close(pipe_ends[1]);
    std::fflush(stdout);
    std::_Exit(0);
  }
  close(pipe_ends[1]);
  std::string line;
  char buffer[256];
  for (ssize_t got; (got = read(pipe_ends[0], buffer, sizeof buffer)) > 0;)
    line.append(buffer, static_cast<std::size_t>(got));
  close(pipe_ends[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return "";
  return line;
}

// A while loop whose predicate compares its carry with a constant: each trip count is a
// program of its own, so each run below is its program's first (the one whose launches the
// persistent cache's writer waits for).
auto count_to(int bound) {
  return jit([bound](const Array& start) {
    return lax::while_loop([bound](const Array& i) { return i < bound; },
                           [](const Array& i) { return i + 1; }, start);
  });
}

// In a child with an empty persistent cache of its own (so the run is its program's first, whose
// launches the cache's writer waits for): "<count> <growth>", the loop's result and how far
// the resident set rose above where it stood before the run, the compile done.
std::string measure_first_run(int bound) {
  test::TempDir cache("weft-runtime-memory");
  return run_in_child([&] {
    setenv("WEFT_CACHE_DIR", cache.path().c_str(), 1);
    const Array zero = Array::scalar_int(0);
    auto loop = count_to(bound);
    // Compiled before measuring (and kept alive, so the call finds it): the compiler's own peak
    // is not the loop's.
    auto executable = loop.lower(zero).compile();
    const long long before = resident_bytes();
    PeakResident peak;
    const int count = loop(zero).item<int>();
    return std::to_string(count) + " " + std::to_string(peak.stop() - before);
  });
}

TEST(RuntimeMemory, WhileLoopMemoryDoesNotGrowWithItsTripCount) {
  constexpr int kShort = 5'000, kLong = 50'000;
  long long growth[2] = {};
  for (int k = 0; k < 2; ++k) {
    const int bound = k == 0 ? kShort : kLong;
    const std::string line = measure_first_run(bound);
    ASSERT_NE(line, "") << "the child failed";
    int count = 0;
    ASSERT_EQ(std::sscanf(line.c_str(), "%d %lld", &count, &growth[k]), 2) << line;
    EXPECT_EQ(count, bound);
  }
  std::printf(
      "[ memory   ] growth during the run (resident set; live heap under a sanitizer): %d "
      "iterations %.1f MB, %d "
      "iterations %.1f MB\n",
      kShort, static_cast<double>(growth[0]) / 1e6, kLong, static_cast<double>(growth[1]) / 1e6);
  // Ten times the iterations, the same memory: a few MB of allocator noise at most (before the
  // fix each iteration kept its launches' events, some 0.6 KB, until the loop ended).
  EXPECT_LE(growth[1], growth[0] + 8 * 1024 * 1024);
}

// An executable that only has to exist: the cache's policy does not look inside.
class StubExecutable : public Executable {
 public:
  std::vector<std::shared_ptr<Buffer>> run(std::span<const std::shared_ptr<Buffer>>) override {
    return {};
  }
  const CompiledInfo& info() const override { return info_; }

 private:
  CompiledInfo info_;
};

TEST(ProgramLifetime, TheCacheKeepsOnlyTheMostRecentlyUsedOfTheProgramsNobodyHolds) {
  constexpr std::size_t kKept = 4, kMade = 40;
  opencl::ExecutableCache cache(kKept);
  std::vector<std::weak_ptr<Executable>> made;
  const auto held = std::make_shared<StubExecutable>();
  cache.insert("held", held, true);
  for (std::size_t k = 0; k < kMade; ++k) {
    auto executable = std::make_shared<StubExecutable>();
    made.push_back(executable);
    EXPECT_EQ(cache.insert("program " + std::to_string(k), executable, true), executable);
    // The first one stays the most recently used: looked up after every new program.
    ASSERT_NE(cache.find("program 0"), nullptr) << k;
  }
  EXPECT_EQ(cache.kept(), kKept);
  // Kept: the first (used throughout) and the last kKept - 1; the rest were released.
  for (std::size_t k = 0; k < kMade; ++k) {
    const bool kept = k == 0 || k >= kMade - (kKept - 1);
    EXPECT_EQ(!made[k].expired(), kept) << k;
    EXPECT_EQ(cache.find("program " + std::to_string(k)) != nullptr, kept) << k;
  }
  // A program a caller holds is found however many came after it.
  EXPECT_EQ(cache.find("held"), held);
  // One that only its holders can ask for again (its graph has callbacks) lives as they do.
  auto with_callbacks = std::make_shared<StubExecutable>();
  std::weak_ptr<Executable> watch = with_callbacks;
  cache.insert("with callbacks", with_callbacks, false);
  EXPECT_EQ(cache.find("with callbacks"), with_callbacks);
  with_callbacks.reset();
  EXPECT_TRUE(watch.expired());
  EXPECT_EQ(cache.find("with callbacks"), nullptr);
  // A racing compile of the same graph gets the executable stored first.
  auto second = std::make_shared<StubExecutable>();
  EXPECT_EQ(cache.insert("held", second, true), held);
  cache.clear();
  EXPECT_EQ(cache.kept(), 0u);
  EXPECT_EQ(cache.find("held"), nullptr);
}

TEST(ProgramLifetime, ACallbackIsReleasedWithTheLastJitThatCanCallIt) {
  // In a child, as every test here that starts a device: "<tapped values> <released>".
  const std::string line = run_in_child([] {
    // What the callback captured: alive while a jitted function can still call it.
    auto captured = std::make_shared<std::vector<float>>();
    const std::weak_ptr<std::vector<float>> watch = captured;
    std::string tapped_values;
    {
      auto tapped = jit([captured](const Array& x) {
        return hcb::id_tap(
            [captured](const HostArray& value) {
              for (std::int64_t k = 0; k < value.size(); ++k)
                captured->push_back(static_cast<float>(value.get_f64(k)));
            },
            x * 2.0f);
      });
      captured.reset();
      tapped(Array::from_vector<float>({3}, {1, 2, 3})).block_until_ready();
      effects_barrier();
      if (auto values = watch.lock())
        for (float v : *values) tapped_values += std::to_string(static_cast<int>(v)) + ",";
    }
    // Before, the device kept the executable, and through it the callback, for the life of the
    // process. The receiver thread drops its hold on the finished task just after the barrier:
    // wait for that (bounded; it takes microseconds).
    for (int tick = 0; tick < 10000 && !watch.expired(); ++tick)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    return tapped_values + " " + (watch.expired() ? "released" : "kept");
  });
  EXPECT_EQ(line, "2,4,6, released");
}

}  // namespace
}  // namespace weft
