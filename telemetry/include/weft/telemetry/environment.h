// Turns recording on from the environment: WEFT_TRACE=FILE records to a trace file,
// WEFT_MONITOR=1 streams to a running weft-monitor. The device runtime calls it once when it
// starts; the CLI's --trace uses record_to_file.
#pragma once

#include <filesystem>
#include <memory>
#include <string>

#include "weft/telemetry/telemetry.h"

namespace weft::telemetry {

// Reads WEFT_TRACE and WEFT_MONITOR once per process (later calls do nothing). Problems (an
// unwritable path, no monitor listening) are logged as warnings; the program runs unrecorded.
void configure_from_environment();

// Starts recording into `path` (TraceError when it cannot); the sink stays installed until
// stop_recording or process exit, which flushes it.
std::shared_ptr<Sink> record_to_file(const std::filesystem::path& path, std::string command = {});
void stop_recording(const std::shared_ptr<Sink>& sink);

// The program's command line as /proc/self/cmdline says it (for the recording's "command").
std::string process_command_line();

}  // namespace weft::telemetry
