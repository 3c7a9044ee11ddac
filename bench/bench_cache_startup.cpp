// Time to first result of a fresh process, with and without the persistent compilation cache.
//
// For each program (the demo's select_tril, row softmax and MLP, and an attention block of at
// least 8 fused kernels) the parent spawns fresh child processes in these configurations:
//   (a) cold:       an empty weft cache directory, POCL_KERNEL_CACHE=0;
//   (b) PoCL warm:  WEFT_CACHE=0, PoCL's kernel cache in a private directory warmed by one
//                   earlier child;
//   (c) weft warm:  a private weft cache directory warmed by one earlier child,
//                   POCL_KERNEL_CACHE=0 and an empty POCL_CACHE_DIR;
//   (c') for information: as (c), but with PoCL's directory kept from an earlier (c') child.
// With its cache off PoCL still unpacks a program binary into POCL_CACHE_DIR (under a name the
// binary carries), writing and fdatasync'ing one file per kernel variant, and leaves the files
// there; a later process loading the same binary finds them and skips the writes. (c) gives
// every child an empty directory, so that only weft's cache is warm; (c') is what a user's
// repeated runs on one machine see.
//
// Each child builds its program with the public API, runs it once, fetches the result to the
// host, and only then checks it against the reference interpreter. The figure is the time from
// the parent's spawn call to the result being on the host (steady_clock is CLOCK_MONOTONIC on
// Linux, one clock for all processes), so it includes loading the executable and its shared
// libraries; the time from the top of the child's main and the child's whole wall time (exit
// included, and with it a cold child's cache write) are shown too. The configurations run
// round-robin, one child each per round, so that load from other processes falls on all alike.
//
// Goals (from the cache's issue): (c) at least 30x faster than (a), and at most 0.5x (b).
// A child that reports the wrong cache status ((a) must miss, (b) be off, (c) and (c') hit) or
// a wrong result stops the benchmark with exit status 1: a broken cache never yields a figure.
//
//   bench_cache_startup [--repeats N] [--programs select_tril,softmax,mlp,attention]
//   bench_cache_startup --child PROGRAM --spawned-at NS   (internal: one measured process)
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
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "common.h"
#include "report.h"
#include "weft/interp/interpreter.h"
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

constexpr int kDefaultRepeats = 5;
constexpr int kMinAttentionKernels = 8;
constexpr double kGoalColdOverWarm = 30.0;  // (a)/(c) at least this
constexpr double kGoalWeftOverPocl = 0.5;   // (c)/(b) at most this

// ---------------------------------------------------------------------------------------------
// Child: one program, one run, in a fresh process.

// Uniform in [-scale, scale], seeded per array so every child computes on the same data.
HostArray random_f32(const weft::Shape& shape, unsigned seed, double scale = 1.0) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  HostArray a(weft::DType::F32, shape);
  for (float& v : a.view<float>()) v = static_cast<float>(uniform(rng) * scale);
  return a;
}

// Weights scaled by 1/sqrt(fan_in) keep activations O(1) through the layers, as in the demo.
HostArray weights(const weft::Shape& shape, std::int64_t fan_in, unsigned seed) {
  return random_f32(shape, seed, 1.0 / std::sqrt(static_cast<double>(fan_in)));
}

struct ChildOutcome {
  Clock::time_point device_ready;  // default_device() returned: the driver is initialised
  Clock::time_point result_ready;  // the result is on the host: the end of the timed region
  HostArray result;
  weft::CompiledInfo info;
  weft::Graph graph;  // what ran, for the reference interpreter
  std::vector<HostArray> inputs;
};

// Uploads `inputs`, calls `fn` once, fetches the result, and only then (untimed) lowers the
// call again for its graph and its executable's facts (the device returns the executable it
// already built, not a new one).
template <typename Jitted, std::size_t... I>
ChildOutcome run_once(const Jitted& fn, std::vector<HostArray> inputs, std::index_sequence<I...>) {
  ChildOutcome out;
  weft::Device& device = weft::default_device();
  out.device_ready = Clock::now();
  std::vector<Array> args;
  for (const HostArray& h : inputs) args.push_back(Array::from_host(h, &device));
  out.result = fn(args[I]...).to_host();
  out.result_ready = Clock::now();
  const weft::Lowered lowered = fn.lower(args[I]...);
  if (!lowered.captured().empty())
    throw std::runtime_error("the program closed over arrays; the check would miss them");
  out.info = lowered.compile()->info();
  out.graph = lowered.graph();
  out.inputs = std::move(inputs);
  return out;
}

// The programs of `weft demo` (cli/src/demo_command.cpp, full size) and one more.
ChildOutcome run_select_tril() {
  auto select_tril = weft::jit(
      [](const Array& x) {
        auto mask = np::arange(x.shape()[0]).reshape({-1, 1}) > np::arange(x.shape()[1]);
        return np::where(mask, x, np::zeros_like(x));
      },
      {.name = "select_tril"});
  std::vector<int> values(12);
  for (int i = 0; i < 12; ++i) values[static_cast<std::size_t>(i)] = i + 1;
  return run_once(select_tril, {HostArray::from<int>({3, 4}, values)},
                  std::make_index_sequence<1>{});
}

ChildOutcome run_softmax() {
  auto softmax = weft::jit([](const Array& a) { return np::softmax(a, -1); }, {.name = "softmax"});
  return run_once(softmax, {random_f32({256, 1000}, 1)}, std::make_index_sequence<1>{});
}

ChildOutcome run_mlp() {
  auto mlp = weft::jit(
      [](const Array& in, const Array& w1, const Array& b1, const Array& w2, const Array& b2) {
        const Array h = np::relu(np::matmul(in, w1) + b1);
        return np::softmax(np::matmul(h, w2) + b2, -1);
      },
      {.name = "mlp"});
  return run_once(mlp,
                  {random_f32({64, 784}, 1), weights({784, 256}, 784, 2), weights({256}, 784, 3),
                   weights({256, 10}, 256, 4), weights({10}, 256, 5)},
                  std::make_index_sequence<5>{});
}

// A pre-norm single-head attention block with a residual: every reduction and every matmul is
// a kernel of its own (the planner fuses elementwise work into them, never them into each
// other), so this is one program of many kernels: layer norm (2 reductions and the normalized
// operand), 3 projections, scores, softmax (2 reductions and the normalized operand), the
// weighted sum, the output projection and the residual.
ChildOutcome run_attention() {
  auto attention = weft::jit(
      [](const Array& x, const Array& wq, const Array& wk, const Array& wv, const Array& wo) {
        const Array centered = x - np::mean(x, {-1}, true);
        const Array variance = np::mean(centered * centered, {-1}, true);
        const Array h = centered * np::rsqrt(variance + 1e-5);
        const Array q = np::matmul(h, wq), k = np::matmul(h, wk), v = np::matmul(h, wv);
        const Array scores = np::softmax(np::matmul(q, k.T()) * 0.125, -1);  // 1/sqrt(64)
        return x + np::matmul(np::matmul(scores, v), wo);
      },
      {.name = "attention"});
  return run_once(attention,
                  {random_f32({128, 64}, 1), weights({64, 64}, 64, 2), weights({64, 64}, 64, 3),
                   weights({64, 64}, 64, 4), weights({64, 64}, 64, 5)},
                  std::make_index_sequence<5>{});
}

const std::vector<std::string> kPrograms = {"select_tril", "softmax", "mlp", "attention"};

ChildOutcome run_program(const std::string& name) {
  if (name == "select_tril") return run_select_tril();
  if (name == "softmax") return run_softmax();
  if (name == "mlp") return run_mlp();
  if (name == "attention") return run_attention();
  throw std::runtime_error("unknown program \"" + name + "\"");
}

// The largest |actual - expected| over all elements, or a message when the result is wrong
// (floats: |a - e| <= 1e-5 + 1e-4 |e|; integers exactly).
std::string check_result(const HostArray& actual, const HostArray& expected, double* max_error) {
  if (actual.dtype() != expected.dtype() || actual.shape() != expected.shape())
    return "dtype or shape differs from the interpreter's";
  const bool exact = !weft::is_float(expected.dtype());
  *max_error = 0;
  for (std::int64_t i = 0; i < expected.size(); ++i) {
    const double a = actual.get_f64(i), e = expected.get_f64(i);
    const double error = std::fabs(a - e);
    *max_error = std::max(*max_error, error);
    if (!(exact ? a == e : error <= 1e-5 + 1e-4 * std::fabs(e)))
      return "element " + std::to_string(i) + " is " + std::to_string(a) +
             ", the interpreter says " + std::to_string(e);
  }
  return {};
}

// Prints one "@child key=value ..." line for the parent; returns the exit status.
int run_child(const std::string& program, Clock::time_point main_start,
              Clock::time_point spawned_at) {
  const ChildOutcome out = run_program(program);
  double max_error = 0;
  const std::string problem =
      check_result(out.result, weft::interpret(out.graph, out.inputs).at(0), &max_error);
  std::printf(
      "@child program=%s kernels=%zu cache=%s since_spawn_ms=%.3f since_main_ms=%.3f "
      "device_init_ms=%.3f compile_ms=%.3f max_error=%.3g check=%s\n",
      program.c_str(), out.info.kernels.size(),
      out.info.cache_status.empty() ? "none" : out.info.cache_status.c_str(),
      milliseconds(out.result_ready - spawned_at), milliseconds(out.result_ready - main_start),
      milliseconds(out.device_ready - main_start), out.info.compile_seconds() * 1e3, max_error,
      problem.empty() ? "ok" : "MISMATCH");
  if (!problem.empty()) {
    std::fprintf(stderr, "bench_cache_startup: %s: %s\n", program.c_str(), problem.c_str());
    return 1;
  }
  return 0;  // returning lets weft's exit handler finish a pending cache write
}

// ---------------------------------------------------------------------------------------------
// Parent: spawns the children and reports.

enum class Config { Cold, PoclWarm, WeftWarm, WeftWarmPoclKept };
constexpr Config kConfigs[] = {Config::Cold, Config::PoclWarm, Config::WeftWarm,
                               Config::WeftWarmPoclKept};

const char* config_label(Config c) {
  switch (c) {
    case Config::Cold:
      return "(a) cold";
    case Config::PoclWarm:
      return "(b) PoCL cache warm";
    case Config::WeftWarm:
      return "(c) weft cache warm";
    case Config::WeftWarmPoclKept:
      return "(c') weft warm, PoCL dir kept";
  }
  return "?";
}

// The cache status each configuration's child must report, warm-up children included.
const char* expected_status(Config c, bool warmup) {
  switch (c) {
    case Config::Cold:
      return "miss";
    case Config::PoclWarm:
      return "off";
    case Config::WeftWarm:
      return warmup ? "miss" : "hit";
    case Config::WeftWarmPoclKept:
      return "hit";
  }
  return "?";
}

struct ChildReport {
  std::map<std::string, std::string> fields;  // from the child's "@child" line
  double wall_ms = 0;                         // spawn to exit, measured by the parent
  double field(const std::string& key) const { return std::stod(fields.at(key)); }
};

// Every variable of this process except those that steer either cache, which the
// configurations set themselves. Tiered execution is off: it would run these small programs'
// first calls on the interpreter and never build them (nothing to store or to load), and this
// benchmark measures the caches (bench/cold_start.sh measures time to first result with it).
std::vector<std::string> base_environment() {
  std::vector<std::string> env;
  for (char** e = environ; *e; ++e) {
    const std::string_view entry(*e);
    if (entry.starts_with("WEFT_CACHE") || entry.starts_with("POCL_KERNEL_CACHE=") ||
        entry.starts_with("POCL_CACHE_DIR=") || entry.starts_with("WEFT_TIERED="))
      continue;
    env.emplace_back(entry);
  }
  env.emplace_back("WEFT_TIERED=0");
  return env;
}

// The last `count` lines of `text`, for error messages.
std::string tail(const std::string& text, std::size_t count) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  std::string out;
  for (std::size_t i = lines.size() > count ? lines.size() - count : 0; i < lines.size(); ++i)
    out += "\n    " + lines[i];
  return out.empty() ? " (empty)" : out;
}

class Runner {
 public:
  Runner(fs::path exe, fs::path base) : exe_(std::move(exe)), base_(std::move(base)) {}

  // Runs one child of `program` in configuration `config`. `weft_dir` and `pocl_dir` are the
  // cache directories it is given; `what` names it in errors.
  ChildReport spawn(const std::string& program, Config config, bool warmup,
                    const fs::path& weft_dir, const fs::path& pocl_dir, const std::string& what) {
    std::vector<std::string> env = base_environment();
    env.push_back("POCL_CACHE_DIR=" + pocl_dir.string());
    if (config == Config::PoclWarm) {
      env.push_back("WEFT_CACHE=0");
      env.push_back("POCL_KERNEL_CACHE=1");
    } else {
      env.push_back("WEFT_CACHE=1");
      env.push_back("WEFT_CACHE_DIR=" + weft_dir.string());
      env.push_back("POCL_KERNEL_CACHE=0");
    }
    const fs::path out_path = base_ / "child.out", err_path = base_ / "child.err";

    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, out_path.c_str(),
                                     O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, err_path.c_str(),
                                     O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const auto spawned_at = Clock::now();
    const std::string spawned_ns = std::to_string(
        std::chrono::duration_cast<std::chrono::nanoseconds>(spawned_at.time_since_epoch())
            .count());
    std::vector<std::string> args = {exe_.string(), "--child", program, "--spawned-at", spawned_ns};
    std::vector<char*> argv, envp;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    for (std::string& e : env) envp.push_back(e.data());
    envp.push_back(nullptr);
    pid_t pid = 0;
    const int error = posix_spawn(&pid, exe_.c_str(), &actions, nullptr, argv.data(), envp.data());
    posix_spawn_file_actions_destroy(&actions);
    if (error) throw std::runtime_error(what + ": posix_spawn: " + std::strerror(error));
    int status = 0;
    if (waitpid(pid, &status, 0) != pid) throw std::runtime_error(what + ": waitpid failed");
    ChildReport report;
    report.wall_ms = milliseconds(Clock::now() - spawned_at);

    const std::string out = read_file(out_path), err = read_file(err_path);
    auto fail = [&](const std::string& why) {
      return std::runtime_error(what + ": " + why + "\n  child's stdout:" + tail(out, 5) +
                                "\n  child's stderr (end):" + tail(err, 20));
    };
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
      throw fail("the child failed (wait status " + std::to_string(status) + ")");
    const std::size_t line = out.find("@child ");
    if (line == std::string::npos) throw fail("the child printed no @child line");
    std::istringstream fields(out.substr(line + 7, out.find('\n', line) - line - 7));
    for (std::string field; fields >> field;)
      if (const std::size_t eq = field.find('='); eq != std::string::npos)
        report.fields[field.substr(0, eq)] = field.substr(eq + 1);
    // The sanity checks that keep a broken cache from producing a figure.
    const std::string status_expected = expected_status(config, warmup);
    if (report.fields["cache"] != status_expected)
      throw fail("cache status \"" + report.fields["cache"] + "\", expected \"" + status_expected +
                 "\"");
    if (report.fields["check"] != "ok") throw fail("the result differs from the interpreter's");
    if (program == "attention" && report.field("kernels") < kMinAttentionKernels)
      throw fail("attention fused into " + report.fields["kernels"] + " kernels, fewer than " +
                 std::to_string(kMinAttentionKernels));
    return report;
  }

 private:
  fs::path exe_, base_;
};

struct ConfigSamples {
  std::vector<ChildReport> reports;
  std::vector<double> values(const std::string& key) const {
    std::vector<double> out;
    for (const ChildReport& r : reports) out.push_back(key == "wall" ? r.wall_ms : r.field(key));
    return out;
  }
  double median_of(const std::string& key) const { return median(values(key)); }
};

struct ProgramResult {
  std::string name;
  int kernels = 0;
  std::map<Config, ConfigSamples> samples;
};

// Warms (b)'s PoCL cache, (c)'s weft cache and (c')'s PoCL directory with one child each, then
// runs `repeats` rounds of every configuration. Children of (a) and (c) get a fresh, empty
// POCL_CACHE_DIR each (see the top of the file).
ProgramResult measure(Runner& runner, const std::string& program, const fs::path& dir,
                      int repeats) {
  fs::create_directories(dir);
  const fs::path pocl_warm = dir / "pocl-warm", weft_warm = dir / "weft-warm";
  const fs::path pocl_scratch = dir / "pocl-scratch", pocl_kept = dir / "pocl-kept";
  const fs::path cold_weft = dir / "weft-cold";
  auto fresh = [](const fs::path& path) {
    fs::remove_all(path);
    return path;
  };
  runner.spawn(program, Config::PoclWarm, true, {}, pocl_warm, program + " warming (b)");
  runner.spawn(program, Config::WeftWarm, true, weft_warm, fresh(pocl_scratch),
               program + " warming (c)");
  runner.spawn(program, Config::WeftWarmPoclKept, true, weft_warm, pocl_kept,
               program + " warming (c')");

  ProgramResult result{program, 0, {}};
  for (int round = 0; round < repeats; ++round) {
    for (Config config : kConfigs) {
      const std::string what =
          program + " " + config_label(config) + " round " + std::to_string(round + 1);
      ChildReport report;
      if (config == Config::Cold)  // an empty weft cache every time: each cold child compiles
        report = runner.spawn(program, config, false, fresh(cold_weft), fresh(pocl_scratch), what);
      else if (config == Config::PoclWarm)
        report = runner.spawn(program, config, false, {}, pocl_warm, what);
      else if (config == Config::WeftWarm)
        report = runner.spawn(program, config, false, weft_warm, fresh(pocl_scratch), what);
      else
        report = runner.spawn(program, config, false, weft_warm, pocl_kept, what);
      result.kernels = static_cast<int>(report.field("kernels"));
      result.samples[config].reports.push_back(std::move(report));
    }
  }
  fs::remove_all(dir);  // the caches of one program can take megabytes
  return result;
}

std::vector<std::string> split_list(const std::string& list) {
  std::vector<std::string> out;
  std::istringstream in(list);
  for (std::string item; std::getline(in, item, ',');)
    if (!item.empty()) out.push_back(item);
  return out;
}

int run_parent(int repeats, const std::vector<std::string>& programs) {
  const fs::path exe = fs::read_symlink("/proc/self/exe");
  std::string pattern = (fs::temp_directory_path() / "weft-bench-startup-XXXXXX").string();
  if (!::mkdtemp(pattern.data())) throw std::runtime_error("mkdtemp failed");
  const fs::path base = pattern;
  // The temporary caches go whatever happens.
  struct RemoveAtExit {
    fs::path path;
    ~RemoveAtExit() {
      std::error_code ignored;
      fs::remove_all(path, ignored);
    }
  } remove_base{base};

  std::printf(
      "weft cache startup: fresh processes, spawn to first result on the host, median of %d per "
      "configuration\n(a) empty weft cache, POCL_KERNEL_CACHE=0; (b) WEFT_CACHE=0, PoCL kernel "
      "cache warm; (c) weft cache warm, POCL_KERNEL_CACHE=0\nload before: %s on %u CPUs\n",
      repeats, load_average().c_str(), std::thread::hardware_concurrency());
  std::fflush(stdout);

  Runner runner(exe, base);
  std::vector<ProgramResult> results;
  for (const std::string& program : programs) {
    const auto start = Clock::now();
    results.push_back(measure(runner, program, base / program, repeats));
    std::printf("measured %s in %.1f s\n", program.c_str(),
                milliseconds(Clock::now() - start) / 1e3);
    std::fflush(stdout);
  }
  std::printf("load after: %s\n", load_average().c_str());

  std::printf(
      "\nPer configuration (medians; spawn = parent's spawn call to the result on the "
      "host; main = from the child's main; device init = default_device(); compile = "
      "CompiledInfo::compile_seconds(); wall = spawn to exit)\n");
  std::vector<std::vector<std::string>> detail;
  for (const ProgramResult& r : results)
    for (Config config : kConfigs) {
      const ConfigSamples& s = r.samples.at(config);
      const std::vector<double> spawn = s.values("since_spawn_ms");
      detail.push_back({r.name, config_label(config), ms(median(spawn)),
                        ms(*std::min_element(spawn.begin(), spawn.end())),
                        ms(*std::max_element(spawn.begin(), spawn.end())),
                        ms(s.median_of("since_main_ms")), ms(s.median_of("device_init_ms")),
                        ms(s.median_of("compile_ms")), ms(s.median_of("wall"))});
    }
  print_table(
      {"program", "configuration", "spawn", "min", "max", "main", "device init", "compile", "wall"},
      detail);

  std::printf("\nTime to first result (median spawn to result on the host)\n");
  std::vector<std::vector<std::string>> table;
  std::vector<weft::bench::SummaryRow> summary;
  bool all_met = true;
  for (const ProgramResult& r : results) {
    const double cold = r.samples.at(Config::Cold).median_of("since_spawn_ms");
    const double pocl = r.samples.at(Config::PoclWarm).median_of("since_spawn_ms");
    const double weft = r.samples.at(Config::WeftWarm).median_of("since_spawn_ms");
    const double kept = r.samples.at(Config::WeftWarmPoclKept).median_of("since_spawn_ms");
    const double speedup = cold / weft, versus_pocl = weft / pocl;
    const bool speedup_met = speedup >= kGoalColdOverWarm;
    const bool pocl_met = versus_pocl <= kGoalWeftOverPocl;
    all_met = all_met && speedup_met && pocl_met;
    table.push_back({r.name, std::to_string(r.kernels), ms(cold), ms(pocl), ms(weft),
                     weft::bench::format(speedup, 1) + "x", weft::bench::met(speedup_met),
                     weft::bench::format(versus_pocl, 2) + "x", weft::bench::met(pocl_met),
                     ms(kept), weft::bench::format(cold / kept, 1) + "x",
                     weft::bench::format(kept / pocl, 2) + "x"});
    const std::string label = "cache startup " + r.name + " (" + std::to_string(r.kernels) +
                              " kernel" + (r.kernels == 1 ? "" : "s") + ")";
    summary.push_back({label + ", (c) vs cold", ms(weft) + " (c)", ms(cold) + " (a) cold",
                       weft::bench::format(speedup, 1) + "x (a)/(c)", ">= 30x",
                       weft::bench::met(speedup_met)});
    summary.push_back({label + ", (c) vs PoCL", ms(weft) + " (c)", ms(pocl) + " (b) PoCL cache",
                       weft::bench::format(versus_pocl, 2) + "x (c)/(b)", "<= 0.5x",
                       weft::bench::met(pocl_met)});
    summary.push_back({label + ", (c') PoCL dir kept", ms(kept) + " (c')",
                       ms(pocl) + " (b) PoCL cache",
                       weft::bench::format(kept / pocl, 2) + "x (c')/(b)", "info", "n/a"});
  }
  print_table({"program", "kernels", "(a) cold", "(b) PoCL warm", "(c) weft warm", "(a)/(c)",
               ">= 30x", "(c)/(b)", "<= 0.5x", "(c') PoCL dir kept", "(a)/(c')", "(c')/(b)"},
              table);
  std::printf("goals (on (c)): %s\n", all_met ? "all met" : "NOT all met");
  weft::bench::print_summary(summary);
  return 0;  // a missed goal is reported, not a failure (as bench/run_all.sh expects)
}

int usage() {
  std::fprintf(stderr,
               "usage: bench_cache_startup [--repeats N] [--programs LIST]\n"
               "  LIST: comma-separated, from select_tril,softmax,mlp,attention (default all)\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  const Clock::time_point main_start = Clock::now();  // first thing: the child's timer
  std::string child;
  Clock::time_point spawned_at = main_start;
  int repeats = kDefaultRepeats;
  std::vector<std::string> programs = kPrograms;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (i + 1 >= argc) return usage();
    const std::string value = argv[++i];
    if (arg == "--child") {
      child = value;
    } else if (arg == "--spawned-at") {
      spawned_at = Clock::time_point(
          std::chrono::duration_cast<Clock::duration>(std::chrono::nanoseconds(std::stoll(value))));
    } else if (arg == "--repeats") {
      repeats = std::atoi(value.c_str());
      if (repeats < 1) return usage();
    } else if (arg == "--programs") {
      programs = split_list(value);
      for (const std::string& p : programs)
        if (std::find(kPrograms.begin(), kPrograms.end(), p) == kPrograms.end()) return usage();
    } else {
      return usage();
    }
  }
  try {
    if (!child.empty()) return run_child(child, main_start, spawned_at);
    return run_parent(repeats, programs);
  } catch (const std::exception& e) {
    std::fflush(stdout);
    std::fprintf(stderr, "bench_cache_startup: error: %s\n", e.what());
    return 1;
  }
}
