// A program with callbacks is cacheable: callbacks are named by slot in the IR, never by
// address, so a second process that registers its own callback hits the entry the first one
// stored, and runs its own callback. The test runs this binary twice as a child process
// against a fresh cache directory.
#include <gtest/gtest.h>
#include <spawn.h>
#include <sys/wait.h>

#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "support/print_capture.h"
#include "support/temp_dir.h"
#include "weft/cache/process_cache.h"
#include "weft/opencl/register.h"
#include "weft/print_format.h"
#include "weft/weft.h"

extern char** environ;

namespace weft {
namespace {

constexpr const char* kChildOutput = "WEFT_EFFECTS_CACHE_CHILD_OUTPUT";

// Runs this test binary's child test with `extra` added to the environment; returns its exit
// status (-1 when it could not start).
int run_child(const std::vector<std::string>& extra) {
  std::vector<std::string> env_strings(extra);
  for (char** e = environ; *e; ++e) {
    const std::string entry = *e;
    bool overridden = false;
    for (const std::string& x : extra)
      overridden |= entry.substr(0, entry.find('=')) == x.substr(0, x.find('='));
    if (!overridden) env_strings.push_back(entry);
  }
  std::vector<char*> envp;
  for (std::string& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::string exe = "/proc/self/exe";
  std::string filter = "--gtest_filter=EffectsCache.DISABLED_ChildRunsAProgramWithACallback";
  std::string disabled = "--gtest_also_run_disabled_tests";
  char* argv[] = {exe.data(), filter.data(), disabled.data(), nullptr};
  pid_t pid = 0;
  if (::posix_spawn(&pid, exe.c_str(), nullptr, nullptr, argv, envp.data()) != 0) return -1;
  int status = 0;
  if (::waitpid(pid, &status, 0) != pid) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

struct ChildReport {
  std::uint64_t hits = 0, misses = 0;
  std::string result, printed, called;
};

ChildReport read_report(const std::filesystem::path& path) {
  std::ifstream in(path);
  ChildReport r;
  in >> r.hits >> r.misses;
  in.ignore();
  std::getline(in, r.result);
  std::getline(in, r.printed);
  std::getline(in, r.called);
  return r;
}

TEST(EffectsCache, AProgramWithACallbackHitsTheCacheInASecondProcess) {
  test::TempDir dir("weft-effects-cache");
  const std::string cache = "WEFT_CACHE_DIR=" + (dir.path() / "cache").string();
  const std::filesystem::path first = dir.path() / "first.txt";
  const std::filesystem::path second = dir.path() / "second.txt";
  ASSERT_EQ(run_child({cache, std::string(kChildOutput) + "=" + first.string()}), 0);
  ASSERT_EQ(run_child({cache, std::string(kChildOutput) + "=" + second.string()}), 0);
  const ChildReport miss = read_report(first);
  const ChildReport hit = read_report(second);
  EXPECT_EQ(miss.hits, 0u);
  EXPECT_GE(miss.misses, 2u);  // the program and the callback's own
  EXPECT_GE(hit.hits, 2u) << "the second process compiled again";
  EXPECT_EQ(hit.misses, 0u);
  // Both ran their own callback and printed, with the same results.
  for (const ChildReport* r : {&miss, &hit}) {
    EXPECT_EQ(r->result, "[3. 5. 0.]");
    EXPECT_EQ(r->printed, "child x = [ 1.   2.  -0.5]");
    EXPECT_EQ(r->called, "called once");
  }
}

// Run only by the test above, in a child process.
TEST(EffectsCache, DISABLED_ChildRunsAProgramWithACallback) {
  const char* output = std::getenv(kChildOutput);
  ASSERT_NE(output, nullptr) << "run by AProgramWithACallbackHitsTheCacheInASecondProcess";
  int calls = 0;
  // The callback runs a jitted function of its own: compiled (and, in the first process,
  // written to the cache by the background writer, whose launch gate the callback's kernel
  // launches must not deadlock against) while the outer program waits for the callback.
  auto add_half_on_device = jit([](const Array& v) { return v + 0.5; });
  auto add_half = [&](const HostArray& v) {
    ++calls;
    return add_half_on_device(Array::from_host(v)).to_host();
  };
  auto f = jit([&](const Array& x) {
    debug_print("child x = {}", x, DebugPrintOptions{.ordered = true});
    return io_callback(add_half, ShapeDtype::like(x), x, CallbackOptions{.ordered = true}) * 2.0;
  });
  testing::PrintCapture capture;
  const Array y = f(Array::from_vector<float>({3}, {1, 2, -0.5f}));
  const HostArray result = y.to_host();
  effects_barrier();
  const std::shared_ptr<cache::ProgramStore> store = cache::ProcessCache::instance().store();
  ASSERT_NE(store, nullptr) << "the persistent cache is off";
  const cache::StoreStats stats = store->stats();
  const std::vector<std::string> lines = capture.lines();
  std::ofstream out(output);
  out << stats.process.hits << ' ' << stats.process.total_misses() << '\n'
      << format_for_print(result) << '\n'
      << (lines.size() == 1 ? lines[0] : "(" + std::to_string(lines.size()) + " lines)") << '\n'
      << (calls == 1 ? "called once" : "called " + std::to_string(calls) + " times") << '\n';
}

}  // namespace
}  // namespace weft
