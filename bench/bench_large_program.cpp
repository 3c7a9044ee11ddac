// Time to first result against program size, in fresh processes with both compilation caches
// off (WEFT_CACHE=0, POCL_KERNEL_CACHE=0), and the exit-time cache store of large programs.
//
// Sections (each measurement is one child process, spawned by this program in child mode):
//   kernel:  one fused kernel of N = 50 ... 8,000 elementwise ops, with the size limit lifted
//            (FusionOptions::max_kernel_ops = 0): code generation, clBuildProgram, and the first
//            run, which on PoCL includes compiling the kernel's work-group function. This curve
//            is the measurement behind kMaxKernelOps (core/include/weft/compile/fusion.h).
//   program: weft as users get it, N = 100 ... 50,000 ops: kernels, time to first result and
//            that time per op relative to the 100-op program measured in the same run.
//   store:   WEFT_CACHE=1 with an empty cache directory: the time from the result to the
//            child's exit, which is weft's cache writer reading CL_PROGRAM_BINARIES (PoCL
//            compiles a generic work-group function of every kernel while serialising them).
//
// Programs: f32[4096] -> f32[4096] chains (4096 is a multiple of the loop kernels' 256-wide
// work-groups, so each kernel is one launch without a tail variant):
//   neg:   -x repeated N times (the program that exposed the recursion; LLVM folds pairs of
//   negations); mixed: x*0.999, +0.25, neg, abs repeated: cheap ops that the compiler cannot fold
//   away; sin:   sin repeated (not in the default run): math-library calls, 16-wide vector bodies.
//          Unsplit, ~500 of them overflow the stack of PoCL's worker threads (kMaxKernelOps).
// Every child checks its result against the reference interpreter (untimed, after the result).
//
//   bench_large_program [--repeats N] [--sections kernel,program,store] [--kinds neg,mixed]
//                       [--kernel-ops LIST] [--program-ops LIST] [--store-ops LIST]
//                       [--elements N]   (default 4096; below 4096 f32 math calls stay scalar)
//   bench_large_program --child SECTION KIND OPS ELEMENTS   (internal: one measured process)
#include <fcntl.h>
#include <spawn.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "common.h"
#include "report.h"
#include "weft/compile/fusion.h"
#include "weft/interp/interpreter.h"
#include "weft/opencl/codegen.h"
#include "weft/opencl/executable.h"
#include "weft/weft.h"

extern char** environ;

namespace {

using weft::bench::load_average;
using weft::bench::median;
using weft::bench::milliseconds;
using weft::bench::ms;
using weft::bench::print_table;
using weft::bench::read_file;

using Clock = std::chrono::steady_clock;
using weft::Array;
using weft::HostArray;
namespace np = weft::np;
namespace fs = std::filesystem;

// Array length: a multiple of the loop kernels' 256-wide work-groups (one launch per kernel, no
// tail variant) and long enough for 16-wide vector bodies, which f32 math calls get.
constexpr std::int64_t kDefaultElements = 4096;
std::int64_t g_elements = kDefaultElements;  // --elements
constexpr int kDefaultRepeats = 3;
constexpr int kReferenceOps = 100;  // the program section's per-op ratios are against this
// Time per op of the largest program against the 100-op one: "about linear" means at most this.
constexpr double kGoalPerOpRatio = 1.5;

std::vector<int> parse_ints(const std::string& list) {
  std::vector<int> out;
  std::istringstream in(list);
  for (std::string item; std::getline(in, item, ',');)
    if (!item.empty()) out.push_back(std::stoi(item));
  return out;
}

std::vector<std::string> parse_names(const std::string& list) {
  std::vector<std::string> out;
  std::istringstream in(list);
  for (std::string item; std::getline(in, item, ',');)
    if (!item.empty()) out.push_back(item);
  return out;
}

// ---------------------------------------------------------------------------------------------
// Child: one program, one first result, in a fresh process.

Array chain(const Array& x, const std::string& kind, int ops) {
  Array t = x;
  for (int i = 0; i < ops; ++i) {
    if (kind == "neg") {
      t = -t;
      continue;
    }
    if (kind == "sin") {
      t = np::sin(t);
      continue;
    }
    switch (i % 4) {
      case 0:
        t = t * 0.999f;
        break;
      case 1:
        t = t + 0.25f;
        break;
      case 2:
        t = -t;
        break;
      default:
        t = np::abs(t);
        break;
    }
  }
  return t;
}

HostArray input() {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  HostArray a(weft::DType::F32, {g_elements});
  for (float& v : a.view<float>()) v = uniform(rng);
  return a;
}

// Empty when `actual` matches the interpreter's result for `graph`.
std::string check(const weft::Graph& graph, const HostArray& in, const HostArray& actual) {
  const HostArray expected = weft::interpret(graph, std::vector<HostArray>{in}).at(0);
  for (std::int64_t i = 0; i < expected.size(); ++i) {
    const double a = actual.get_f64(i), e = expected.get_f64(i);
    if (!(std::fabs(a - e) <= 1e-5 + 1e-4 * std::fabs(e)))
      return "element " + std::to_string(i) + " is " + std::to_string(a) +
             ", the interpreter says " + std::to_string(e);
  }
  return {};
}

// kernel: one kernel of `ops` ops, enqueued by hand (PlanLaunches) so that nothing but PoCL's
// work happens between the build and the result.
int run_kernel_child(const std::string& kind, int ops) {
  const HostArray in = input();
  weft::opencl::OpenCLDevice& device = weft::bench::device();
  auto fn = weft::jit([&](const Array& x) { return chain(x, kind, ops); }, {.name = "chain"});
  const Array x = Array::from_host(in);
  const auto start = Clock::now();
  const weft::Graph graph = fn.lower(x).graph();
  const auto traced = Clock::now();
  weft::opencl::ProgramPlan plan =
      weft::opencl::plan_program(graph, device.caps(), {.max_kernel_ops = 0});
  const auto planned = Clock::now();
  auto exe = std::make_shared<weft::opencl::OpenCLExecutable>(device, std::move(plan));
  const auto built = Clock::now();
  const weft::opencl::ClMem in_mem = weft::bench::make_buffer(
      std::vector<float>(in.view<float>().begin(), in.view<float>().end()));
  weft::bench::PlanLaunches launches(exe, {in_mem.get()});
  launches.run();
  const std::vector<float> out =
      weft::bench::read_buffer(launches.output(0), static_cast<std::size_t>(g_elements));
  const auto done = Clock::now();
  HostArray actual(weft::DType::F32, {g_elements});
  std::copy(out.begin(), out.end(), actual.view<float>().begin());
  const std::string problem = check(graph, in, actual);
  std::printf(
      "@child kernels=%zu trace_ms=%.3f codegen_ms=%.3f build_ms=%.3f first_run_ms=%.3f "
      "total_ms=%.3f check=%s\n",
      exe->info().kernels.size(), milliseconds(traced - start), milliseconds(planned - traced),
      milliseconds(built - planned), milliseconds(done - built), milliseconds(done - start),
      problem.empty() ? "ok" : "MISMATCH");
  if (!problem.empty()) std::fprintf(stderr, "bench_large_program: %s\n", problem.c_str());
  return problem.empty() ? 0 : 1;
}

// program and store: the public API, jit and a call. `result_at_ns` tells the parent when the
// result reached the host, so that it can time the exit.
int run_program_child(const std::string& kind, int ops, bool verify) {
  const HostArray in = input();
  weft::default_device();
  auto fn = weft::jit([&](const Array& x) { return chain(x, kind, ops); }, {.name = "chain"});
  const Array x = Array::from_host(in);
  const auto start = Clock::now();
  const HostArray actual = fn(x).to_host();
  const auto done = Clock::now();
  const weft::Lowered lowered = fn.lower(x);
  const weft::CompiledInfo& info = lowered.compile()->info();
  std::string problem;
  if (verify) problem = check(lowered.graph(), in, actual);
  std::printf(
      "@child kernels=%zu compile_ms=%.3f total_ms=%.3f cache=%s result_at_ns=%lld check=%s\n",
      info.kernels.size(), info.compile_seconds() * 1e3, milliseconds(done - start),
      info.cache_status.empty() ? "none" : info.cache_status.c_str(),
      static_cast<long long>(
          std::chrono::duration_cast<std::chrono::nanoseconds>(done.time_since_epoch()).count()),
      problem.empty() ? "ok" : "MISMATCH");
  std::fflush(stdout);
  if (!problem.empty()) std::fprintf(stderr, "bench_large_program: %s\n", problem.c_str());
  return problem.empty() ? 0 : 1;  // returning lets weft's exit handler finish the cache write
}

// ---------------------------------------------------------------------------------------------
// Parent.

struct ChildReport {
  std::map<std::string, double> fields;
  double exit_ms = 0;  // from the child's result to its exit, measured here
  double operator[](const std::string& key) const { return fields.at(key); }
};

class Runner {
 public:
  Runner(fs::path exe, fs::path base) : exe_(std::move(exe)), base_(std::move(base)) {}

  ChildReport spawn(const std::string& section, const std::string& kind, int ops) {
    std::vector<std::string> env;
    for (char** e = environ; *e; ++e) {
      const std::string_view entry(*e);
      if (!entry.starts_with("WEFT_CACHE") && !entry.starts_with("POCL_KERNEL_CACHE=") &&
          !entry.starts_with("POCL_CACHE_DIR=") && !entry.starts_with("WEFT_TIERED="))
        env.emplace_back(entry);
    }
    // The kernels build before the first call: this measures how building scales with program
    // size (tiered execution would run these chains on the interpreter instead).
    env.push_back("WEFT_TIERED=0");
    const fs::path weft_dir = base_ / "weft-cache", pocl_dir = base_ / "pocl-cache";
    fs::remove_all(weft_dir);
    fs::remove_all(pocl_dir);
    env.push_back("POCL_KERNEL_CACHE=0");
    env.push_back("POCL_CACHE_DIR=" + pocl_dir.string());
    if (section == "store") {
      env.push_back("WEFT_CACHE=1");
      env.push_back("WEFT_CACHE_DIR=" + weft_dir.string());
    } else {
      env.push_back("WEFT_CACHE=0");
    }
    const fs::path out_path = base_ / "child.out", err_path = base_ / "child.err";
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, out_path.c_str(),
                                     O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, err_path.c_str(),
                                     O_WRONLY | O_CREAT | O_TRUNC, 0644);
    std::vector<std::string> args = {
        exe_.string(), "--child", section, kind, std::to_string(ops), std::to_string(g_elements)};
    std::vector<char*> argv, envp;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    for (std::string& e : env) envp.push_back(e.data());
    envp.push_back(nullptr);
    pid_t pid = 0;
    const std::string what = section + " " + kind + " " + std::to_string(ops) + " ops";
    const int error = posix_spawn(&pid, exe_.c_str(), &actions, nullptr, argv.data(), envp.data());
    posix_spawn_file_actions_destroy(&actions);
    if (error) throw std::runtime_error(what + ": posix_spawn: " + std::strerror(error));
    int status = 0;
    if (waitpid(pid, &status, 0) != pid) throw std::runtime_error(what + ": waitpid failed");
    const auto exited = Clock::now();
    const std::string out = read_file(out_path), err = read_file(err_path);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || out.find("@child ") == std::string::npos)
      throw std::runtime_error(what + ": the child failed (wait status " + std::to_string(status) +
                               ")\n  stdout: " + out +
                               "\n  stderr (start): " + err.substr(0, 2000));
    ChildReport report;
    const std::size_t line = out.find("@child ");
    std::istringstream fields(out.substr(line + 7, out.find('\n', line) - line - 7));
    for (std::string field; fields >> field;) {
      const std::size_t eq = field.find('=');
      if (eq == std::string::npos) continue;
      const std::string key = field.substr(0, eq), value = field.substr(eq + 1);
      if (key == "check" && value != "ok")
        throw std::runtime_error(what + ": the result differs from the interpreter's");
      if (key == "cache" && section == "store" && value != "miss")
        throw std::runtime_error(what + ": cache status " + value + ", expected miss");
      if (key == "check" || key == "cache") continue;
      report.fields[key] = std::stod(value);
    }
    if (report.fields.contains("result_at_ns"))
      report.exit_ms = milliseconds(
          exited.time_since_epoch() -
          std::chrono::nanoseconds(static_cast<long long>(report.fields.at("result_at_ns"))));
    // A child that printed warnings (e.g. an OpenCL compiler's) is reported, not hidden.
    if (!err.empty())
      std::printf("  (%s wrote %zu bytes to stderr, starting: %s)\n", what.c_str(), err.size(),
                  err.substr(0, err.find('\n')).c_str());
    return report;
  }

 private:
  fs::path exe_, base_;
};

// Reports of each (kind, ops), measured round-robin over the sizes, `repeats` rounds.
using Measurements = std::map<std::pair<std::string, int>, std::vector<ChildReport>>;

Measurements measure(Runner& runner, const std::string& section,
                     const std::vector<std::string>& kinds, const std::vector<int>& sizes,
                     int repeats) {
  Measurements m;
  for (int round = 0; round < repeats; ++round)
    for (const std::string& kind : kinds)
      for (int ops : sizes) {
        const auto start = Clock::now();
        m[{kind, ops}].push_back(runner.spawn(section, kind, ops));
        std::printf("  %s %s %d ops, round %d: %.1f s\n", section.c_str(), kind.c_str(), ops,
                    round + 1, milliseconds(Clock::now() - start) / 1e3);
        std::fflush(stdout);
      }
  return m;
}

double median_of(const std::vector<ChildReport>& reports, const std::string& key) {
  std::vector<double> v;
  for (const ChildReport& r : reports) v.push_back(key == "exit" ? r.exit_ms : r[key]);
  return median(v);
}

struct Settings {
  int repeats = kDefaultRepeats;
  std::vector<std::string> sections = {"kernel", "program", "store"};
  std::vector<std::string> kinds = {"neg", "mixed"};
  std::vector<int> kernel_ops = {50, 100, 200, 500, 1000, 2000, 4000, 8000};
  std::vector<int> program_ops = {100, 200, 500, 1000, 2000, 5000, 10000, 20000, 50000};
  std::vector<int> store_ops = {2000, 50000};
};

int run_parent(const Settings& s) {
  std::string pattern = (fs::temp_directory_path() / "weft-bench-large-XXXXXX").string();
  if (!::mkdtemp(pattern.data())) throw std::runtime_error("mkdtemp failed");
  struct RemoveAtExit {
    fs::path path;
    ~RemoveAtExit() {
      std::error_code ignored;
      fs::remove_all(path, ignored);
    }
  } remove_base{pattern};
  Runner runner(fs::read_symlink("/proc/self/exe"), pattern);
  auto has = [&](const char* section) {
    return std::find(s.sections.begin(), s.sections.end(), section) != s.sections.end();
  };
  std::printf(
      "weft large programs: fresh processes, WEFT_CACHE=0 and POCL_KERNEL_CACHE=0 unless "
      "stated, f32[%lld] chains, median of %d\nload before: %s on %u CPUs\n",
      static_cast<long long>(g_elements), s.repeats, load_average().c_str(),
      std::thread::hardware_concurrency());
  std::vector<weft::bench::SummaryRow> summary;
  std::vector<std::string> tables;

  if (has("kernel")) {
    const Measurements m = measure(runner, "kernel", s.kinds, s.kernel_ops, s.repeats);
    std::vector<std::vector<std::string>> rows;
    for (const std::string& kind : s.kinds) {
      const double base =
          median_of(m.at({kind, s.kernel_ops.front()}), "total_ms") / s.kernel_ops.front();
      double previous_ops = 0, previous_run = 0;
      for (int ops : s.kernel_ops) {
        const auto& r = m.at({kind, ops});
        const double total = median_of(r, "total_ms"), run = median_of(r, "first_run_ms");
        // What each op added to the first run since the previous size: flat while linear.
        const std::string marginal =
            previous_ops > 0
                ? weft::bench::format((run - previous_run) / (ops - previous_ops) * 1e3, 0) + " us"
                : "";
        previous_ops = ops;
        previous_run = run;
        rows.push_back({kind, std::to_string(ops), ms(median_of(r, "codegen_ms")),
                        ms(median_of(r, "build_ms")), ms(run), marginal, ms(total),
                        weft::bench::format(total / ops, 2) + " ms",
                        weft::bench::format(total / ops / base, 2) + "x"});
      }
    }
    std::printf(
        "\nOne kernel of N ops, size limit lifted (medians; first run = launch to result "
        "on the host, PoCL compiles the work-group function here; marginal = first-run time "
        "added per op since the row above)\n");
    print_table({"chain", "ops in the kernel", "codegen", "clBuildProgram", "first run",
                 "marginal per op", "total", "per op", "per op vs first row"},
                rows);
  }

  if (has("program")) {
    const Measurements m = measure(runner, "program", s.kinds, s.program_ops, s.repeats);
    std::vector<std::vector<std::string>> rows;
    for (const std::string& kind : s.kinds) {
      const int ref_ops = std::find(s.program_ops.begin(), s.program_ops.end(), kReferenceOps) !=
                                  s.program_ops.end()
                              ? kReferenceOps
                              : s.program_ops.front();
      const double ref = median_of(m.at({kind, ref_ops}), "total_ms") / ref_ops;
      double worst = 0;
      int worst_ops = ref_ops;
      double previous_ops = 0, previous_total = 0;
      for (int ops : s.program_ops) {
        const auto& r = m.at({kind, ops});
        const double total = median_of(r, "total_ms");
        const double ratio = total / ops / ref;
        if (ratio > worst) {
          worst = ratio;
          worst_ops = ops;
        }
        const std::string marginal =
            previous_ops > 0
                ? weft::bench::format((total - previous_total) / (ops - previous_ops) * 1e3, 0) +
                      " us"
                : "";
        previous_ops = ops;
        previous_total = total;
        rows.push_back({kind, std::to_string(ops), weft::bench::format(median_of(r, "kernels"), 0),
                        ms(median_of(r, "compile_ms")), ms(total),
                        weft::bench::format(total / ops * 1e3, 1) + " us", marginal,
                        weft::bench::format(ratio, 2) + "x"});
      }
      const int largest = s.program_ops.back();
      const double largest_ratio = median_of(m.at({kind, largest}), "total_ms") / largest / ref;
      summary.push_back(
          {"first result " + kind + " chain, " + std::to_string(largest) + " ops",
           weft::bench::format(median_of(m.at({kind, largest}), "total_ms") / largest * 1e3, 1) +
               " us/op",
           weft::bench::format(ref * 1e3, 1) + " us/op (" + std::to_string(ref_ops) + " ops)",
           weft::bench::format(largest_ratio, 2) + "x (worst " + weft::bench::format(worst, 2) +
               "x at " + std::to_string(worst_ops) + ")",
           "<= " + weft::bench::format(kGoalPerOpRatio, 1) + "x",
           weft::bench::met(worst <= kGoalPerOpRatio)});
    }
    std::printf(
        "\nTime to first result, weft's planning (medians; compile = "
        "CompiledInfo::compile_seconds(), total = trace + compile + first run + copy "
        "back; marginal = time added per op since the row above; per op vs the %d-op "
        "program)\n",
        kReferenceOps);
    print_table({"chain", "ops", "kernels", "compile", "first result", "per op", "marginal per op",
                 "per op vs 100"},
                rows);
  }

  if (has("store")) {
    const Measurements m = measure(runner, "store", s.kinds, s.store_ops, s.repeats);
    std::vector<std::vector<std::string>> rows;
    for (const std::string& kind : s.kinds)
      for (int ops : s.store_ops) {
        const auto& r = m.at({kind, ops});
        rows.push_back({kind, std::to_string(ops), weft::bench::format(median_of(r, "kernels"), 0),
                        ms(median_of(r, "total_ms")), ms(median_of(r, "exit"))});
      }
    std::printf(
        "\nExit-time cache store, WEFT_CACHE=1 with an empty cache (medians; exit = the "
        "result on the host to the process's exit)\n");
    print_table({"chain", "ops", "kernels", "first result", "result to exit"}, rows);
  }
  std::printf("load after: %s\n", load_average().c_str());
  if (!summary.empty()) weft::bench::print_summary(summary);
  return 0;
}

int usage() {
  std::fprintf(
      stderr,
      "usage: bench_large_program [--repeats N] [--sections kernel,program,store] "
      "[--kinds neg,mixed,sin] [--kernel-ops LIST] [--program-ops LIST] [--store-ops LIST] "
      "[--elements N]\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    if (argc == 6 && std::string(argv[1]) == "--child") {
      const std::string section = argv[2], kind = argv[3];
      const int ops = std::stoi(argv[4]);
      g_elements = std::stoll(argv[5]);
      if (section == "kernel") return run_kernel_child(kind, ops);
      return run_program_child(kind, ops, section == "program");
    }
    Settings s;
    for (int i = 1; i < argc; i += 2) {
      const std::string arg = argv[i];
      if (i + 1 >= argc) return usage();
      const std::string value = argv[i + 1];
      if (arg == "--repeats") {
        s.repeats = std::max(1, std::stoi(value));
      } else if (arg == "--sections") {
        s.sections = parse_names(value);
      } else if (arg == "--kinds") {
        s.kinds = parse_names(value);
      } else if (arg == "--kernel-ops") {
        s.kernel_ops = parse_ints(value);
      } else if (arg == "--program-ops") {
        s.program_ops = parse_ints(value);
      } else if (arg == "--store-ops") {
        s.store_ops = parse_ints(value);
      } else if (arg == "--elements") {
        g_elements = std::max<std::int64_t>(1, std::stoll(value));
      } else {
        return usage();
      }
    }
    return run_parent(s);
  } catch (const std::exception& e) {
    std::fflush(stdout);
    std::fprintf(stderr, "bench_large_program: error: %s\n", e.what());
    return 1;
  }
}
