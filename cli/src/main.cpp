// The weft command-line tool: `weft devices`, `weft run FILE.weft`, `weft demo`.
#include <CLI/CLI.hpp>
#include <exception>
#include <iostream>
#include <new>
#include <string>
#include <string_view>
#include <vector>

#include "commands.h"
#include "weft/log.h"
#include "weft/weft.h"

namespace {

// "weft cache" for the cache group, "weft" for the app itself.
std::string command_path(const CLI::App* app) {
  std::string path = app->get_name();
  for (const CLI::App* parent = app->get_parent(); parent; parent = parent->get_parent())
    path = parent->get_name() + " " + path;
  return path;
}

// CLI11 answers a missing or misspelt subcommand (`weft cache frobnicate`, `weft frobnicate`)
// with only "A subcommand is required". When parsing failed in a group that needs a subcommand
// and got none, this says which word was not one and lists the valid ones; returns false when
// the error was something else.
bool explain_missing_subcommand(const CLI::App& app) {
  const CLI::App* group = &app;
  while (!group->get_subcommands().empty()) group = group->get_subcommands().front();
  const std::vector<const CLI::App*> choices =
      group->get_subcommands([](const CLI::App* sub) { return !sub->get_name().empty(); });
  if (choices.empty() || group->get_require_subcommand_min() == 0) return false;
  std::string names;
  for (const CLI::App* sub : choices) names += (names.empty() ? "" : ", ") + sub->get_name();
  // The first word left over that is not an option is what the user meant as a subcommand.
  std::string word;
  // With fallthrough, CLI11 may leave it with the parent, so ask the whole app.
  for (const std::string& arg : app.remaining(/*recurse=*/true))
    if (!arg.empty() && arg[0] != '-') {
      word = arg;
      break;
    }
  const std::string path = command_path(group);
  if (word.empty())
    std::cerr << path << ": a subcommand is required: " << names << "\n";
  else
    std::cerr << path << ": unknown subcommand '" << word << "'; the subcommands are " << names
              << "\n";
  std::cerr << "Run `" << path << " --help` for more information.\n";
  return true;
}

}  // namespace

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
  TraceOptions trace_options;
  CLI::App* trace = add_trace_command(app, trace_options);

  try {
    app.parse(argc, argv);
  } catch (const CLI::RequiredError& e) {
    if (explain_missing_subcommand(app)) return kExitUsage;
    app.exit(e);
    return kExitUsage;
  } catch (const CLI::ParseError& e) {
    // --help and --version are "errors" with exit code 0; real usage errors exit 2.
    return app.exit(e) == 0 ? kExitOk : kExitUsage;
  }

  // Every failure becomes a one-line message and an exit code; nothing may abort.
  try {
    apply_cache_flags(cache_flags);
    if (*trace) return run_trace(trace_options);
    start_trace(trace_path);
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
