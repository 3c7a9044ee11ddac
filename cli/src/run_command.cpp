// `weft run FILE.weft`: parse a function from IR text, feed it .npy or seeded random inputs,
// compile and run it on a device, and report the outputs, timings and kernels; with --check,
// compare every output against the reference interpreter.
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <system_error>

#include "commands.h"
#include "compare.h"
#include "format.h"
#include "inputs.h"
#include "npy.h"
#include "numeric_flags.h"
#include "progress_line.h"
#include "signature.h"
#include "weft/compile/pipeline.h"
#include "weft/compile/tokens.h"
#include "weft/interp/interpreter.h"
#include "weft/ir/effects.h"
#include "weft/opencl/executable.h"
#include "weft/opencl/tiering.h"
#include "weft/weft.h"

namespace weft::cli {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// A .weft file, read to its end but no further than kMaxProgramBytes: a device file or a pipe
// that never ends (weft run /dev/zero) is refused rather than read until memory runs out.
constexpr std::size_t kMaxProgramBytes = std::size_t{256} << 20;

std::string read_text(const std::string& path) {
  if (std::error_code ec; std::filesystem::is_directory(path, ec))
    throw InvalidArgumentError("cannot read " + path + ": it is a directory");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InvalidArgumentError("cannot open " + path + ": " + std::strerror(errno));
  std::string text;
  char chunk[1 << 16];
  while (in.read(chunk, sizeof chunk) || in.gcount() > 0) {
    text.append(chunk, static_cast<std::size_t>(in.gcount()));
    if (text.size() > kMaxProgramBytes)
      throw InvalidArgumentError("cannot read " + path + ": it is larger than " +
                                 std::to_string(kMaxProgramBytes >> 20) +
                                 " MiB, which no .weft program is; is it the right file?");
  }
  if (in.bad()) throw InvalidArgumentError("cannot read " + path + ": " + std::strerror(errno));
  return text;
}

// Strips a leading "line L, column C: " or "line L: " from a message, returning "L:C" or "L".
std::string take_location(std::string& message, std::optional<int> line, std::optional<int> col) {
  std::string prefix, location;
  if (line && col) {
    prefix = "line " + std::to_string(*line) + ", column " + std::to_string(*col) + ": ";
    location = std::to_string(*line) + ":" + std::to_string(*col);
  } else {
    // InvalidGraphError carries its line only in the text: "line 3: node %4 ...".
    std::size_t end = 5;
    while (end < message.size() && std::isdigit(static_cast<unsigned char>(message[end]))) ++end;
    if (message.rfind("line ", 0) != 0 || end == 5 || message.compare(end, 2, ": ") != 0) return "";
    prefix = message.substr(0, end + 2);
    location = message.substr(5, end - 5);
  }
  if (message.rfind(prefix, 0) == 0) message.erase(0, prefix.size());
  return location;
}

struct Timings {
  double compile = 0, upload = 0, run = 0, download = 0, check = 0;
  std::optional<double> rerun_median;  // with --repeat > 1
};

}  // namespace

CLI::App* add_run_command(CLI::App& app, RunOptions& options) {
  CLI::App* cmd = app.add_subcommand("run", "Compile and run a function written in weft IR text.");
  cmd->add_option("file", options.file, "The .weft file (see docs/ir-text.md).")
      ->type_name("FILE")
      ->required();
  cmd->add_option("-i,--input", options.inputs,
                  "NAME=PATH.npy or INDEX=PATH.npy: a parameter's value (dtype and shape must "
                  "match). Repeatable; parameters not given get seeded random data.")
      ->type_name("NAME=PATH");
  add_seed_option(cmd, "--seed", options.seed,
                  "Seed of the random inputs (0 to 2^64-1; default 0): floats in [-1,1], ints in "
                  "[-10,10], u32 in [0,10], bools 50/50.");
  cmd->add_option("-d,--device", options.device,
                  "Device to run on, e.g. cpu:1 (default: WEFT_DEVICE, else the first GPU, else "
                  "the first CPU).")
      ->type_name("NAME");
  cmd->add_option("-o,--output-dir", options.output_dir,
                  "Write the outputs as out0.npy, out1.npy, ... into this directory (created if "
                  "missing).")
      ->type_name("DIR");
  add_count_option(cmd, "--print-limit", options.print_limit, 0,
                   "Print at most about this many elements per output (0: print none; default "
                   "64).");
  add_count_option(cmd, "--repeat", options.repeat, 1,
                   "Run N times (at least 1; default 1) and also report the median of the runs "
                   "after the first.");
  cmd->add_flag("--check", options.check,
                "Also run the reference interpreter and compare (floats: rtol 1e-4, atol 1e-5; "
                "others exact). Exit code 3 on a mismatch.");
  cmd->add_flag("--show-ir", options.show_ir, "Print the function's canonical IR text.");
  cmd->add_flag("--show-kernels", options.show_kernels,
                "List the kernels the function fused into.");
  cmd->add_flag("--json", options.json, "Print one JSON object instead of text.");
  cmd->add_flag("--progress", options.progress,
                "Print a progress line on stderr for a compile or first run that takes over half "
                "a second even when stderr is not a terminal (it is printed on a terminal "
                "anyway).");
  return cmd;
}

namespace {

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

bool has_effects(const Graph& graph) {
  return !graph_effects(graph).empty();
}

bool has_unordered_print(const Graph& graph) {
  for (const Effect& e : graph_effects(graph))
    if (!e.ordered) return true;
  return false;
}

// Whether the device printed what the interpreter did: the same lines in the same order, or,
// when some prints are unordered, the same lines in any order.
bool same_prints(const std::string& device, const std::string& reference, bool any_order) {
  std::vector<std::string> a = lines_of(device), b = lines_of(reference);
  if (any_order) {
    std::sort(a.begin(), a.end());
    std::sort(b.begin(), b.end());
  }
  return a == b;
}

// The first run's prints: each line is kept (for --check and the JSON report) and, in the text
// report, shown indented the moment the device prints it, so a long loop's prints appear as its
// iterations complete rather than when the run ends. write_debug_print flushes after each
// print, which hands its lines over here.
class LivePrints : public std::streambuf {
 public:
  explicit LivePrints(std::ostream* show) : show_(show) {}
  const std::string& kept() const { return kept_; }

 protected:
  int_type overflow(int_type c) override {
    if (!traits_type::eq_int_type(c, traits_type::eof())) pending_ += traits_type::to_char_type(c);
    return traits_type::not_eof(c);
  }
  std::streamsize xsputn(const char* text, std::streamsize count) override {
    pending_.append(text, static_cast<std::size_t>(count));
    return count;
  }
  int sync() override {
    const std::size_t end = pending_.rfind('\n');
    if (end == std::string::npos) return 0;
    const std::string lines = pending_.substr(0, end + 1);
    pending_.erase(0, end + 1);
    kept_ += lines;
    if (show_) {
      for (const std::string& line : lines_of(lines)) *show_ << "  " << line << "\n";
      show_->flush();
    }
    return 0;
  }

 private:
  std::ostream* show_;
  std::string pending_;  // the part of a line not yet flushed
  std::string kept_;
};

// The text report up to the prints, written before the run so its prints can follow live.
void print_report_head(const RunOptions& options, const Graph& graph, Device& dev,
                       const std::vector<Param>& params, bool prints) {
  std::cout << options.file << ": func @" << graph.name << " on " << dev.name() << " ("
            << dev.description() << ")\n";
  if (options.show_ir) {
    std::cout << "\nIR:\n";
    std::istringstream ir(print_graph(graph));
    for (std::string line; std::getline(ir, line);) std::cout << "  " << line << "\n";
  }
  std::cout << "\ninputs:\n";
  Table in({"param", "type", "source"});
  for (const Param& p : params) in.add_row({"%" + p.name, type_string(p.dtype, p.shape), p.source});
  std::cout << (params.empty() ? "  (none)\n" : in.render());
  if (prints) std::cout << "\nprinted (first run):\n";
  std::cout.flush();
}

// Sends debug prints to a stream while in scope (and nowhere else after, even on an error).
struct PrintsTo {
  explicit PrintsTo(std::ostream& stream) { set_debug_print_stream(&stream); }
  ~PrintsTo() { set_debug_print_stream(nullptr); }
  PrintsTo(const PrintsTo&) = delete;
  PrintsTo& operator=(const PrintsTo&) = delete;
};

}  // namespace

int run_run(const RunOptions& options) {
  const std::string text = read_text(options.file);
  Graph graph;
  try {
    graph = parse_graph(text);
  } catch (const ParseError& e) {
    std::string message = e.what();
    const std::string at = take_location(message, e.line(), e.column());
    std::cerr << options.file << ":" << at << ": error: " << message << "\n";
    return kExitUsage;
  } catch (const InvalidGraphError& e) {
    std::string message = e.what();
    const std::string at = take_location(message, std::nullopt, std::nullopt);
    std::cerr << options.file << (at.empty() ? "" : ":" + at) << ": error: " << message << "\n";
    return kExitUsage;
  }

  Device& dev = options.device.empty() ? default_device() : device(options.device);
  // Prints in the program: tokens make their order explicit (as jit does); the program then
  // takes a token per ordered effect and returns tokens after its outputs. The device's
  // compile runs the pipeline's later passes.
  Lowering lowered = lower(graph, {.last = Pass::EffectTokens, .may_be_threaded = true});
  const Graph program = std::move(lowered.graph);
  const std::vector<std::string> names = parameter_names(text);
  std::vector<Param> params;
  for (std::size_t i = 0; i < graph.params.size(); ++i) {
    const Node& n = graph.node(graph.params[i]);
    if (n.dtype == DType::Token) continue;  // made by the runtime, not read from input
    params.push_back({names.size() == graph.params.size() ? names[i] : "arg" + std::to_string(i),
                      n.dtype, n.shape, "", false});
  }
  const std::vector<HostArray> inputs =
      load_inputs(options.inputs, options.seed, options.file, memory_limits(dev), params);

  // --check holds the kernels to the interpreter: every run goes to the kernels, never to the
  // interpreter itself (tiered execution, docs/runtime.md).
  if (options.check) opencl::set_tiering(opencl::Tiering::off);
  Timings t;
  auto start = Clock::now();
  std::shared_ptr<Executable> exe;
  const bool show_progress = options.progress || ::isatty(STDERR_FILENO) == 1;
  {
    std::optional<ProgressLine> progress;
    if (show_progress) progress.emplace("compiling @" + graph.name + " for " + dev.name(), std::cerr);
    exe = dev.compile(program);
  }
  t.compile = seconds_since(start);
  auto* opencl_exe = dynamic_cast<opencl::OpenCLExecutable*>(exe.get());
  auto ran_on = [&] { return opencl_exe ? opencl_exe->last_ran_on() : std::string("device"); };

  start = Clock::now();
  std::vector<std::shared_ptr<Buffer>> buffers;
  std::vector<HostArray> interpreter_inputs;
  for (std::size_t p = 0, next = 0; p < program.params.size(); ++p) {
    if (program.node(program.params[p]).dtype == DType::Token) {
      buffers.push_back(dev.token_after({}));
      interpreter_inputs.emplace_back(DType::Token, Shape{});
    } else {
      const HostArray& a = inputs.at(next++);
      buffers.push_back(dev.upload(a.raw(), a.nbytes()));
      interpreter_inputs.push_back(a);
    }
  }
  dev.synchronize();
  t.upload = seconds_since(start);

  // The first run includes the driver's one-time work (PoCL specialises each kernel for its
  // launch size on first use); repeats show the cost of a warm run. The prints of the first
  // run are kept to show and check; the repeats' are dropped.
  if (!options.json) print_report_head(options, graph, dev, params, has_effects(graph));
  LivePrints live(options.json ? nullptr : &std::cout);
  std::ostream printed(&live);
  std::ostringstream dropped;
  auto run_once = [&](std::ostream& prints) {
    PrintsTo to(prints);
    const auto run_start = Clock::now();
    std::vector<std::shared_ptr<Buffer>> r = exe->run(buffers);
    // Waiting for the tokens too: the prints and callbacks have run, or their error is raised.
    for (const auto& b : r) dev.wait(*b);
    const double seconds = seconds_since(run_start);
    return std::pair{std::move(r), seconds};
  };
  std::optional<ProgressLine> building;
  if (show_progress && opencl_exe && !opencl_exe->built())
    building.emplace(
        "running @" + graph.name + " (on its kernels once built, or on the interpreter)",
        std::cerr);
  auto [results, first_run] = run_once(printed);
  building.reset();
  const std::string first_ran_on = ran_on();
  if (!options.json && has_effects(graph) && live.kept().empty()) std::cout << "  (nothing)\n";
  t.run = first_run;
  std::vector<double> reruns;
  for (int i = 1; i < options.repeat; ++i) reruns.push_back(run_once(dropped).second);
  if (!reruns.empty()) {
    std::sort(reruns.begin(), reruns.end());
    t.rerun_median = reruns[reruns.size() / 2];
  }

  start = Clock::now();
  std::vector<HostArray> outputs;
  for (std::size_t i = 0; i < results.size(); ++i) {
    const Node& n = program.node(program.outputs[i]);
    if (n.dtype == DType::Token) continue;
    HostArray out(n.dtype, n.shape);
    dev.download(*results[i], out.raw(), out.nbytes());
    outputs.push_back(std::move(out));
  }
  t.download = seconds_since(start);

  std::vector<std::string> written;
  if (!options.output_dir.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(options.output_dir, ec);
    if (ec)
      throw InvalidArgumentError("cannot create --output-dir " + options.output_dir + ": " +
                                 ec.message());
    for (std::size_t i = 0; i < outputs.size(); ++i) {
      const auto path =
          std::filesystem::path(options.output_dir) / ("out" + std::to_string(i) + ".npy");
      npy::write(path, outputs[i]);
      written.push_back(path.string());
    }
  }

  std::vector<Comparison> checks;
  bool all_ok = true;
  bool prints_ok = true;
  const std::vector<std::string> print_lines = lines_of(live.kept());
  if (options.check) {
    start = Clock::now();
    std::ostringstream expected_prints;
    set_debug_print_stream(&expected_prints);
    const std::vector<HostArray> all_expected = interpret(program, interpreter_inputs);
    set_debug_print_stream(nullptr);
    t.check = seconds_since(start);
    // Tokens hold no data and are not among `outputs`: compare the data results in order.
    std::vector<const HostArray*> expected;
    for (const HostArray& result : all_expected)
      if (result.dtype() != DType::Token) expected.push_back(&result);
    for (std::size_t i = 0; i < outputs.size(); ++i) {
      checks.push_back(compare(outputs[i], *expected.at(i)));
      all_ok &= checks.back().ok();
    }
    // Ordered prints must match line for line; unordered ones as a set of lines.
    prints_ok = same_prints(live.kept(), expected_prints.str(), has_unordered_print(program));
    all_ok &= prints_ok;
  }

  const CompiledInfo& info = exe->info();
  if (options.json) {
    nlohmann::json out = {{"file", options.file},
                          {"function", graph.name},
                          {"device", dev.name()},
                          {"device_description", dev.description()},
                          {"inputs", nlohmann::json::array()},
                          {"outputs", nlohmann::json::array()},
                          {"timings_s",
                           {{"compile", t.compile},
                            {"upload", t.upload},
                            {"run", t.run},
                            {"download", t.download},
                            {"compile_phases",
                             {{"plan", info.compile_time.plan},
                              {"codegen", info.compile_time.codegen},
                              {"cache_lookup", info.compile_time.cache_lookup},
                              {"build", info.compile_time.build}}}}},
                          {"runs", options.repeat},
                          {"ran_on", {{"first", first_ran_on}, {"last", ran_on()}}},
                          {"tiering", std::string(opencl::to_string(opencl::tiering()))},
                          {"cache", {{"status", info.cache_status}, {"key", info.cache_key}}},
                          {"kernels", kernels_json(info)},
                          {"intermediate_buffers", info.intermediate_buffers}};
    for (const Param& p : params)
      out["inputs"].push_back({{"name", p.name},
                               {"dtype", dtype_name(p.dtype)},
                               {"shape", p.shape},
                               {"source", p.source}});
    for (std::size_t i = 0; i < outputs.size(); ++i) {
      nlohmann::json o = {{"name", "out" + std::to_string(i)},
                          {"dtype", dtype_name(outputs[i].dtype())},
                          {"shape", outputs[i].shape()}};
      if (options.print_limit > 0) o["preview"] = outputs[i].to_string(options.print_limit);
      if (!written.empty()) o["npy"] = written[i];
      if (options.check) {
        const Comparison& c = checks[i];
        o["check"] = {{"ok", c.ok()}, {"mismatches", c.mismatches}};
        // JSON has no infinity: an unbounded error is null.
        auto number = [](double v) { return std::isinf(v) ? nlohmann::json() : nlohmann::json(v); };
        o["check"]["max_abs_error"] = number(c.max_abs_error);
        o["check"]["max_rel_error"] = number(c.max_rel_error);
        if (!c.first_mismatch.empty()) o["check"]["first_mismatch"] = c.first_mismatch;
        if (!c.type_error.empty()) o["check"]["type_error"] = c.type_error;
      }
      out["outputs"].push_back(std::move(o));
    }
    if (t.rerun_median) out["timings_s"]["run_median_after_first"] = *t.rerun_median;
    if (has_effects(graph)) out["prints"] = print_lines;
    if (options.check) {
      out["timings_s"]["interpreter"] = t.check;
      out["check_ok"] = all_ok;
      if (has_effects(graph)) out["prints_ok"] = prints_ok;
    }
    if (options.show_ir) out["ir"] = print_graph(graph);
    std::cout << json_text(out) << "\n";
    return all_ok ? kExitOk : kExitMismatch;
  }

  std::cout << "\noutputs:\n";
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    std::cout << "  out" << i << ": " << type_string(outputs[i].dtype(), outputs[i].shape());
    if (!written.empty()) std::cout << "  -> " << written[i];
    std::cout << "\n";
    if (options.print_limit > 0)
      std::cout << "    " << outputs[i].to_string(options.print_limit) << "\n";
  }

  std::cout << "\ntiming: compile " << format_seconds(t.compile)
            << (info.cache_status.empty() ? "" : " (cache " + info.cache_status + ")")
            << ", upload " << format_seconds(t.upload) << ", run " << format_seconds(t.run);
  if (t.rerun_median)
    std::cout << " (first" << (first_ran_on == "device" ? "" : ", on the " + first_ran_on)
              << "; median of the next " << options.repeat - 1 << ": "
              << format_seconds(*t.rerun_median)
              << (ran_on() == "device" ? "" : ", the last on the " + ran_on()) << ")";
  else if (first_ran_on != "device")
    std::cout << " (on the " << first_ran_on << ")";
  std::cout << ", download " << format_seconds(t.download) << "\n";
  std::cout << "kernels: " << info.kernels.size() << " fused kernel"
            << (info.kernels.size() == 1 ? "" : "s") << ", " << info.intermediate_buffers
            << " intermediate buffer" << (info.intermediate_buffers == 1 ? "" : "s") << "\n";
  if (options.show_kernels && !info.kernels.empty()) std::cout << kernel_table(info).render();

  if (options.check) {
    using A = Table::Align;
    std::cout << "\ncheck against the reference interpreter (" << format_seconds(t.check)
              << "; floats: rtol 1e-4, atol 1e-5; others exact):\n";
    Table table({"output", "max abs err", "max rel err", "result"},
                {A::Left, A::Right, A::Right, A::Left});
    for (std::size_t i = 0; i < checks.size(); ++i) {
      const Comparison& c = checks[i];
      std::string result = "ok";
      if (!c.type_error.empty())
        result = "MISMATCH: " + c.type_error;
      else if (c.mismatches)
        result = "MISMATCH: " + std::to_string(c.mismatches) + " elements differ; first " +
                 c.first_mismatch;
      table.add_row({"out" + std::to_string(i), format_error(c.max_abs_error),
                     format_error(c.max_rel_error), result});
    }
    std::cout << table.render();
    if (has_effects(graph))
      std::cout << "  prints: "
                << (prints_ok ? "the same as the interpreter's"
                              : "MISMATCH: the interpreter printed other lines")
                << "\n";
    if (!all_ok) {
      std::cout.flush();
      std::cerr << "weft: error: " << options.file
                << ": the device results differ from the reference interpreter\n";
    }
  }
  return all_ok ? kExitOk : kExitMismatch;
}

}  // namespace weft::cli
