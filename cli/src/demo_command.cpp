// `weft demo`: the headless tour. Traces, compiles and runs three functions through the C++
// API on one device (JAX's omnistaging example select_tril, a row softmax and a small MLP), shows
// what they fused into, times the first call against steady state, checks each against the
// reference interpreter, and compares jit with eager op-by-op dispatch; then a loop with ordered
// prints and a host callback, whose printed lines must equal the interpreter's.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <sstream>
#include <vector>

#include "commands.h"
#include "compare.h"
#include "format.h"
#include "numeric_flags.h"
#include "random_inputs.h"
#include "weft/cache/process_cache.h"
#include "weft/interp/interpreter.h"
#include "weft/opencl/executable.h"
#include "weft/opencl/tiering.h"
#include "weft/telemetry/telemetry.h"
#include "weft/weft.h"

namespace weft::cli {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

constexpr int kWarmupCalls = 2;

struct Sizes {
  std::int64_t softmax_rows, softmax_cols;
  std::int64_t batch, in, hidden, classes;
  int repeats;
};

// The median wall time of `repeats` calls of `call`, each waited for: the per-call cost once
// every cache is warm.
template <typename Call>
double median_seconds(int repeats, const Call& call) {
  std::vector<double> times;
  for (int i = 0; i < repeats; ++i) {
    const auto start = Clock::now();
    call().block_until_ready();
    times.push_back(seconds_since(start));
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

struct Section {
  std::string name;
  std::string what;
  CompiledInfo info;
  double first = 0;                     // trace + compile + run + wait, from a cold jit cache
  std::string first_ran_on = "device";  // the interpreter, while the kernels build (tiering)
  double steady = 0;                    // median per call after warm-up, on the kernels
  Comparison check;
};

// Runs one jitted call cold (on the interpreter when tiered execution runs it there while the
// kernels build), then on the kernels, warm, and compares the kernels' result with the
// interpreter run on the traced graph. `call` invokes the jitted function; `lower` traces it
// without running.
template <typename Call, typename Lower>
Section measure(std::string name, std::string what, const Call& call, const Lower& lower,
                const std::vector<HostArray>& host_inputs, int repeats) {
  Section s{std::move(name), std::move(what), {}, 0, "device", 0, {}};
  auto start = Clock::now();
  call().block_until_ready();
  s.first = seconds_since(start);
  const Lowered lowered = lower();
  const std::shared_ptr<Executable> exe = lowered.compile();  // the cached one, not a rebuild
  if (auto* kernels = dynamic_cast<opencl::OpenCLExecutable*>(exe.get())) {
    s.first_ran_on = kernels->last_ran_on();
    kernels->build_now();
  }
  Array result = call();
  for (int i = 0; i < kWarmupCalls; ++i) call().block_until_ready();
  s.steady = median_seconds(repeats, call);
  s.info = exe->info();
  s.check = compare(result.to_host(), interpret(lowered.graph(), host_inputs).at(0));
  return s;
}

void print_section(const Section& s, int repeats) {
  std::cout << "  kernels: " << s.info.kernels.size() << " fused kernel"
            << (s.info.kernels.size() == 1 ? "" : "s") << ", " << s.info.intermediate_buffers
            << " intermediate buffer" << (s.info.intermediate_buffers == 1 ? "" : "s") << "\n"
            << kernel_table(s.info).render("    ");
  Table timing({"timing", "time"}, {Table::Align::Left, Table::Align::Right});
  timing.add_row(
      {"first call (trace + compile + run)",
       format_seconds(s.first) +
           (s.info.cache_status.empty() ? "" : " (persistent cache " + s.info.cache_status + ")") +
           (s.first_ran_on == "device" ? "" : ", ran on the " + s.first_ran_on)});
  timing.add_row(
      {"steady state (median of " + std::to_string(repeats) + " calls)", format_seconds(s.steady)});
  std::cout << "  timing:\n" << timing.render("    ", /*with_header=*/false);
  std::cout << "  check: max abs error " << format_error(s.check.max_abs_error)
            << " vs the reference interpreter: "
            << (s.check.ok() ? "ok" : "MISMATCH " + s.check.type_error + s.check.first_mismatch)
            << "\n";
}

std::string indent(const std::string& text, const std::string& prefix) {
  std::istringstream in(text);
  std::string out;
  for (std::string line; std::getline(in, line);) out += prefix + line + "\n";
  return out;
}

// Weights uniform in [-1, 1] / sqrt(fan_in), so activations stay O(1) through the layers.
HostArray weights(const Shape& shape, std::int64_t fan_in, std::uint64_t stream) {
  HostArray w = random_array(DType::F32, shape, /*seed=*/2024, stream);
  const double scale = 1.0 / std::sqrt(static_cast<double>(fan_in));
  for (std::int64_t i = 0; i < w.size(); ++i) w.set_f64(i, w.get_f64(i) * scale);
  return w;
}

// Runs five steps of gradient descent on sum((w - t)^2) with an ordered debug_print of the
// loss and an ordered io_callback that keeps the best loss on the host; shows the lowered IR
// (with its tokens) and the printed lines, and checks them against the reference interpreter
// running the same lowered program. Returns whether they agree.
bool effects_section(Device& dev) {
  float best = 1e30f;
  auto remember_best = [&best](const HostArray& loss) {
    best = std::min(best, static_cast<float>(loss.get_f64(0)));
  };
  auto descend = jit(
      [&](const Array& w0, const Array& target) {
        return lax::fori_loop(
            0, 5,
            [&](const Array& step, const Array& w) {
              const Array diff = w - target;
              const Array loss = np::sum(diff * diff);
              debug_print("step {} loss {}", step, loss, DebugPrintOptions{.ordered = true});
              io_callback(remember_best, Results({}), loss, CallbackOptions{.ordered = true});
              return w - 0.25 * diff;
            },
            w0);
      },
      {.name = "descend"});
  const HostArray w_host = HostArray::from<float>({4}, {1, -2, 3, 0.5f});
  const HostArray t_host = HostArray::from<float>({4}, {0, 0, 1, 1});
  const Array w = Array::from_host(w_host, &dev);
  const Array t = Array::from_host(t_host, &dev);
  const Lowered lowered = descend.lower(w, t);
  std::cout << "  lowered IR (tokens thread the ordered effects through the loop):\n"
            << indent(lowered.as_text(), "    ");

  std::ostringstream device_lines, reference_lines;
  set_debug_print_stream(&device_lines);
  const HostArray result = descend(w, t).to_host();
  effects_barrier();
  const float device_best = best;
  // The reference interpreter runs the same lowered program, tokens included.
  set_debug_print_stream(&reference_lines);
  best = 1e30f;
  std::vector<HostArray> inputs{w_host, t_host};
  for (std::size_t p = inputs.size(); p < lowered.graph().params.size(); ++p)
    inputs.emplace_back(DType::Token, Shape{});
  interpret(lowered.graph(), inputs);
  set_debug_print_stream(nullptr);
  std::cout << "  printed on " << dev.name() << ":\n"
            << indent(device_lines.str(), "    ")
            << "  best loss seen by the host callback: " << device_best
            << "\n  w after 5 steps: " << result.to_string() << "\n";
  const bool same = device_lines.str() == reference_lines.str() && best == device_best;
  std::cout << "  printed lines and callback "
            << (same ? "match the reference interpreter" : "DIFFER from the reference interpreter")
            << "\n";
  return same;
}

}  // namespace

CLI::App* add_demo_command(CLI::App& app, DemoOptions& options) {
  CLI::App* cmd = app.add_subcommand(
      "demo", "Trace, fuse, run and time select_tril, a row softmax and a small MLP.");
  cmd->add_option("-d,--device", options.device,
                  "Device to run on, e.g. cpu:1 (default: WEFT_DEVICE, else the first GPU, else "
                  "the first CPU).")
      ->type_name("NAME");
  cmd->add_option("--size", options.size,
                  "full: softmax over 256x1000, MLP batch 64 784->256->10; small: a quick run "
                  "with 32x100 and batch 8 64->32->10.")
      ->capture_default_str()
      ->check(CLI::IsMember({"full", "small"}));
  add_count_option(cmd, "--repeat", options.repeats, 1,
                   "Timed calls per steady-state median (at least 1; default: 20 full, 5 small).");
  return cmd;
}

int run_demo(const DemoOptions& options) {
  if (!options.device.empty()) set_default_device(options.device);
  Device& dev = default_device();
  const bool small = options.size == "small";
  Sizes z = small ? Sizes{32, 100, 8, 64, 32, 10, 5} : Sizes{256, 1000, 64, 784, 256, 10, 20};
  if (options.repeats > 0) z.repeats = options.repeats;

  std::cout << "weft demo on " << dev.name() << " (" << dev.description() << "), size "
            << options.size << ", " << z.repeats << " timed calls after " << kWarmupCalls
            << " warm-up calls\n";
  {
    // Say where compiled programs persist, so a second demo run's fast first calls make sense.
    const cache::CacheSettings cache_settings = cache::ProcessCache::instance().settings();
    if (cache_settings.enabled)
      std::cout << "persistent cache: " << cache::ProcessCache::instance().location()
                << " (a second run starts warm; `weft cache stats` shows its counters)\n";
    else
      std::cout << "persistent cache: off\n";
  }
  std::vector<Section> sections;
  std::vector<std::string> failures;

  // 1. select_tril, JAX's omnistaging example. np::arange inside the trace is staged (omnistaging):
  // the mask becomes iota and compare ops of the graph, fused with the select into one kernel.
  auto tril_fn = [](const Array& x) {
    auto mask = np::arange(x.shape()[0]).reshape({-1, 1}) > np::arange(x.shape()[1]);
    return np::where(mask, x, np::zeros_like(x));
  };
  auto select_tril = jit(tril_fn, {.name = "select_tril"});
  std::vector<int> values(12);
  for (int i = 0; i < 12; ++i) values[static_cast<std::size_t>(i)] = i + 1;
  const HostArray tril_host = HostArray::from<int>({3, 4}, values);
  const Array x = Array::from_host(tril_host, &dev);

  std::cout << "\n[1] select_tril: JAX's omnistaging example on i32[3,4]\n"
            << "  traced IR (np::arange ran inside the trace, so it is staged as iota ops):\n"
            << indent(select_tril.lower(x).as_text(), "    ");
  sections.push_back(measure(
      "select_tril", "i32[3,4]", [&] { return select_tril(x); },
      [&] { return select_tril.lower(x); }, {tril_host}, z.repeats));
  print_section(sections.back(), z.repeats);
  const std::size_t tril_kernels = sections.back().info.kernels.size();
  std::cout << "  check: fused into exactly one kernel: "
            << (tril_kernels == 1 ? "ok" : "FAILED (" + std::to_string(tril_kernels) + ")") << "\n";
  if (tril_kernels != 1)
    failures.push_back("select_tril fused into " + std::to_string(tril_kernels) +
                       " kernels instead of 1");
  std::cout << "  x      = " << tril_host.to_string() << "\n"
            << "  result = " << select_tril(x).to_string() << "\n";

  // The same function without jit: every np op runs as its own kernel, with its own dispatch
  // (on the kernels from the first call: the table compares kernels with kernels).
  opencl::set_tiering(opencl::Tiering::off);
  auto eager_start = Clock::now();
  const Array eager = tril_fn(x);
  eager.block_until_ready();
  const double eager_first = seconds_since(eager_start);
  for (int i = 0; i < kWarmupCalls; ++i) tril_fn(x).block_until_ready();
  const double eager_steady = median_seconds(z.repeats, [&] { return tril_fn(x); });
  const bool eager_same = compare(eager.to_host(), select_tril(x).to_host()).ok();
  if (!eager_same) failures.push_back("eager select_tril differs from the jitted one");
  {
    using A = Table::Align;
    Table t({"select_tril", "first call", "steady (median)", "vs jit"},
            {A::Left, A::Right, A::Right, A::Right});
    const Section& j = sections.back();
    char ratio[32];
    std::snprintf(ratio, sizeof ratio, "%.1fx slower", eager_steady / j.steady);
    t.add_row(
        {"eager, op by op", format_seconds(eager_first), format_seconds(eager_steady), ratio});
    t.add_row({"jit, one kernel", format_seconds(j.first), format_seconds(j.steady), "1.0x"});
    std::cout << "  eager vs jit (eager result " << (eager_same ? "matches" : "DIFFERS") << "):\n"
              << t.render("    ");
  }
  opencl::set_tiering(std::nullopt);

  // 2. Row softmax: reductions fuse their elementwise producers.
  const Shape sm_shape{z.softmax_rows, z.softmax_cols};
  const HostArray sm_host = random_array(DType::F32, sm_shape, /*seed=*/2024, 0);
  const Array sm_x = Array::from_host(sm_host, &dev);
  auto softmax = jit([](const Array& a) { return np::softmax(a, -1); }, {.name = "softmax"});
  std::cout << "\n[2] softmax over the rows of f32" << shape_to_string(sm_shape) << "\n";
  sections.push_back(measure(
      "softmax", "f32" + shape_to_string(sm_shape), [&] { return softmax(sm_x); },
      [&] { return softmax.lower(sm_x); }, {sm_host}, z.repeats));
  print_section(sections.back(), z.repeats);

  // 3. MLP forward pass; the weights are arguments, so the interpreter sees them as inputs.
  const std::vector<HostArray> mlp_host = {
      random_array(DType::F32, {z.batch, z.in}, /*seed=*/2024, 1),
      weights({z.in, z.hidden}, z.in, 2), weights({z.hidden}, z.in, 3),
      weights({z.hidden, z.classes}, z.hidden, 4), weights({z.classes}, z.hidden, 5)};
  std::vector<Array> p;
  for (const HostArray& h : mlp_host) p.push_back(Array::from_host(h, &dev));
  auto mlp = jit(
      [](const Array& in, const Array& w1, const Array& b1, const Array& w2, const Array& b2) {
        const Array h = np::relu(np::matmul(in, w1) + b1);
        return np::softmax(np::matmul(h, w2) + b2, -1);
      },
      {.name = "mlp"});
  const std::string mlp_dims = "batch " + std::to_string(z.batch) + ", " + std::to_string(z.in) +
                               "->" + std::to_string(z.hidden) + "->" + std::to_string(z.classes);
  std::cout << "\n[3] MLP forward pass: " << mlp_dims << ", relu, softmax\n";
  sections.push_back(measure(
      "mlp", mlp_dims, [&] { return mlp(p[0], p[1], p[2], p[3], p[4]); },
      [&] { return mlp.lower(p[0], p[1], p[2], p[3], p[4]); }, mlp_host, z.repeats));
  print_section(sections.back(), z.repeats);

  // 4. Ordered effects: prints and a host callback inside a compiled loop.
  std::cout << "\n[4] effects: gradient descent in a fori_loop that prints its loss every step\n";
  if (!effects_section(dev)) failures.push_back("the effects section printed other lines");

  using A = Table::Align;
  Table summary(
      {"function", "input", "kernels", "first call", "steady (median)", "max abs err", "check"},
      {A::Left, A::Left, A::Right, A::Right, A::Right, A::Right, A::Left});
  for (const Section& s : sections) {
    summary.add_row({s.name, s.what, std::to_string(s.info.kernels.size()), format_seconds(s.first),
                     format_seconds(s.steady), format_error(s.check.max_abs_error),
                     s.check.ok() ? "ok" : "MISMATCH"});
    if (!s.check.ok()) failures.push_back(s.name + " differs from the reference interpreter");
  }
  std::cout << "\nsummary on " << dev.name() << ":\n" << summary.render();
  if (telemetry::enabled())
    std::cout << "\nrecording a trace of this run (WEFT_TRACE or --trace): open it with "
                 "`weft-monitor FILE`, or `weft trace summary FILE`\n";
  else
    std::cout << "\nsee where the time went: `weft demo --trace demo.wefttrace`, then "
                 "`weft-monitor demo.wefttrace` (or `weft trace summary demo.wefttrace`)\n";

  if (!failures.empty()) {
    std::cout.flush();
    for (const std::string& f : failures) std::cerr << "weft: error: demo: " << f << "\n";
    return kExitMismatch;
  }
  return kExitOk;
}

}  // namespace weft::cli
