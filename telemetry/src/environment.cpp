#include "weft/telemetry/environment.h"

#include <cstdlib>
#include <fstream>
#include <iterator>
#include <mutex>

#include "weft/error.h"
#include "weft/log.h"
#include "weft/telemetry/live.h"
#include "weft/telemetry/trace_file.h"

namespace weft::telemetry {

std::string process_command_line() {
  std::ifstream file("/proc/self/cmdline", std::ios::binary);
  std::string raw((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  while (!raw.empty() && raw.back() == '\0') raw.pop_back();
  for (char& c : raw)
    if (c == '\0') c = ' ';
  return raw;
}

void configure_from_environment() {
  static std::once_flag once;
  std::call_once(once, [] {
    const std::string command = process_command_line();
    if (const char* path = std::getenv("WEFT_TRACE"); path && *path) {
      try {
        add_sink(std::make_shared<TraceFileSink>(path, command));
      } catch (const Error& e) {
        log::warning("telemetry", std::string(e.what()) + " (WEFT_TRACE; running unrecorded)");
      }
    }
    if (const char* live = std::getenv("WEFT_MONITOR"); live && *live && std::string(live) != "0") {
      try {
        add_sink(std::make_shared<LiveSink>(monitor_socket_path(), command));
      } catch (const Error& e) {
        log::warning("telemetry", std::string(e.what()) + " (running without the live stream)");
      }
    }
  });
}

std::shared_ptr<Sink> record_to_file(const std::filesystem::path& path, std::string command) {
  auto sink = std::make_shared<TraceFileSink>(path, std::move(command));
  add_sink(sink);
  return sink;
}

void stop_recording(const std::shared_ptr<Sink>& sink) {
  flush();
  remove_sink(sink);
}

}  // namespace weft::telemetry
