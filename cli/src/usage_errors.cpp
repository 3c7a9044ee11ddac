#include "usage_errors.h"

#include <iostream>
#include <string>
#include <vector>

#include "commands.h"
#include "numeric_flags.h"
#include "suggest.h"

namespace weft::cli {

namespace {

// "weft cache gc" for the gc subcommand of cache, "weft" for the app itself.
std::string command_path(const CLI::App* command) {
  std::string path = command->get_name();
  for (const CLI::App* parent = command->get_parent(); parent; parent = parent->get_parent())
    path = parent->get_name() + " " + path;
  return path;
}

// The deepest (sub)command the command line selected: `weft cache gc` for `weft cache gc -x`.
const CLI::App* selected_command(const CLI::App& app) {
  const CLI::App* command = &app;
  while (!command->get_subcommands().empty()) command = command->get_subcommands().front();
  return command;
}

std::vector<std::string> subcommand_names(const CLI::App* command) {
  std::vector<std::string> names;
  for (const CLI::App* sub :
       command->get_subcommands([](const CLI::App* s) { return !s->get_name().empty(); }))
    names.push_back(sub->get_name());
  return names;
}

// The flags `command` accepts: its own and, as global flags fall through, its parents'.
std::vector<std::string> flag_names(const CLI::App* command) {
  std::vector<std::string> names;
  for (const CLI::App* c = command; c; c = c->get_parent())
    for (const CLI::Option* option : c->get_options()) {
      for (const std::string& name : option->get_lnames()) names.push_back("--" + name);
      for (const std::string& name : option->get_snames()) names.push_back("-" + name);
    }
  return names;
}

std::string did_you_mean(const std::string& typed, const std::vector<std::string>& known) {
  const std::vector<std::string> nearest = nearest_names(typed, known);
  return nearest.empty() ? "" : "; did you mean " + quoted_alternatives(nearest) + "?";
}

std::string join_names(const std::vector<std::string>& names) {
  std::string text;
  for (const std::string& name : names) text += (text.empty() ? "" : ", ") + name;
  return text;
}

bool is_flag(const std::string& arg) {
  return arg.size() > 1 && arg[0] == '-';
}

// The flag as typed, without a value attached by '=': "--chek" for "--chek=1".
std::string flag_of(const std::string& arg) {
  return arg.substr(0, arg.find('='));
}

// The message for what is wrong, without the "Run ... --help" line.
std::string describe(const CLI::App* command, const CLI::ParseError& error,
                     const std::vector<std::string>& leftover) {
  const std::string path = command_path(command);
  const std::string* first_word = nullptr;
  const std::string* first_flag = nullptr;
  for (const std::string& arg : leftover) {
    if (!first_flag && is_flag(arg)) first_flag = &arg;
    if (!first_word && !is_flag(arg) && arg != "--") first_word = &arg;
  }
  const std::vector<std::string> subcommands = subcommand_names(command);
  const bool needs_subcommand = !subcommands.empty() && command->get_require_subcommand_min() > 0;
  // In a group without its subcommand, the first word is what was meant as one.
  if (needs_subcommand && first_word) {
    const std::vector<std::string> nearest = nearest_names(*first_word, subcommands);
    std::string message = path + ": unknown subcommand " + shown_value(*first_word);
    if (!nearest.empty())
      return message + "; did you mean " + quoted_alternatives(nearest) + "? The subcommands are " +
             join_names(subcommands);
    return message + "; the subcommands are " + join_names(subcommands);
  }
  if (first_flag) {
    const std::string flag = flag_of(*first_flag);
    return path + ": unknown flag " + shown_value(flag) + did_you_mean(flag, flag_names(command));
  }
  if (needs_subcommand) return path + ": a subcommand is required: " + join_names(subcommands);
  if (first_word) return path + ": unexpected argument " + shown_value(*first_word);
  return path + ": " + error.what();
}

}  // namespace

int report_parse_error(CLI::App& app, const CLI::ParseError& error) {
  // --help and --version are "errors" with exit code 0; CLI11 prints them.
  if (error.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success)) {
    app.exit(error);
    return kExitOk;
  }
  const CLI::App* command = selected_command(app);
  // With fallthrough, CLI11 may leave a word with a parent, so ask the whole app.
  const std::vector<std::string> leftover = app.remaining(/*recurse=*/true);
  std::cout.flush();
  std::cerr << describe(command, error, leftover) << "\nRun `" << command_path(command)
            << " --help` for more information.\n";
  return kExitUsage;
}

}  // namespace weft::cli
