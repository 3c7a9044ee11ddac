// Runs a built executable (the weft CLI) as a user would, through the shell, and collects what it
// did: its exit code (128 + the signal when one ended it) and its stdout and stderr.
#pragma once

#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace weft::testing {

struct ProcessResult {
  int code = -1;
  std::string out, err;
};

inline std::string slurp(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// `s` as one single-quoted shell word.
inline std::string quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

// Runs `program ARGS` with stdin from /dev/null; stdout and stderr go through files in `dir`.
// `env` is a shell prefix ("WEFT_DEVICE=cpu:0"); `time_limit_s` > 0 kills a run that hangs
// (exit code 124), so a test never waits for ever.
inline ProcessResult run_process(const std::string& program, const std::vector<std::string>& args,
                                 const std::filesystem::path& dir, const std::string& env = "",
                                 int time_limit_s = 0) {
  std::string command = env.empty() ? "" : env + " ";
  if (time_limit_s > 0) command += "timeout " + std::to_string(time_limit_s) + " ";
  command += quote(program);
  for (const std::string& a : args) command += " " + quote(a);
  const std::filesystem::path out = dir / "stdout.txt", err = dir / "stderr.txt";
  command += " >" + quote(out.string()) + " 2>" + quote(err.string()) + " </dev/null";
  const int status = std::system(command.c_str());
  ProcessResult r;
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.out = slurp(out);
  r.err = slurp(err);
  return r;
}

}  // namespace weft::testing
