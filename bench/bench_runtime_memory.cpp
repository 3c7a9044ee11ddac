// Host memory that does not depend on how long a process runs (each figure from a child process
// of its own, spawned by this program in child mode, so no measurement inherits another's heap):
//   while:    peak resident-set growth during the first run of a while loop whose predicate
//             compares its carry with a constant (i < N), N = 100,000 and 1,000,000, with an
//             empty persistent cache (a first run is the one whose launches the cache writer
//             waits for). Goal: the 1,000,000-iteration loop grows no more than the
//             100,000-iteration one plus 8 MB.
//   programs: resident set while a process makes 2,000 distinct programs, each by a jit object
//             destroyed after one call (x * k + 1 for a new constant k). Goal: the growth per
//             program once the device's recently-used set is full stays under 32 KB (before:
//             some 170 KB, every executable kept for the life of the process). The programs
//             come from the persistent cache when an earlier run stored them (run it twice for
//             the warm figure; the first run compiles 2,000 programs, minutes on PoCL).
//
//   bench_runtime_memory [--sections while,programs] [--iterations 100000,1000000]
//                        [--programs 2000]
//   bench_runtime_memory --child while N | --child programs N   (internal)
#include <malloc.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "common.h"
#include "support/peak_resident.h"
#include "weft/weft.h"

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

using weft::testing::PeakResident;
using weft::testing::resident_bytes;

double megabytes(long long bytes) {
  return static_cast<double>(bytes) / 1e6;
}

// Child: prints "<count> <seconds> <growth bytes> <peak bytes>".
int while_child(int bound) {
  using namespace weft;
  auto loop = jit([bound](const Array& start) {
    return lax::while_loop([bound](const Array& i) { return i < bound; },
                           [](const Array& i) { return i + 1; }, start);
  });
  const Array zero = Array::scalar_int(0);
  auto executable = loop.lower(zero).compile();  // the compiler's peak is not the loop's
  const long long before = resident_bytes();
  PeakResident peak;
  const auto start = Clock::now();
  const int count = loop(zero).item<int>();
  const double seconds = seconds_since(start);
  const long long highest = peak.stop();
  std::printf("%d %.3f %lld %lld\n", count, seconds, highest - before, highest);
  return count == bound ? 0 : 1;
}

// Child: prints "<programs made> <seconds> <resident bytes>" after the first and then at
// checkpoints.
int programs_child(int programs) {
  using namespace weft;
  const Array x = np::ones({16});
  const auto start = Clock::now();
  for (int k = 0; k < programs; ++k) {
    {
      auto f = jit([k](const Array& a) { return a * static_cast<float>(100000 + k) + 1.0f; });
      f(x).block_until_ready();
    }
    if (k == 0 || (k + 1) % 250 == 0 || k + 1 == programs) {
      malloc_trim(0);  // freed memory is not the process's growth
      std::printf("%d %.3f %lld\n", k + 1, seconds_since(start), resident_bytes());
      std::fflush(stdout);
    }
  }
  return 0;
}

std::vector<std::string> split(const std::string& list) {
  std::vector<std::string> items;
  std::stringstream in(list);
  for (std::string item; std::getline(in, item, ',');)
    if (!item.empty()) items.push_back(item);
  return items;
}

// Runs this program in child mode and returns its output lines.
std::vector<std::string> run_child(const std::string& env, const std::string& args) {
  const std::string self = std::filesystem::read_symlink("/proc/self/exe").string();
  const std::string command = env + " '" + self + "' --child " + args;
  std::FILE* pipe = popen(command.c_str(), "r");
  if (!pipe) throw std::runtime_error("cannot run " + command);
  std::vector<std::string> lines;
  char buffer[512];
  while (std::fgets(buffer, sizeof buffer, pipe)) {
    std::string line = buffer;
    if (!line.empty() && line.back() == '\n') line.pop_back();
    lines.push_back(line);
  }
  if (pclose(pipe) != 0) throw std::runtime_error("the child '" + args + "' failed");
  return lines;
}

void while_section(const std::vector<std::string>& iterations) {
  std::printf("\nwhile loop, first run (empty persistent cache), peak resident-set growth:\n");
  std::printf("  %12s  %10s  %12s  %12s\n", "iterations", "time", "growth", "peak");
  std::vector<long long> growths;
  for (const std::string& n : iterations) {
    char pattern[] = "/tmp/bench-runtime-memory-XXXXXX";
    const char* dir = mkdtemp(pattern);
    if (!dir) throw std::runtime_error("mkdtemp failed");
    const std::vector<std::string> lines =
        run_child("WEFT_CACHE_DIR='" + std::string(dir) + "'", "while " + n);
    std::filesystem::remove_all(dir);
    int count = 0;
    double seconds = 0;
    long long growth = 0, peak = 0;
    if (lines.empty() || std::sscanf(lines.back().c_str(), "%d %lf %lld %lld", &count, &seconds,
                                     &growth, &peak) != 4)
      throw std::runtime_error("the while child printed nothing usable");
    growths.push_back(growth);
    std::printf("  %12s  %8.2f s  %9.1f MB  %9.1f MB\n", n.c_str(), seconds, megabytes(growth),
                megabytes(peak));
  }
  if (growths.size() >= 2) {
    const long long extra = growths.back() - growths.front();
    std::printf("  the longest loop grew %.1f MB more than the shortest (goal: <= 8 MB): %s\n",
                megabytes(extra), extra <= 8 * 1024 * 1024 ? "met" : "NOT met");
  }
}

void programs_section(int programs) {
  std::printf("\n%d distinct programs, each from a jit object destroyed after one call:\n",
              programs);
  std::printf("  %10s  %10s  %12s\n", "programs", "time", "resident");
  const std::vector<std::string> lines = run_child("", "programs " + std::to_string(programs));
  std::vector<std::pair<int, long long>> points;
  for (const std::string& line : lines) {
    int made = 0;
    double seconds = 0;
    long long resident = 0;
    if (std::sscanf(line.c_str(), "%d %lf %lld", &made, &seconds, &resident) != 3) continue;
    points.emplace_back(made, resident);
    std::printf("  %10d  %8.1f s  %9.1f MB\n", made, seconds, megabytes(resident));
  }
  // From the first checkpoint past the recently-used set (kRecentlyUsedPrograms) to the end.
  const auto past = std::find_if(points.begin(), points.end(), [](const auto& p) {
    return static_cast<std::size_t>(p.first) >=
           2 * weft::opencl::OpenCLDevice::kRecentlyUsedPrograms;
  });
  if (past != points.end() && past->first < points.back().first) {
    const double per_program = static_cast<double>(points.back().second - past->second) /
                               (points.back().first - past->first);
    std::printf("  growth per program from %d to %d programs: %.1f KB (goal: < 32 KB): %s\n",
                past->first, points.back().first, per_program / 1e3,
                per_program < 32e3 ? "met" : "NOT met");
  }
}

int usage() {
  std::fprintf(stderr,
               "usage: bench_runtime_memory [--sections while,programs] [--iterations LIST] "
               "[--programs N]\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    if (argc == 4 && std::string(argv[1]) == "--child") {
      const std::string section = argv[2];
      const int n = std::stoi(argv[3]);
      return section == "while" ? while_child(n) : programs_child(n);
    }
    std::vector<std::string> sections{"while", "programs"};
    std::vector<std::string> iterations{"100000", "1000000"};
    int programs = 2000;
    for (int i = 1; i < argc; i += 2) {
      if (i + 1 >= argc) return usage();
      const std::string arg = argv[i], value = argv[i + 1];
      if (arg == "--sections")
        sections = split(value);
      else if (arg == "--iterations")
        iterations = split(value);
      else if (arg == "--programs")
        programs = std::max(1, std::stoi(value));
      else
        return usage();
    }
    std::printf("bench_runtime_memory on %s\n", weft::bench::device_line().c_str());
    for (const std::string& section : sections) {
      if (section == "while")
        while_section(iterations);
      else if (section == "programs")
        programs_section(programs);
      else
        return usage();
    }
    return 0;
  } catch (const std::exception& e) {
    std::fflush(stdout);
    std::fprintf(stderr, "bench_runtime_memory: error: %s\n", e.what());
    return 1;
  }
}
