// The weft command-line tool: `weft devices`, `weft run FILE.weft`, `weft demo`, `weft ops`.
#include <CLI/CLI.hpp>
#include <exception>
#include <iostream>
#include <new>
#include <string>
#include <string_view>

#include "commands.h"
#include "usage_errors.h"
#include "weft/log.h"
#include "weft/weft.h"

int main(int argc, char** argv) {
  using namespace weft::cli;
  // WEFT_LOG is read on first use; read it now, so a typo in it is reported by every command,
  // also those that log nothing.
  weft::log::enabled("cli", weft::log::Level::debug);
  CLI::App app{"Trace, fuse and run numerical functions on OpenCL devices.", "weft"};
  app.set_version_flag("--version", std::string("weft ") + WEFT_VERSION);
  app.require_subcommand(1);
  app.footer(
      "Environment: WEFT_DEVICE names the default device (e.g. cpu:1); WEFT_CACHE=0 turns the "
      "persistent cache off and WEFT_CACHE_DIR moves it; WEFT_LOG=cache=debug logs every "
      "cache lookup; WEFT_TRACE=FILE records a trace (as --trace). The README lists every "
      "variable.");
  // Global flags are accepted after the subcommand too: `weft run f.weft --no-cache`.
  app.fallthrough();
  CacheFlags cache_flags;
  add_cache_flags(app, cache_flags);
  std::string trace_path;
  add_trace_flag(app, trace_path);

  DevicesOptions devices_options;
  RunOptions run_options;
  DemoOptions demo_options;
  CLI::App* devices = add_devices_command(app, devices_options);
  CLI::App* run = add_run_command(app, run_options);
  CLI::App* demo = add_demo_command(app, demo_options);
  CacheOptions cache_options;
  CLI::App* cache = add_cache_command(app, cache_options);
  OpsOptions ops_options;
  CLI::App* ops = add_ops_command(app, ops_options);
  TraceOptions trace_options;
  CLI::App* trace = add_trace_command(app, trace_options);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return report_parse_error(app, e);
  }

  // Every failure becomes a one-line message and an exit code; nothing may abort.
  try {
    apply_cache_flags(cache_flags);
    if (*trace) return run_trace(trace_options);
    start_trace(trace_path);
    if (*cache) return run_cache(cache_options);
    if (*devices) return run_devices(devices_options);
    if (*ops) return run_ops(ops_options);
    if (*run) return run_run(run_options);
    if (*demo) return run_demo(demo_options);
  } catch (const weft::Error& e) {
    // Core messages often start with "weft: " already.
    std::string_view message = e.what();
    if (message.starts_with("weft: ")) message.remove_prefix(6);
    std::cout.flush();
    std::cerr << "weft: error: " << message << "\n";
    return kExitError;
  } catch (const std::bad_alloc&) {
    std::cout.flush();
    std::cerr << "weft: error: out of host memory; use smaller inputs or free some memory\n";
    return kExitError;
  } catch (const std::exception& e) {
    std::cout.flush();
    std::cerr << "weft: error: internal error: " << e.what() << "\n";
    return kExitError;
  }
  return kExitUsage;
}
