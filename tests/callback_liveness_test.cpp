// Callbacks and the process around them. Each test runs its program in a forked child (this
// process never starts the driver, so every child starts it afresh) and waits for it with a
// bound, so that a hang fails the test instead of hanging it.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <future>
#include <iterator>
#include <string>
#include <thread>

#include "weft/weft.h"

// Set in a process forked after weft ran: the allocations of threads fork() did not copy (the
// driver's, weft's) are referenced from nowhere LeakSanitizer looks, so its exit check would
// report them. LeakSanitizer calls this hook, when it is linked in, before checking.
bool leak_check_off = false;
extern "C" int __lsan_is_turned_off() {
  return leak_check_off ? 1 : 0;
}

namespace weft {
namespace {

using namespace std::chrono_literals;

// Waits for `child` up to `limit`, polling; kills it past the limit. False: it hung.
bool wait_bounded(pid_t child, int& status, std::chrono::seconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < deadline) {
    const pid_t done = waitpid(child, &status, WNOHANG);
    if (done == child) return true;
    if (done < 0) return false;
    std::this_thread::sleep_for(20ms);
  }
  kill(child, SIGKILL);
  waitpid(child, &status, 0);
  return false;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

struct ChildRun {
  bool hung = false;
  int status = 0;
  std::string out, err;
  bool exited_with(int code) const {
    return !hung && WIFEXITED(status) && WEXITSTATUS(status) == code;
  }
  std::string describe() const {
    std::string how = hung                  ? "hung (killed)"
                      : WIFEXITED(status)   ? "exit code " + std::to_string(WEXITSTATUS(status))
                      : WIFSIGNALED(status) ? "signal " + std::to_string(WTERMSIG(status))
                                            : "status " + std::to_string(status);
    return how + "\n--- stdout\n" + out + "\n--- stderr\n" + err;
  }
};

// Runs `program` in a forked child with stdout and stderr in files; the child ends through
// std::exit with what `program` returns (so its exit handlers run).
ChildRun run_child(const std::function<int()>& program, std::chrono::seconds limit) {
  const std::string base = std::filesystem::temp_directory_path() /
                           ("weft-callback-liveness-" + std::to_string(getpid()));
  const std::string out = base + ".stdout", err = base + ".stderr";
  const pid_t child = fork();
  if (child == 0) {
    if (!std::freopen(out.c_str(), "w", stdout) || !std::freopen(err.c_str(), "w", stderr))
      std::_Exit(90);
    int code = 91;
    try {
      code = program();
    } catch (const std::exception& e) {
      std::fprintf(stderr, "uncaught: %s\n", e.what());
    }
    std::exit(code);
  }
  ChildRun run;
  if (child < 0) {
    run.hung = true;
    run.err = "fork failed";
    return run;
  }
  run.hung = !wait_bounded(child, run.status, limit);
  run.out = read_file(out);
  run.err = read_file(err);
  std::filesystem::remove(out);
  std::filesystem::remove(err);
  return run;
}

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

void block_forever() {
  std::promise<void> never;
  never.get_future().wait();
}

TEST(CallbackQueueBound, TinyCallsPendingAreBoundedByTheirHostFootprint) {
  // 64 KiB holds about fifty pending calls at their real cost; counted by argument bytes
  // alone (4 here) it would hold 16,384, i.e. every call below.
  const ChildRun run = run_child(
      [] {
        setenv("WEFT_CALLBACK_MAX_QUEUE_BYTES", "64KiB", 1);
        std::atomic<int> ran{0};
        auto f = jit([&](const Array& x) {
          hcb::id_tap(
              [&](const HostArray&) {
                std::this_thread::sleep_for(200us);
                ++ran;
              },
              x);
          return x;
        });
        const Array x = Array::scalar_int(1, DType::I32);
        f(x);
        effects_barrier();
        const int before = ran.load();
        int most_pending = 0;
        for (int i = 1; i <= 2000; ++i) {
          f(x);
          most_pending = std::max(most_pending, i - (ran.load() - before));
        }
        effects_barrier();
        std::printf("%d\n", most_pending);
        return ran.load() - before == 2000 ? 0 : 1;
      },
      120s);
  ASSERT_TRUE(run.exited_with(0)) << run.describe();
  const int most_pending = std::stoi(run.out);
  EXPECT_LE(most_pending, 64 + 1) << "pending calls with WEFT_CALLBACK_MAX_QUEUE_BYTES=64KiB";
  EXPECT_GE(most_pending, 1);
}

TEST(CallbackTimeout, ACallbackThatNeverReturnsFailsItsWaitsAndTheProcessStillExits) {
  const ChildRun run = run_child(
      [] {
        // The slow callback returns well inside the timeout even on a loaded machine.
        setenv("WEFT_CALLBACK_TIMEOUT", "2s", 1);
        setenv("WEFT_CALLBACK_WARN_AFTER", "100ms", 1);
        const Array x = Array::scalar_int(5, DType::I32);
        // Slow but returning: named on stderr after 100 ms, and its result is kept.
        auto slow = jit([](const Array& v) {
          return io_callback(
              [](const HostArray& h) {
                std::this_thread::sleep_for(400ms);
                return h;
              },
              ShapeDtype::like(v), v);
        });
        if (slow(x).item<std::int64_t>() != 5) return 1;
        // Never returning, its result waited for.
        auto stuck = jit([](const Array& v) {
          return io_callback(
              [](const HostArray& h) {
                block_forever();
                return h;
              },
              ShapeDtype::like(v), v);
        });
        try {
          stuck(x).to_host();
          return 2;
        } catch (const CallbackException& e) {
          std::printf("to_host: %s\n", e.what());
        }
        // Never returning, a tap: the barrier raises.
        auto stuck_tap = jit([](const Array& v) {
          hcb::id_tap([](const HostArray&) { block_forever(); }, v);
          return v;
        });
        stuck_tap(x);
        try {
          effects_barrier();
          return 3;
        } catch (const CallbackException& e) {
          std::printf("barrier: %s\n", e.what());
        }
        // The device's callbacks go on, on a new receiver thread.
        if (slow(x + Array::scalar_int(1, DType::I32)).item<std::int64_t>() != 6) return 4;
        std::fflush(stdout);
        // Stuck again, and nobody waits: exit waits out the timeout, then ends the process.
        stuck_tap(x);
        return 0;
      },
      60s);
  ASSERT_TRUE(run.exited_with(0)) << run.describe();
  EXPECT_EQ(count(run.out, "did not return within 2.0 s (WEFT_CALLBACK_TIMEOUT)"), 2u) << run.out;
  EXPECT_NE(run.out.find("to_host: weft: the io_callback at "), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("barrier: weft: the hcb.id_tap at "), std::string::npos) << run.out;
  EXPECT_EQ(count(run.out, "callback_liveness_test.cpp:"), 2u) << run.out;
  // The device, whichever kind the machine has.
  EXPECT_EQ(count(run.out, " on cpu:") + count(run.out, " on gpu:"), 2u) << run.out;
  EXPECT_EQ(count(run.out, "it had run "), 2u) << run.out;
  // The warnings: the slow one, both stuck ones before they timed out, and the third timeout,
  // at exit.
  EXPECT_GE(count(run.err, "has been running for"), 4u) << run.err;
  EXPECT_EQ(count(run.err, "did not return within 2.0 s"), 3u) << run.err;
}

TEST(CallbackExit, StdExitInsideACallbackEndsTheProcessWithItsCode) {
  // A callback whose result a kernel reads (the run waits on the runtime thread), and a tap
  // waited for by the barrier.
  const ChildRun with_result = run_child(
      [] {
        auto f = jit([](const Array& v) {
          return io_callback(
                     [](const HostArray& h) {
                       std::exit(7);
                       return h;
                     },
                     ShapeDtype::like(v), v) *
                 2;
        });
        f(Array::scalar_int(1, DType::I32)).to_host();
        return 1;
      },
      60s);
  EXPECT_TRUE(with_result.exited_with(7)) << with_result.describe();
  const ChildRun tap = run_child(
      [] {
        auto f = jit([](const Array& v) {
          hcb::id_tap([](const HostArray&) { std::exit(7); }, v);
          return v;
        });
        f(Array::scalar_int(1, DType::I32));
        effects_barrier();
        return 1;
      },
      60s);
  EXPECT_TRUE(tap.exited_with(7)) << tap.describe();
}

TEST(Fork, AChildForkedAfterWeftRanIsRefusedWithAClearErrorAndTheParentGoesOn) {
  const ChildRun run = run_child(
      [] {
        auto f = jit([](const Array& v) { return v * 2 + 1; });
        const Array x = Array::scalar_int(3, DType::I32);
        if (f(x).item<std::int64_t>() != 7) return 1;
        const pid_t grandchild = fork();
        if (grandchild == 0) {
          leak_check_off = true;
          try {
            f(x).to_host();
            std::exit(10);
          } catch (const DeviceError& e) {
            const std::string what = e.what();
            std::fprintf(stderr, "child: %s\n", e.what());
            std::exit(what.find("was forked from process") != std::string::npos &&
                              what.find("exec") != std::string::npos
                          ? 0
                          : 11);
          }
        }
        int status = 0;
        if (!wait_bounded(grandchild, status, 30s)) return 2;
        if (!WIFEXITED(status)) return 3;
        if (WEXITSTATUS(status) != 0) return 20 + WEXITSTATUS(status);
        // The parent is unaffected.
        return f(x + 1).item<std::int64_t>() == 9 ? 0 : 4;
      },
      90s);
  EXPECT_TRUE(run.exited_with(0)) << run.describe();
  EXPECT_NE(run.err.find("child: weft: this process (pid "), std::string::npos) << run.err;
}

}  // namespace
}  // namespace weft
