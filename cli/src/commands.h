// The subcommands of the weft executable. Each one adds itself to the CLI11 app with its
// options bound to a struct, and runs from main once parsing succeeded. Runs return the
// process exit code (see kExit*) and let weft::Error escape to main, which reports it.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>
#include <vector>

namespace weft::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitError = 1;     // a weft::Error: bad input, device failure, ...
inline constexpr int kExitUsage = 2;     // bad command line, or a .weft file that does not parse
inline constexpr int kExitMismatch = 3;  // a result disagrees with the reference interpreter

struct DevicesOptions {
  bool json = false;
};
CLI::App* add_devices_command(CLI::App& app, DevicesOptions& options);
int run_devices(const DevicesOptions& options);

struct OpsOptions {
  std::vector<std::string> names;  // empty: every primitive
  bool json = false;
  bool markdown = false;
};
CLI::App* add_ops_command(CLI::App& app, OpsOptions& options);
int run_ops(const OpsOptions& options);

struct RunOptions {
  std::string file;
  std::vector<std::string> inputs;  // NAME_OR_INDEX=PATH.npy
  std::uint64_t seed = 0;
  std::string device;  // empty: the default device
  std::string output_dir;
  int print_limit = 64;
  int repeat = 1;  // runs; the ones after the first give the steady-state median
  bool check = false;
  bool show_ir = false;
  bool show_kernels = false;
  bool json = false;
  // Progress lines on stderr for a compile or first run past half a second: when stderr is a
  // terminal, or always with --progress.
  bool progress = false;
};
CLI::App* add_run_command(CLI::App& app, RunOptions& options);
int run_run(const RunOptions& options);

struct DemoOptions {
  std::string device;
  std::string size = "full";  // "full" or "small"
  int repeats = 0;            // calls timed for the steady-state median; 0: 20 full, 5 small
};
CLI::App* add_demo_command(CLI::App& app, DemoOptions& options);
int run_demo(const DemoOptions& options);

struct CacheOptions {
  std::string action;  // stats, ls, show, explain, gc, clear
  bool json = false;
  int limit = 0;
  std::string key;
  std::string max_size;
  std::string older_than;
};
CLI::App* add_cache_command(CLI::App& app, CacheOptions& options);
int run_cache(const CacheOptions& options);

struct TraceOptions {
  std::string action;  // summary, export
  std::string file;
  std::string output;
  bool json = false;
  int limit = 0;
};
CLI::App* add_trace_command(CLI::App& app, TraceOptions& options);
int run_trace(const TraceOptions& options);
// --trace FILE, accepted by every subcommand; start_trace starts recording when it was given
// (the recording is completed when the process exits).
void add_trace_flag(CLI::App& app, std::string& path);
void start_trace(const std::string& path);

// Options every subcommand accepts: where the persistent cache is, or that it is off.
struct CacheFlags {
  std::string directory;
  bool off = false;
};
void add_cache_flags(CLI::App& app, CacheFlags& flags);
// Applies the flags to the process's cache settings (after the environment's).
void apply_cache_flags(const CacheFlags& flags);

}  // namespace weft::cli
