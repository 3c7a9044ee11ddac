// Messages for command lines CLI11 could not parse. CLI11 says only "A subcommand is required"
// for `weft -v` and gives unknown flags without the command they were given to; these name the
// (sub)command, the word it did not know and, as git does, the nearest known names.
#pragma once

#include <CLI/CLI.hpp>

namespace weft::cli {

// Prints the message for `error`, thrown by app.parse, to stderr (--help and --version print
// to stdout) and returns the exit code: kExitOk for --help and --version, else kExitUsage.
int report_parse_error(CLI::App& app, const CLI::ParseError& error);

}  // namespace weft::cli
