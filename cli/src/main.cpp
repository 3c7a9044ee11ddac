// The weft command-line tool: `weft devices`, `weft run FILE.weft`, `weft demo`.
#include <CLI/CLI.hpp>
#include <exception>
#include <iostream>
#include <string_view>

#include "commands.h"
#include "weft/weft.h"

int main(int argc, char** argv) {
  using namespace weft::cli;
  CLI::App app{"Trace, fuse and run numerical functions on OpenCL devices.", "weft"};
  app.set_version_flag("--version", std::string("weft ") + WEFT_VERSION);
  app.require_subcommand(1);
  app.footer(
      "Environment: WEFT_DEVICE names the default device (e.g. cpu:1); WEFT_CACHE=0 turns the "
      "persistent cache off and WEFT_CACHE_DIR moves it; WEFT_LOG=cache=debug logs every "
      "cache lookup. The README lists every variable.");
  // Global flags are accepted after the subcommand too: `weft run f.weft --no-cache`.
  app.fallthrough();
  CacheFlags cache_flags;
  add_cache_flags(app, cache_flags);

  DevicesOptions devices_options;
  RunOptions run_options;
  DemoOptions demo_options;
  CLI::App* devices = add_devices_command(app, devices_options);
  CLI::App* run = add_run_command(app, run_options);
  CLI::App* demo = add_demo_command(app, demo_options);
  CacheOptions cache_options;
  CLI::App* cache = add_cache_command(app, cache_options);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help and --version are "errors" with exit code 0; real usage errors exit 2.
    return app.exit(e) == 0 ? kExitOk : kExitUsage;
  }

  // Every failure becomes a one-line message and an exit code; nothing may abort.
  try {
    apply_cache_flags(cache_flags);
    if (*cache) return run_cache(cache_options);
    if (*devices) return run_devices(devices_options);
    if (*run) return run_run(run_options);
    if (*demo) return run_demo(demo_options);
  } catch (const weft::Error& e) {
    // Core messages often start with "weft: " already.
    std::string_view message = e.what();
    if (message.starts_with("weft: ")) message.remove_prefix(6);
    std::cout.flush();
    std::cerr << "weft: error: " << message << "\n";
    return kExitError;
  } catch (const std::exception& e) {
    std::cout.flush();
    std::cerr << "weft: error: internal error: " << e.what() << "\n";
    return kExitError;
  }
  return kExitUsage;
}
