// A program may end while device work it never waited for is still queued or compiling.
// weft must let the driver finish before libraries are torn down; otherwise the driver's
// compiler thread crashes in destroyed statics during exit.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "weft/weft.h"

namespace weft {
namespace {

TEST(Exit, PendingWorkAtExitDoesNotCrash) {
  // The child starts the driver itself, with an empty kernel cache, so its kernels are
  // still being compiled when it exits.
  const std::string cache =
      std::filesystem::temp_directory_path() / ("weft-exit-test-" + std::to_string(getpid()));
  for (int attempt = 0; attempt < 2; ++attempt) {
    std::filesystem::remove_all(cache);
    const pid_t child = fork();
    ASSERT_GE(child, 0);
    const std::string log = cache + ".stderr";
    if (child == 0) {
      // A crash report from a sanitizer may end in exit status 0; keep stderr to look at it.
      if (std::FILE* f = std::freopen(log.c_str(), "w", stderr); !f) std::_Exit(3);
      setenv("POCL_CACHE_DIR", cache.c_str(), 1);
      Array x = np::ones({1 << 20});
      for (int i = 0; i < 4; ++i) x = np::tanh(x * (1.5 + attempt + i)) + np::exp(x);
      std::exit(0);  // no wait: the work above is still queued
    }
    // A crash during exit can also deadlock inside the crash reporter: bound the wait.
    int status = 0;
    pid_t done = 0;
    for (int tick = 0; tick < 1800 && done == 0; ++tick) {
      done = waitpid(child, &status, WNOHANG);
      if (done == 0) usleep(100 * 1000);
    }
    if (done == 0) {
      kill(child, SIGKILL);
      waitpid(child, &status, 0);
      FAIL() << "the child hung for 3 minutes while exiting";
    }
    ASSERT_EQ(done, child);
    EXPECT_TRUE(WIFEXITED(status)) << "child died from signal " << WTERMSIG(status);
    if (WIFEXITED(status)) {
      EXPECT_EQ(WEXITSTATUS(status), 0);
    }
    std::ifstream in(log);
    const std::string err((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    EXPECT_EQ(err.find("SEGV"), std::string::npos) << err;
    EXPECT_EQ(err.find("ERROR:"), std::string::npos) << err;
    std::filesystem::remove(log);
  }
  std::filesystem::remove_all(cache);
}

// Waits up to three minutes for `child`; returns its status, or fails the test on a hang.
::testing::AssertionResult wait_bounded(pid_t child, int& status) {
  pid_t done = 0;
  for (int tick = 0; tick < 1800 && done == 0; ++tick) {
    done = waitpid(child, &status, WNOHANG);
    if (done == 0) usleep(100 * 1000);
  }
  if (done == child) return ::testing::AssertionSuccess();
  kill(child, SIGKILL);
  waitpid(child, &status, 0);
  return ::testing::AssertionFailure() << "the child hung for 3 minutes while exiting";
}

TEST(Exit, PendingCallbacksRunBeforeTheProcessEndsAndNoPrintIsLost) {
  const std::string base =
      std::filesystem::temp_directory_path() / ("weft-exit-prints-" + std::to_string(getpid()));
  const std::string out = base + ".stdout", err = base + ".stderr";
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    if (!std::freopen(out.c_str(), "w", stdout) || !std::freopen(err.c_str(), "w", stderr))
      std::_Exit(3);
    // Slow ordered taps and prints, one that throws, a callback whose result feeds a kernel,
    // and no wait of any kind before exit.
    auto f = jit([](const Array& x) {
      hcb::id_tap([](const HostArray&) { usleep(20 * 1000); }, x);
      debug_print("line {}", x, DebugPrintOptions{.ordered = true});
      hcb::id_tap(
          [](const HostArray& v) {
            if (v.get_i64(0) == 5) throw std::runtime_error("never raised: nobody waits");
          },
          x);
      return io_callback([](const HostArray& v) { return v; }, ShapeDtype::like(x), x) + 1;
    });
    for (int i = 0; i < 20; ++i) f(Array::scalar_int(i, DType::I32));
    std::exit(0);
  }
  int status = 0;
  ASSERT_TRUE(wait_bounded(child, status));
  EXPECT_TRUE(WIFEXITED(status)) << "child died from signal " << WTERMSIG(status);
  if (WIFEXITED(status)) {
    EXPECT_EQ(WEXITSTATUS(status), 0);
  }
  std::ifstream printed(out);
  std::string expected;
  for (int i = 0; i < 20; ++i) expected += "line " + std::to_string(i) + "\n";
  const std::string got((std::istreambuf_iterator<char>(printed)),
                        std::istreambuf_iterator<char>());
  EXPECT_EQ(got, expected);
  std::ifstream errors(err);
  const std::string e((std::istreambuf_iterator<char>(errors)), std::istreambuf_iterator<char>());
  EXPECT_EQ(e.find("ERROR:"), std::string::npos) << e;
  std::filesystem::remove(out);
  std::filesystem::remove(err);
}

}  // namespace
}  // namespace weft
