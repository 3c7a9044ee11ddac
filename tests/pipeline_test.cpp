// The lowering pipeline (weft/compile/pipeline.h) and WEFT_DUMP_IR: one numbered file per pass,
// in pass order, the IR ones parse back, the last one is the generated OpenCL source; a
// directory that cannot be written warns once and the program runs on.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "support/print_capture.h"
#include "support/temp_dir.h"
#include "weft/compile/pipeline.h"
#include "weft/ir/text.h"
#include "weft/log.h"
#include "weft/opencl/register.h"
#include "weft/weft.h"

namespace weft {
namespace {

namespace fs = std::filesystem;

// Sets WEFT_DUMP_IR for the test's lifetime, then restores what was there.
class ScopedDumpDir {
 public:
  explicit ScopedDumpDir(const fs::path& dir) {
    if (const char* old = std::getenv("WEFT_DUMP_IR")) previous_ = old;
    ::setenv("WEFT_DUMP_IR", dir.c_str(), 1);
  }
  ~ScopedDumpDir() {
    if (previous_)
      ::setenv("WEFT_DUMP_IR", previous_->c_str(), 1);
    else
      ::unsetenv("WEFT_DUMP_IR");
  }

 private:
  std::optional<std::string> previous_;
};

// Collects weft's log lines while alive.
class LogCapture {
 public:
  LogCapture() {
    log::set_sink([this](const std::string& line) {
      std::lock_guard lock(mutex_);
      lines_.push_back(line);
    });
  }
  ~LogCapture() { log::set_sink({}); }
  std::vector<std::string> lines() const {
    std::lock_guard lock(mutex_);
    return lines_;
  }

 private:
  mutable std::mutex mutex_;
  std::vector<std::string> lines_;
};

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::vector<std::string> sorted_names(const fs::path& dir) {
  std::vector<std::string> names;
  for (const fs::directory_entry& e : fs::directory_iterator(dir))
    names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

Array vec(std::vector<float> values) {
  const auto n = static_cast<std::int64_t>(values.size());
  return Array::from_vector<float>({n}, values);
}

// An ordered print (an effect, so tokens are threaded) and a chain of elementwise ops that
// fuses into one kernel.
Array print_and_chain(const Array& x) {
  debug_print("x {}", x, DebugPrintOptions{.ordered = true});
  return np::exp(x * 2.0f + 1.0f) * 3.0f;
}

TEST(PipelineDump, WritesOneNumberedFilePerPassInPassOrder) {
  test::TempDir dir("weft-pipeline");
  ScopedDumpDir dump(dir.path());
  testing::PrintCapture prints;
  auto f = jit(print_and_chain, {.name = "print_and_chain"});
  const std::vector<float> result = f(vec({0, 1})).to_vector<float>();
  effects_barrier();
  ASSERT_EQ(result.size(), 2u);
  EXPECT_NEAR(result[1], 3 * std::exp(3.0f), 1e-3);

  const fs::path function_dir = dir.path() / "print_and_chain-1";
  ASSERT_TRUE(fs::is_directory(function_dir)) << function_dir;
  const std::vector<std::string> expected = {
      "01-traced.txt",          "02-effect-tokens.txt", "03-dce.txt",      "04-canonical-dots.txt",
      "05-loop-invariants.txt", "06-fusion.txt",        "07-schedule.txt", "08-opencl.cl"};
  ASSERT_EQ(sorted_names(function_dir), expected);
  for (std::size_t i = 0; i + 1 < expected.size(); ++i) {
    const std::string text = read_file(function_dir / expected[i]);
    try {
      const Graph graph = parse_graph(text);
      EXPECT_EQ(graph.name, "print_and_chain") << expected[i];
    } catch (const Error& e) {
      ADD_FAILURE() << expected[i] << " does not parse back: " << e.what() << "\n" << text;
    }
  }
  // Tokens appear with the pass that threads them.
  EXPECT_EQ(read_file(function_dir / "01-traced.txt").find("token"), std::string::npos);
  EXPECT_NE(read_file(function_dir / "02-effect-tokens.txt").find("token"), std::string::npos);
  // The chain is one kernel; the schedule lists it beside the print's host step.
  EXPECT_NE(read_file(function_dir / "06-fusion.txt").find("function, fusion groups: 1"),
            std::string::npos);
  const std::string schedule = read_file(function_dir / "07-schedule.txt");
  EXPECT_NE(schedule.find("host node"), std::string::npos) << schedule;
  EXPECT_NE(schedule.find("kernel 0"), std::string::npos) << schedule;
  // The last file is the program the device built.
  const std::string source = read_file(function_dir / "08-opencl.cl");
  EXPECT_NE(source.find("__kernel"), std::string::npos);
  EXPECT_EQ(source, f.lower(vec({0, 1})).compile()->info().source);
}

TEST(PipelineDump, AFunctionNameCannotLeaveTheDirectory) {
  test::TempDir dir("weft-pipeline");
  const fs::path inside = dir.path() / "dump";
  ScopedDumpDir dump(inside);
  auto f = jit([](const Array& x) { return x + 1.0f; }, {.name = "../../escaped/name"});
  EXPECT_EQ(f(vec({1})).to_vector<float>(), std::vector<float>{2});
  EXPECT_EQ(sorted_names(dir.path()), std::vector<std::string>{"dump"});
  const std::vector<std::string> made = sorted_names(inside);
  ASSERT_EQ(made.size(), 1u);
  EXPECT_EQ(made[0], "_._.._escaped_name-1");
}

TEST(PipelineDump, AnUnwritableDirectoryWarnsOnceAndTheProgramRuns) {
  test::TempDir dir("weft-pipeline");
  // Under a regular file nothing can be made, whoever runs the test.
  const fs::path file = dir.path() / "a-file";
  std::ofstream(file) << "not a directory";
  ScopedDumpDir dump(file / "dump");
  LogCapture log;
  auto f = jit([](const Array& x) { return x * 2.0f; }, {.name = "doubled"});
  auto g = jit([](const Array& x) { return x - 1.0f; }, {.name = "decremented"});
  EXPECT_EQ(f(vec({1, 2})).to_vector<float>(), (std::vector<float>{2, 4}));
  EXPECT_EQ(g(vec({1, 2})).to_vector<float>(), (std::vector<float>{0, 1}));
  int warnings = 0;
  for (const std::string& line : log.lines())
    if (line.find("WEFT_DUMP_IR") != std::string::npos) {
      ++warnings;
      EXPECT_NE(line.find("warning"), std::string::npos) << line;
      EXPECT_NE(line.find("the program runs on"), std::string::npos) << line;
    }
  EXPECT_EQ(warnings, 1);
}

TEST(Pipeline, PassesAreNumberedInTheOrderTheyRun) {
  const Pass passes[] = {Pass::Traced,        Pass::EffectTokens,   Pass::DeadCode,
                         Pass::CanonicalDots, Pass::LoopInvariants, Pass::Fusion,
                         Pass::Schedule,      Pass::CodeGeneration};
  for (int i = 0; i < 8; ++i) EXPECT_EQ(pass_number(passes[i]), i + 1) << pass_name(passes[i]);
}

}  // namespace
}  // namespace weft
