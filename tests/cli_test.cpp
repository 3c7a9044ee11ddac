// End-to-end tests of the weft executable: each test runs the built binary in a shell with its
// stdout and stderr captured into files, then checks the exit code and what it printed.
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "npy.h"
#include "support/cli_process.h"
#include "support/test_devices.h"
#include "weft/error.h"
#include "weft/opencl/device_info.h"

namespace weft {
namespace {

namespace fs = std::filesystem;

using Result = testing::ProcessResult;
using testing::quote;
using testing::slurp;

// A fresh directory per test for inputs and outputs.
class CliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::path(::testing::TempDir()) / (std::string("weft_cli_test_") + info->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }

  // Runs `weft ARGS` with an optional environment prefix ("WEFT_DEVICE=cpu:0").
  Result weft(const std::vector<std::string>& args, const std::string& env = "") const {
    return testing::run_process(WEFT_CLI_PATH, args, dir_, env);
  }

  static fs::path resources() {
    const char* env = std::getenv("WEFT_RESOURCES");
    return env && *env ? fs::path(env) : fs::path(WEFT_SOURCE_RESOURCES);
  }
  static fs::path example(const std::string& name) { return resources() / "examples" / name; }

  fs::path write_text(const std::string& name, const std::string& text) const {
    const fs::path path = dir_ / name;
    std::ofstream(path) << text;
    return path;
  }

  fs::path dir_;
};

bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

#define EXPECT_CONTAINS(haystack, needle)                                                  \
  EXPECT_TRUE(contains(haystack, needle)) << "expected to find: " << (needle) << "\nin:\n" \
                                          << (haystack)

// The device the tool runs on without --device: the default device, whatever the machine has.
std::string default_device_name() {
  return testing::test_device().name();
}

std::string all_device_names() {
  std::string names;
  for (const Device* d : devices()) names += (names.empty() ? "" : ", ") + d->name();
  return names;
}

// The tests of PoCL's kernel cache directory need PoCL as the only OpenCL driver: with another
// one, its devices are listed and used whatever PoCL's cache does.
bool pocl_is_the_only_driver() {
  for (const opencl::DeviceInfo& info : opencl::device_infos())
    if (info.platform_name != "Portable Computing Language") return false;
  return true;
}

#define SKIP_UNLESS_POCL_IS_THE_ONLY_DRIVER()                                         \
  if (!pocl_is_the_only_driver())                                                     \
  GTEST_SKIP() << "needs PoCL as the only OpenCL driver; this machine's devices are " \
               << all_device_names()

nlohmann::json parse_json(const Result& r) {
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  return nlohmann::json::parse(r.out);
}

TEST_F(CliTest, EveryExampleMatchesTheInterpreter) {
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(resources() / "examples"))
    if (entry.path().extension() == ".weft") files.push_back(entry.path());
  ASSERT_FALSE(files.empty()) << "no .weft files under " << resources();
  for (const fs::path& file : files) {
    const Result r = weft({"run", file.string(), "--check", "--print-limit", "4"});
    EXPECT_EQ(r.code, 0) << file << "\n" << r.out << r.err;
    EXPECT_CONTAINS(r.out, "check against the reference interpreter");
    EXPECT_FALSE(contains(r.out, "MISMATCH")) << r.out;
    EXPECT_TRUE(r.err.empty()) << r.err;
  }
}

TEST_F(CliTest, JsonRunReportsInputsOutputsKernelsAndCheck) {
  const Result r = weft({"run", example("accuracy.weft").string(), "--check", "--json", "--show-ir",
                         "--seed", "3", "--repeat", "3"});
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["function"], "accuracy");
  EXPECT_EQ(j["device"], default_device_name());
  ASSERT_EQ(j["inputs"].size(), 2u);
  EXPECT_EQ(j["inputs"][0]["name"], "logits");
  EXPECT_EQ(j["inputs"][1]["dtype"], "i32");
  EXPECT_EQ(j["inputs"][1]["source"], "random (seed 3)");
  ASSERT_EQ(j["outputs"].size(), 2u);
  EXPECT_EQ(j["outputs"][1]["shape"], nlohmann::json::array());
  EXPECT_EQ(j["outputs"][0]["check"]["ok"], true);
  EXPECT_EQ(j["check_ok"], true);
  EXPECT_FALSE(j["kernels"].empty());
  EXPECT_TRUE(j["kernels"][0].contains("fused_ops"));
  for (const auto& kernel : j["kernels"])  // each kernel says why it ends where it does
    EXPECT_FALSE(kernel["why_buffer"].get<std::string>().empty()) << kernel.dump();
  EXPECT_EQ(j["kernels"].back()["why_buffer"], "it is a graph output");
  EXPECT_TRUE(j["timings_s"].contains("run_median_after_first"));
  EXPECT_CONTAINS(j["ir"].get<std::string>(), "func @accuracy(");
}

// Tiered execution (CTest sets WEFT_TIERED=0 for the other tests): the report says where the
// runs ran; --check still runs the kernels, which it holds to the interpreter.
TEST_F(CliTest, JsonRunSaysWhereTheRunsRanAndTheCompilePhases) {
  // --no-cache: a program an earlier test stored would be a cache hit, built before it runs.
  Result r = weft({"run", example("softmax.weft").string(), "--json", "--repeat", "2", "--no-cache"},
                  "WEFT_TIERED=interpreter");
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["tiering"], "interpreter");
  EXPECT_EQ(j["ran_on"]["first"], "interpreter (WEFT_TIERED=interpreter)");
  EXPECT_EQ(j["ran_on"]["last"], "interpreter (WEFT_TIERED=interpreter)");
  for (const char* phase : {"plan", "codegen", "cache_lookup", "build"})
    EXPECT_TRUE(j["timings_s"]["compile_phases"].contains(phase)) << phase;
  EXPECT_EQ(j["timings_s"]["compile_phases"]["build"], 0.0) << "nothing was built";

  r = weft({"run", example("softmax.weft").string(), "--json", "--check", "--no-cache"},
           "WEFT_TIERED=interpreter");
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["tiering"], "off");
  EXPECT_EQ(j["ran_on"]["first"], "device");
  EXPECT_EQ(j["check_ok"], true);
  EXPECT_GT(j["timings_s"]["compile_phases"]["build"].get<double>(), 0.0);

  r = weft({"run", example("softmax.weft").string(), "--no-cache"}, "WEFT_TIERED=interpreter");
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_CONTAINS(r.out, "(on the interpreter (WEFT_TIERED=interpreter))");
}

TEST_F(CliTest, PrintsInAProgramRunInOrderAndAreCheckedAgainstTheInterpreter) {
  // collatz(6): 6 3 10 5 16 8 4 2 1, 8 steps.
  const fs::path n = dir_ / "n.npy";
  npy::write(n, HostArray::from<std::int32_t>({}, {6}));
  {
    const Result made = weft({"run", example("collatz_print.weft").string(), "--input",
                              "n=" + n.string(), "--check", "--json"});
    ASSERT_EQ(made.code, 0) << made.out << made.err;
    const auto j = nlohmann::json::parse(made.out);
    EXPECT_EQ(j["check_ok"], true);
    EXPECT_EQ(j["prints_ok"], true);
    std::vector<std::string> prints = j["prints"];
    ASSERT_EQ(prints.size(), 19u);  // start, 9 tests, 8 steps, the total
    // The total is unordered: it may come anywhere. The rest is in program order.
    const auto total = std::find(prints.begin(), prints.end(), "8 steps");
    ASSERT_NE(total, prints.end());
    prints.erase(total);
    std::vector<std::string> expected{"start n = 6"};
    const int path[] = {6, 3, 10, 5, 16, 8, 4, 2, 1};
    for (int k = 0; k < 8; ++k) {
      expected.push_back("  test " + std::to_string(path[k]));
      expected.push_back("  step " + std::to_string(k + 1) + ": " + std::to_string(path[k]) +
                         " -> " + std::to_string(path[k + 1]));
    }
    expected.push_back("  test 1");
    EXPECT_EQ(prints, expected);
  }
  // A host_call in text names a callback slot that nothing binds: a clear error, exit 1.
  const fs::path call = write_text("call.weft", R"(func @g(%x: f32[4]) -> (f32[4]) {
  %y = host_call[callback=0, effect="io_callback", ordered=1] %x : f32[4]
  return %y
}
)");
  const Result r = weft({"run", call.string()});
  EXPECT_NE(r.code, 0);
  EXPECT_CONTAINS(r.err, "callback slot 0");
}

TEST_F(CliTest, ExplicitTokenParametersAndResultsCheckAgainstTheInterpreter) {
  // The token result comes first: the data result must still be compared with the
  // interpreter's data result, not with its token.
  const fs::path file =
      write_text("tokens.weft", R"(func @tokens(%t0: token[], %x: f32[3]) -> (token[], f32[3]) {
  %t1 = debug_print[format="x = {}", ordered=1] %t0, %x : token[]
  %y = add %x, %x : f32[3]
  return %t1, %y
}
)");
  const Result text = weft({"run", file.string(), "--check"});
  EXPECT_EQ(text.code, 0) << text.out << text.err;
  EXPECT_FALSE(contains(text.out, "MISMATCH")) << text.out;
  const auto j = parse_json(weft({"run", file.string(), "--check", "--json"}));
  EXPECT_EQ(j["check_ok"], true);
  EXPECT_EQ(j["prints_ok"], true);
  ASSERT_EQ(j["outputs"].size(), 1u);
  EXPECT_EQ(j["outputs"][0]["dtype"], "f32");
  EXPECT_EQ(j["outputs"][0]["check"]["ok"], true);
}

TEST_F(CliTest, CallbackSlotBeyond32BitsIsAParseErrorNotAWrappedSlot) {
  const fs::path call = write_text("call.weft", R"(func @g(%x: f32[4]) -> (f32[4]) {
  %y = host_call[callback=999999999999, effect="io_callback", ordered=1] %x : f32[4]
  return %y
}
)");
  const Result r = weft({"run", call.string()});
  EXPECT_EQ(r.code, 2);
  EXPECT_CONTAINS(r.err, call.string() + ":2:27: error: attribute 'callback'");
  EXPECT_CONTAINS(r.err, "999999999999");
  EXPECT_CONTAINS(r.err, "0 to 2147483647");
  EXPECT_FALSE(contains(r.err, "-727379969")) << r.err;
}

TEST_F(CliTest, PrintsOfALoopThatNeverEndsShowWhileItRuns) {
  // Its predicate holds for 2^31 iterations: the run outlives the test, which kills it.
  const fs::path forever = write_text("forever.weft", R"(func @forever() -> (i32[]) {
  %zero = constant[value=0] : i32[]
  %last = while[carries=1] %zero : i32[] {
    cond(%k: i32[]) -> (bool[]) {
      %origin = constant[value=0] : i32[]
      %more = ge %k, %origin : bool[]
      return %more
    }
    body(%k: i32[]) -> (i32[]) {
      %one = constant[value=1] : i32[]
      %next = add %k, %one : i32[]
      debug_print[format="step {}", ordered=1] %next : ()
      return %next
    }
  }
  return %last
}
)");
  int out[2];
  ASSERT_EQ(pipe(out), 0);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    dup2(out[1], STDOUT_FILENO);
    close(out[0]);
    close(out[1]);
    const std::string err = (dir_ / "stderr.txt").string();
    if (!std::freopen(err.c_str(), "w", stderr)) std::_Exit(126);
    execl(WEFT_CLI_PATH, WEFT_CLI_PATH, "run", forever.c_str(), "--no-cache",
          static_cast<char*>(nullptr));
    std::_Exit(127);
  }
  close(out[1]);
  // Reads until the first print has shown (before the fix nothing came until the run ended,
  // here never); the pipe's end, or three minutes without it, fails the test.
  std::string shown;
  bool first_print = false;
  for (int waited = 0; !first_print && waited < 1800;) {
    pollfd ready{out[0], POLLIN, 0};
    if (poll(&ready, 1, 100) == 0) {
      ++waited;
      continue;
    }
    char chunk[4096];
    const ssize_t got = read(out[0], chunk, sizeof chunk);
    if (got <= 0) break;
    shown.append(chunk, static_cast<std::size_t>(got));
    first_print = shown.find("\n  step 1\n") != std::string::npos;
  }
  int status = 0;
  const bool still_running = waitpid(child, &status, WNOHANG) == 0;
  kill(child, SIGKILL);
  waitpid(child, &status, 0);
  close(out[0]);
  EXPECT_TRUE(first_print) << shown << slurp(dir_ / "stderr.txt");
  EXPECT_TRUE(still_running) << shown << slurp(dir_ / "stderr.txt");
  EXPECT_CONTAINS(shown, "printed (first run):\n  step 1\n");
}

TEST_F(CliTest, TraceRecordsARunThatSummaryAndExportRead) {
  const fs::path n = dir_ / "n.npy";
  npy::write(n, HostArray::from<std::int32_t>({}, {6}));
  const fs::path trace = dir_ / "run.wefttrace";
  const Result made = weft({"run", example("collatz_print.weft").string(), "--input",
                            "n=" + n.string(), "--trace", trace.string()});
  ASSERT_EQ(made.code, 0) << made.out << made.err;

  const Result summary = weft({"trace", "summary", trace.string(), "--json"});
  const auto j = parse_json(summary);
  ASSERT_FALSE(j["kernels"].empty());
  ASSERT_FALSE(j["dispatches"].empty());
  // The ordered prints (start, 9 tests, 8 steps) ran in program order; the total is unordered.
  std::size_t ordered = 0, unordered = 0;
  for (const auto& effect : j["effects"]) {
    EXPECT_EQ(effect["failed"], 0);
    if (effect["ordered"] == true) {
      ordered += effect["count"].get<std::size_t>();
      EXPECT_EQ(effect["out_of_order"], 0) << effect.dump();
    } else {
      unordered += effect["count"].get<std::size_t>();
    }
  }
  EXPECT_EQ(ordered, 18u);
  EXPECT_EQ(unordered, 1u);
  EXPECT_EQ(j["edges"], 17) << "each ordered print after the first waited for the one before";
  EXPECT_GE(j["compiles"].get<int>(), 1);

  const Result text = weft({"trace", "summary", trace.string()});
  ASSERT_EQ(text.code, 0) << text.err;
  EXPECT_CONTAINS(text.out, "program order");
  EXPECT_CONTAINS(text.out, "Kernels");

  const fs::path json_path = dir_ / "run.json";
  const Result exported = weft({"trace", "export", trace.string(), "-o", json_path.string()});
  ASSERT_EQ(exported.code, 0) << exported.err;
  const auto chrome = nlohmann::json::parse(slurp(json_path));
  std::size_t slices = 0, starts = 0, finishes = 0;
  for (const auto& event : chrome["traceEvents"]) {
    slices += event["ph"] == "X";
    starts += event["ph"] == "s";
    finishes += event["ph"] == "f";
  }
  EXPECT_EQ(slices, j["spans"].get<std::size_t>());
  EXPECT_EQ(starts, 17u);
  EXPECT_EQ(finishes, 17u);
}

TEST_F(CliTest, WeftTraceEnvironmentVariableRecordsTheDemo) {
  const fs::path trace = dir_ / "demo.wefttrace";
  const Result demo = weft({"demo", "--size", "small"}, "WEFT_TRACE=" + quote(trace.string()));
  ASSERT_EQ(demo.code, 0) << demo.err;
  const Result summary = weft({"trace", "summary", trace.string(), "--json"});
  const auto j = parse_json(summary);
  EXPECT_GT(j["spans"].get<int>(), 100);
  EXPECT_GT(j["edges"].get<int>(), 0);
  EXPECT_EQ(j["cache_hits"].get<int>() + j["cache_misses"].get<int>(), j["compiles"].get<int>());
}

TEST_F(CliTest, TraceToolsRefuseFilesThatAreNotTraces) {
  const Result missing = weft({"trace", "summary", (dir_ / "nothing.wefttrace").string()});
  EXPECT_EQ(missing.code, 1);
  EXPECT_CONTAINS(missing.err, "cannot be opened");
  const fs::path text = write_text("notes.txt", "not a trace at all\n");
  const Result foreign = weft({"trace", "export", text.string()});
  EXPECT_EQ(foreign.code, 1);
  EXPECT_CONTAINS(foreign.err, "not a weft trace");
  // --trace never overwrites a file that is not a trace: the command does not run.
  const Result refused = weft({"devices", "--trace", text.string()});
  EXPECT_EQ(refused.code, 1);
  EXPECT_CONTAINS(refused.err, "not a weft trace");
  EXPECT_EQ(slurp(text), "not a trace at all\n");
}

TEST_F(CliTest, JsonReportsSurviveFileNamesThatAreNotUtf8) {
  // Latin-1 "café": byte 0xE9 alone is not UTF-8. The JSON shows U+FFFD in its place.
  const std::string latin1_e = "\xE9";
  const fs::path file = dir_ / ("caf" + latin1_e + ".weft");
  fs::copy_file(example("softmax.weft"), file);
  const fs::path outputs = dir_ / ("out" + latin1_e);
  const fs::path cache = dir_ / ("cache" + latin1_e);
  const Result r = weft({"run", file.string(), "--json", "--check", "--output-dir",
                         outputs.string(), "--cache-dir", cache.string()});
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  const auto j = nlohmann::json::parse(r.out);
  const std::string replacement = "\xEF\xBF\xBD";  // U+FFFD in UTF-8
  EXPECT_EQ(j["file"], (dir_ / ("caf" + replacement + ".weft")).string());
  EXPECT_EQ(j["outputs"][0]["npy"], (dir_ / ("out" + replacement) / "out0.npy").string());
  EXPECT_EQ(j["check_ok"], true);
  EXPECT_TRUE(fs::exists(outputs / "out0.npy"));  // the real name is used for the file
  // The cache commands report their directory the same way.
  for (const char* command : {"stats", "ls", "explain"}) {
    const Result c = weft({"cache", command, "--json", "--cache-dir", cache.string()});
    ASSERT_EQ(c.code, 0) << command << "\n" << c.out << c.err;
    EXPECT_EQ(nlohmann::json::parse(c.out)["path"],
              (dir_ / ("cache" + replacement) / "cache.sqlite3").string())
        << command;
  }
}

TEST_F(CliTest, ShowIrAndKernels) {
  const Result r =
      weft({"run", example("select_tril.weft").string(), "--show-ir", "--show-kernels"});
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_CONTAINS(r.out, "func @select_tril(%0: f32[6,8]) -> (f32[6,8]) {");
  EXPECT_CONTAINS(r.out, "kernels: 1 fused kernel");
  EXPECT_CONTAINS(r.out, "k0_select");
  EXPECT_CONTAINS(r.out, "iota iota ge constant broadcast_in_dim select");
  EXPECT_CONTAINS(r.out, "%x     f32[6,8]  random (seed 0)");
}

TEST_F(CliTest, MalformedFileReportsFileLineAndColumn) {
  const fs::path bad = write_text(
      "bad.weft", "func @f(%x: f32[3]) -> (f32[3]) {\n  %y = ad %x, %x : f32[3]\n  return %y\n}\n");
  const Result r = weft({"run", bad.string()});
  EXPECT_EQ(r.code, 2);
  EXPECT_CONTAINS(r.err, bad.string() + ":2:8: error: unknown op 'ad'; did you mean 'add'?");
  EXPECT_TRUE(r.out.empty()) << r.out;
}

TEST_F(CliTest, InvalidGraphReportsFileAndLine) {
  const fs::path bad =
      write_text("bad.weft",
                 "func @f(%x: f32[3]) -> (f32[3]) {\n  %y = add %x, %x : f32[4]\n  return %y\n}\n");
  const Result r = weft({"run", bad.string()});
  EXPECT_EQ(r.code, 2);
  EXPECT_CONTAINS(r.err, bad.string() + ":2: error: ");
  EXPECT_CONTAINS(r.err, "f32[4]");
}

TEST_F(CliTest, EmptyFileIsAParseError) {
  const Result r = weft({"run", write_text("empty.weft", "").string()});
  EXPECT_EQ(r.code, 2);
  EXPECT_CONTAINS(r.err, "empty.weft:1:1: error:");
}

TEST_F(CliTest, NpyInputOfTheWrongShapeNamesParamExpectedAndGot) {
  const fs::path x = dir_ / "x.npy";
  npy::write(x, HostArray(DType::F32, {3, 4}));
  const Result r = weft({"run", example("softmax.weft").string(), "--input", "x=" + x.string()});
  EXPECT_EQ(r.code, 1);
  EXPECT_CONTAINS(r.err, "weft: error: input 'x' (parameter 0) expects f32[4,10] but " +
                             x.string() + " holds f32[3,4]");
  npy::write(x, HostArray(DType::I32, {4, 10}));
  EXPECT_CONTAINS(weft({"run", example("softmax.weft").string(), "-i", "0=" + x.string()}).err,
                  "expects f32[4,10] but " + x.string() + " holds i32[4,10]");
}

TEST_F(CliTest, BadInputSpecsAreClearErrors) {
  const std::string mlp = example("mlp.weft").string();
  Result r = weft({"run", mlp, "--input", "w9=a.npy"});
  EXPECT_EQ(r.code, 1);
  EXPECT_CONTAINS(r.err, "has no parameter 'w9'; its parameters are x (0), w1 (1), b1 (2)");
  r = weft({"run", mlp, "--input", "x"});
  EXPECT_EQ(r.code, 1);
  EXPECT_CONTAINS(r.err, "expected NAME=PATH.npy");
  r = weft({"run", mlp, "--input", "x=" + (dir_ / "missing.npy").string()});
  EXPECT_EQ(r.code, 1);
  EXPECT_CONTAINS(r.err, "cannot open " + (dir_ / "missing.npy").string());
  const fs::path junk = write_text("junk.npy", "definitely not numpy");
  r = weft({"run", mlp, "--input", "x=" + junk.string()});
  EXPECT_EQ(r.code, 1);
  EXPECT_CONTAINS(r.err, junk.string() + ": not a valid .npy file");
  npy::write(dir_ / "x.npy", HostArray(DType::F32, {8, 16}));
  r = weft({"run", mlp, "-i", "x=" + (dir_ / "x.npy").string(), "-i",
            "%x=" + (dir_ / "x.npy").string()});
  EXPECT_EQ(r.code, 1);
  EXPECT_CONTAINS(r.err, "parameter 'x' was already given");
}

TEST_F(CliTest, NpyInputsAndOutputsRoundTrip) {
  std::vector<float> values(48);
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(i) + 0.5f;
  npy::write(dir_ / "x.npy", HostArray::from<float>({6, 8}, values));
  const fs::path out = dir_ / "out";
  const Result r = weft({"run", example("select_tril.weft").string(), "--input",
                         "x=" + (dir_ / "x.npy").string(), "--output-dir", out.string()});
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_CONTAINS(r.out, (out / "out0.npy").string());
  const HostArray y = npy::read(out / "out0.npy");
  ASSERT_EQ(y.dtype(), DType::F32);
  ASSERT_EQ(y.shape(), (Shape{6, 8}));
  for (std::int64_t i = 0; i < 6; ++i)
    for (std::int64_t j = 0; j < 8; ++j)
      EXPECT_EQ(y.get_f64(i * 8 + j), i >= j ? values[static_cast<std::size_t>(i * 8 + j)] : 0.0)
          << i << "," << j;
}

TEST_F(CliTest, RandomInputsAreDeterministicPerSeed) {
  auto output_of = [&](const std::string& seed, const std::string& name) {
    const Result r = weft({"run", example("roll_pad.weft").string(), "--seed", seed, "-o",
                           (dir_ / name).string(), "--print-limit", "0"});
    EXPECT_EQ(r.code, 0) << r.err;
    return slurp(dir_ / name / "out0.npy");
  };
  const std::string a = output_of("7", "a"), b = output_of("7", "b"), c = output_of("8", "c");
  EXPECT_FALSE(a.empty());
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  const HostArray framed = npy::parse(std::as_bytes(std::span(a.data(), a.size())), "out0.npy");
  for (std::int64_t i = 0; i < framed.size(); ++i) {
    EXPECT_GE(framed.get_f64(i), -1.0);
    EXPECT_LE(framed.get_f64(i), 1.0);
  }
}

TEST_F(CliTest, DevicesListsTheDefaultDeviceAsText) {
  const Result r = weft({"devices"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_CONTAINS(r.out, default_device_name());
  EXPECT_CONTAINS(r.out, "(default)");
  EXPECT_CONTAINS(r.out, "compute units");
  EXPECT_CONTAINS(r.out, "OpenCL C");
}

TEST_F(CliTest, DevicesJsonHasEveryFieldAndOneDefault) {
  const Result r = weft({"devices", "--json"});
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_FALSE(j["devices"].empty());
  int defaults = 0;
  for (const auto& d : j["devices"]) {
    for (const char* key :
         {"name", "platform", "device_name", "vendor", "driver_version", "opencl_c_version",
          "compute_units", "max_work_group_size", "global_mem_bytes", "local_mem_bytes",
          "max_alloc_bytes", "fp64", "queue_order"})
      EXPECT_TRUE(d.contains(key)) << key;
    defaults += d["default"].get<bool>();
  }
  EXPECT_EQ(defaults, 1);
  EXPECT_EQ(j["devices"][0]["name"], devices().front()->name());
}

TEST_F(CliTest, WeftDeviceEnvironmentVariableChoosesTheDefault) {
  const std::string last = devices().back()->name();  // another one where there are several
  Result r = weft({"devices"}, "WEFT_DEVICE=" + last);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_CONTAINS(r.out, "default " + last + " (from WEFT_DEVICE)");
  // The listing still works, so users can find a valid name.
  r = weft({"devices"}, "WEFT_DEVICE=tpu:7");
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_CONTAINS(r.out, "no default: WEFT_DEVICE=tpu:7 names no device");
  r = weft({"run", example("softmax.weft").string()}, "WEFT_DEVICE=tpu:7");
  EXPECT_EQ(r.code, 1);
  EXPECT_CONTAINS(r.err, "weft: error: ");
  EXPECT_CONTAINS(r.err, "tpu:7");
}

TEST_F(CliTest, UnknownDeviceIsAnErrorNotACrash) {
  const Result r = weft({"run", example("softmax.weft").string(), "--device", "gpu:99"});
  EXPECT_EQ(r.code, 1);
  EXPECT_CONTAINS(
      r.err, "weft: error: no device is named 'gpu:99'; available devices: " + all_device_names());
}

TEST_F(CliTest, UsageErrorsExitWith2) {
  EXPECT_EQ(weft({}).code, 2);
  EXPECT_EQ(weft({"run"}).code, 2);
  EXPECT_EQ(weft({"run", "x.weft", "--no-such-flag"}).code, 2);
  EXPECT_EQ(weft({"demo", "--size", "enormous"}).code, 2);
  EXPECT_EQ(weft({"cache", "gc", "--max-size", "lots"}).code, 2);
  EXPECT_EQ(weft({"cache", "gc", "--older-than", "soon"}).code, 2);
  const Result help = weft({"run", "--help"});
  EXPECT_EQ(help.code, 0);
  for (const char* flag : {"--input", "--seed", "--device", "--output-dir", "--print-limit",
                           "--check", "--show-ir", "--show-kernels", "--json", "--repeat"})
    EXPECT_CONTAINS(help.out, flag);
}

TEST_F(CliTest, MissingFileIsAnError) {
  const Result r = weft({"run", (dir_ / "nope.weft").string()});
  EXPECT_EQ(r.code, 1);
  EXPECT_CONTAINS(r.err, "weft: error: cannot open " + (dir_ / "nope.weft").string());
}

TEST_F(CliTest, SmallDemoPasses) {
  const Result r = weft({"demo", "--size", "small", "--repeat", "2"});
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_CONTAINS(r.out, "iota[dimension=0]");
  EXPECT_CONTAINS(r.out, "check: fused into exactly one kernel: ok");
  EXPECT_CONTAINS(r.out, "eager, op by op");
  EXPECT_CONTAINS(r.out, "[2] softmax");
  EXPECT_CONTAINS(r.out, "[3] MLP forward pass");
  EXPECT_CONTAINS(r.out, "summary on " + default_device_name());
  EXPECT_FALSE(contains(r.out, "MISMATCH")) << r.out;
}

// --- Untrusted and oversized inputs ---

// The bytes of a .npy file's prefix and header for `header` (version 1.0), without any data.
std::string npy_header(const std::string& header) {
  std::string text = header;
  while ((10 + text.size() + 1) % 64 != 0) text += ' ';
  text += '\n';
  std::string out = std::string("\x93NUMPY\x01\x00", 8);
  out += static_cast<char>(text.size() & 0xff);
  out += static_cast<char>(text.size() >> 8);
  return out + text;
}

TEST_F(CliTest, DevZeroAsAnInputFailsAtOnce) {
  // Used to read /dev/zero until memory ran out (std::bad_alloc after a minute).
  const Result r = weft({"run", example("softmax.weft").string(), "--input", "x=/dev/zero"});
  EXPECT_EQ(r.code, 1);
  EXPECT_CONTAINS(r.err,
                  "weft: error: /dev/zero: not a valid .npy file: it does not start with "
                  "the \\x93NUMPY magic string");
  EXPECT_TRUE(r.out.empty()) << r.out;
}

TEST_F(CliTest, DevZeroAsTheProgramIsRefusedAfterABoundedRead) {
  const Result r = weft({"run", "/dev/zero"});
  EXPECT_EQ(r.code, 1);
  EXPECT_CONTAINS(r.err, "weft: error: cannot read /dev/zero: it is larger than 256 MiB");
}

TEST_F(CliTest, NpyHeaderIsCheckedAgainstTheParameterBeforeTheData) {
  // A header-only file claiming 40 GB: the shape mismatch is reported from the header alone.
  const fs::path x = write_text(
      "huge.npy", npy_header("{'descr': '<f4', 'fortran_order': False, 'shape': (100000, "
                             "100000), }"));
  Result r = weft({"run", example("softmax.weft").string(), "--input", "x=" + x.string()});
  EXPECT_EQ(r.code, 1);
  EXPECT_CONTAINS(r.err, "weft: error: input 'x' (parameter 0) expects f32[4,10] but " +
                             x.string() + " holds f32[100000,100000]");
  // The right header with too little data: the size is checked before reading.
  const fs::path y = write_text(
      "short.npy",
      npy_header("{'descr': '<f4', 'fortran_order': False, 'shape': (4, 10), }") + "0123");
  r = weft({"run", example("softmax.weft").string(), "--input", "x=" + y.string()});
  EXPECT_EQ(r.code, 1);
  EXPECT_CONTAINS(r.err, y.string() +
                             ": not a valid .npy file: truncated data: f32[4,10] needs "
                             "160 bytes but only 4 follow the header");
}

TEST_F(CliTest, NpyInputFromAPipeReadsExactlyWhatTheShapeNeeds) {
  const fs::path header = write_text(
      "header.bin", npy_header("{'descr': '<f4', 'fortran_order': False, 'shape': (4, 10), }"));
  const fs::path fifo = dir_ / "x.npy";
  ASSERT_EQ(std::system(("mkfifo " + quote(fifo.string())).c_str()), 0);
  // A writer that never stops (zeros after the header): weft reads the 160 data bytes and
  // stops. `timeout` keeps a writer nobody reads from from outliving the test.
  const std::string endless = "timeout 120 sh -c 'cat " + quote(header.string()) + " /dev/zero > " +
                              quote(fifo.string()) + "' 2>/dev/null &";
  ASSERT_EQ(std::system(endless.c_str()), 0);
  Result r =
      weft({"run", example("softmax.weft").string(), "--input", "x=" + fifo.string(), "--json"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["inputs"][0]["source"], fifo.string());
  // A writer that stops early: the run fails naming what arrived.
  const std::string short_writer = "timeout 120 sh -c '(cat " + quote(header.string()) +
                                   "; printf 0123456789) > " + quote(fifo.string()) + "' &";
  ASSERT_EQ(std::system(short_writer.c_str()), 0);
  r = weft({"run", example("softmax.weft").string(), "--input", "x=" + fifo.string()});
  EXPECT_EQ(r.code, 1);
  EXPECT_CONTAINS(r.err, fifo.string() +
                             ": not a valid .npy file: truncated data: f32[4,10] "
                             "needs 160 bytes but the input ended after 10");
}

TEST_F(CliTest, RandomInputLargerThanTheDeviceIsRefusedBeforeGeneratingIt) {
  // 4 TB: more than any device's largest buffer.
  const fs::path big =
      write_text("big.weft",
                 "func @big(%x: f32[1000000,1000000]) -> (f32[1000000,1000000]) {\n"
                 "  %y = neg %x : f32[1000000,1000000]\n"
                 "  return %y\n}\n");
  const Result r = weft({"run", big.string()});
  EXPECT_EQ(r.code, 1);
  EXPECT_CONTAINS(r.err,
                  "weft: error: input 'x' (parameter 0, f32[1000000,1000000], random) takes "
                  "3.6 TiB (4000000000000 bytes), more than the ");
  EXPECT_CONTAINS(r.err, "can allocate in one buffer (CL_DEVICE_MAX_MEM_ALLOC_SIZE)");
  EXPECT_CONTAINS(r.err, "use smaller shapes in " + big.string());
  EXPECT_TRUE(r.out.empty()) << r.out;
}

TEST_F(CliTest, InputsTogetherLargerThanTheDeviceAreRefused) {
  // Each input exactly at the device's largest allocation, one more than its global memory
  // holds: every input alone is fine, together they are not.
  const auto devices = parse_json(weft({"devices", "--json"}));
  const auto& d = devices["devices"][0];
  const std::uint64_t max_alloc = d["max_alloc_bytes"], global = d["global_mem_bytes"];
  ASSERT_GT(max_alloc, 0u);
  // Two axes, since one may hold at most 2^31-1 elements.
  const std::uint64_t rows = max_alloc / 4 / 1024;
  const std::uint64_t count = global / (rows * 4096) + 1;
  const std::string type = "u32[" + std::to_string(rows) + ",1024]";
  std::string params, body = "  %s0 = add %p0, %p0 : " + type + "\n";
  for (std::uint64_t i = 0; i < count; ++i)
    params += (i ? ", %p" : "%p") + std::to_string(i) + ": " + type;
  const fs::path file = write_text(
      "many.weft", "func @many(" + params + ") -> (" + type + ") {\n" + body + "  return %s0\n}\n");
  const Result r = weft({"run", file.string()});
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_CONTAINS(r.err, "weft: error: the inputs of " + file.string() + " take ");
  EXPECT_CONTAINS(r.err, " together (p0 ");
  EXPECT_CONTAINS(r.err, "of global memory (CL_DEVICE_GLOBAL_MEM_SIZE)");
}

// --- Messages for bad command lines and environments ---

TEST_F(CliTest, UnknownSubcommandsAreNamedWithTheValidOnes) {
  Result r = weft({"cache", "frobnicate"});
  EXPECT_EQ(r.code, 2);
  EXPECT_CONTAINS(r.err,
                  "weft cache: unknown subcommand 'frobnicate'; the subcommands are "
                  "stats, ls, show, explain, gc, clear");
  r = weft({"cache", "--cache-dir", (dir_ / "c").string(), "frobnicate", "--json"});
  EXPECT_EQ(r.code, 2);
  EXPECT_CONTAINS(r.err, "weft cache: unknown subcommand 'frobnicate'");
  r = weft({"frobnicate"});
  EXPECT_EQ(r.code, 2);
  EXPECT_CONTAINS(r.err,
                  "weft: unknown subcommand 'frobnicate'; the subcommands are devices, run, "
                  "demo, cache");
  r = weft({"cache"});
  EXPECT_EQ(r.code, 2);
  EXPECT_CONTAINS(r.err,
                  "weft cache: a subcommand is required: stats, ls, show, explain, gc, "
                  "clear");
  r = weft({});
  EXPECT_EQ(r.code, 2);
  EXPECT_CONTAINS(r.err, "weft: a subcommand is required: devices, run, demo, cache");
}

// An unknown flag or subcommand is named, with the (sub)command it was given to and, as git
// does, the nearest known names of that command.
TEST_F(CliTest, TyposAreNamedWithTheNearestSubcommandOrFlag) {
  const std::string file = example("softmax.weft").string();
  const struct {
    std::vector<std::string> args;
    std::string expected;
  } cases[] = {
      {{"-v"}, "weft: unknown flag '-v'; did you mean '--version'?"},
      {{"--verison"}, "weft: unknown flag '--verison'; did you mean '--version'?"},
      {{"run", "--chek"}, "weft run: unknown flag '--chek'; did you mean '--check'?"},
      {{"run", file, "--chek"}, "weft run: unknown flag '--chek'; did you mean '--check'?"},
      {{"run", file, "--sed=3"}, "weft run: unknown flag '--sed'; did you mean '--seed'?"},
      // Global flags are the run command's too.
      {{"run", file, "--no-cach"},
       "weft run: unknown flag '--no-cach'; did you mean '--no-cache'?"},
      {{"cache", "ls", "--jsn"}, "weft cache ls: unknown flag '--jsn'; did you mean '--json'?"},
      {{"run", file, "--frobnicate"}, "weft run: unknown flag '--frobnicate'\n"},
      {{"rn", file},
       "weft: unknown subcommand 'rn'; did you mean 'run'? The subcommands are devices, run, "
       "demo, cache"},
      {{"cache", "sats"},
       "weft cache: unknown subcommand 'sats'; did you mean 'stats'? The subcommands are stats, "
       "ls, show, explain, gc, clear"},
      {{"devices", "extra"}, "weft devices: unexpected argument 'extra'"},
      {{"run"}, "weft run: file is required"},
  };
  for (const auto& c : cases) {
    const Result r = weft(c.args);
    EXPECT_EQ(r.code, 2) << c.expected;
    EXPECT_CONTAINS(r.err, c.expected);
    EXPECT_FALSE(contains(r.err, "a subcommand is required")) << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
  }
  EXPECT_CONTAINS(weft({"run", "--chek"}).err, "Run `weft run --help` for more information.");
}

TEST_F(CliTest, SeedsBeyond64BitsOrNegativeAreRefused) {
  const std::string file = example("softmax.weft").string();
  for (const char* seed : {"99999999999999999999999", "18446744073709551616", "-1", "1.5", "x"}) {
    const Result r = weft({"run", file, "--seed", seed});
    EXPECT_EQ(r.code, 2) << seed;
    EXPECT_CONTAINS(r.err, std::string("--seed: expected a whole number from 0 to "
                                       "18446744073709551615 (2^64-1), got '") +
                               seed + "'");
    EXPECT_TRUE(r.out.empty()) << r.out;
  }
  const auto max = parse_json(weft({"run", file, "--seed", "18446744073709551615", "--json"}));
  EXPECT_EQ(max["inputs"][0]["source"], "random (seed 18446744073709551615)");
}

TEST_F(CliTest, NonsensicalCountsAreRefusedWithTheirRange) {
  const std::string file = example("softmax.weft").string();
  const struct {
    std::vector<std::string> args;
    std::string expected;
  } cases[] = {
      {{"run", file, "--repeat", "0"},
       "--repeat: expected a whole number from 1 to 2147483647, "
       "got '0'"},
      {{"run", file, "--repeat", "-3"}, "--repeat: expected a whole number from 1"},
      {{"run", file, "--repeat", "99999999999"}, "got '99999999999'"},
      {{"run", file, "--print-limit", "-1"},
       "--print-limit: expected a whole number from 0 to 2147483647, got '-1'"},
      {{"demo", "--repeat", "0"}, "--repeat: expected a whole number from 1 to 2147483647"},
      {{"cache", "ls", "-n", "-5"}, "--limit: expected a whole number from 1 to 2147483647"},
      {{"cache", "explain", "-n", "0"},
       "--limit: expected a whole number from 1 to 2147483647, got '0'"},
  };
  for (const auto& c : cases) {
    const Result r = weft(c.args);
    EXPECT_EQ(r.code, 2) << c.expected;
    EXPECT_CONTAINS(r.err, c.expected);
    EXPECT_LT(r.err.size(), 200u) << r.err;  // no 300-digit bounds
  }
}

TEST_F(CliTest, EmptyCacheDirIsRefused) {
  const Result r = weft({"run", example("softmax.weft").string(), "--cache-dir", ""});
  EXPECT_EQ(r.code, 2);
  EXPECT_CONTAINS(r.err, "--cache-dir: the directory is empty; give a directory");
  EXPECT_CONTAINS(r.err, "--no-cache");
  EXPECT_EQ(weft({"cache", "stats", "--cache-dir", ""}).code, 2);
}

TEST_F(CliTest, UnknownLogComponentIsWarnedAboutOnce) {
  const Result r = weft({"run", example("softmax.weft").string(), "--print-limit", "0"},
                        "WEFT_LOG=foo=debug,cache=info");
  EXPECT_EQ(r.code, 0) << r.err;  // a warning, not an error
  const std::string warning =
      "weft[log] warning: WEFT_LOG=\"foo=debug,cache=info\": unknown "
      "component \"foo\"";
  EXPECT_CONTAINS(r.err, warning);
  EXPECT_EQ(r.err.find(warning), r.err.rfind(warning)) << r.err;
  EXPECT_CONTAINS(r.err, "Known components: build, cache, callback, cli, codegen, runtime");
  // Also from a command that logs nothing.
  EXPECT_CONTAINS(weft({"devices"}, "WEFT_LOG=foo=debug").err, "unknown component \"foo\"");
  // Known components are accepted silently.
  EXPECT_EQ(weft({"devices"}, "WEFT_LOG=build=debug,codegen=info,runtime=off,cli=warning").err, "");
}

TEST_F(CliTest, UnwritablePoclCacheDirectoryIsExplained) {
  SKIP_UNLESS_POCL_IS_THE_ONLY_DRIVER();
  // PoCL creates its kernel cache under HOME when it loads; when it cannot, it offers no
  // devices. A regular file as HOME defeats it even for root.
  const fs::path home = write_text("home-is-a-file", "");
  const std::string env = "env -u XDG_CACHE_HOME -u POCL_CACHE_DIR HOME=" + quote(home.string());
  Result r = weft({"devices"}, env);
  EXPECT_EQ(r.code, 1);
  EXPECT_CONTAINS(r.err, "PoCL, the CPU OpenCL driver, cannot create its kernel cache directory " +
                             home.string() + "/.cache/pocl/kcache (HOME=" + home.string() +
                             "): " + home.string() + " is not a directory");
  EXPECT_CONTAINS(r.err,
                  "Point POCL_CACHE_DIR (or XDG_CACHE_HOME, or HOME) at a writable "
                  "directory");
  EXPECT_FALSE(contains(r.err, "Install an OpenCL driver")) << r.err;
  r = weft({"run", example("softmax.weft").string()}, env);
  EXPECT_EQ(r.code, 1);
  EXPECT_CONTAINS(r.err, "cannot create its kernel cache directory");
  // The advice works.
  r = weft({"devices"}, env + " POCL_CACHE_DIR=" + quote((dir_ / "pocl").string()));
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_CONTAINS(r.out, "cpu:0");
}

TEST_F(CliTest, PoclCacheDirectoryThatIsAFileFailsBuildsWithTheReason) {
  SKIP_UNLESS_POCL_IS_THE_ONLY_DRIVER();
  // With POCL_CACHE_DIR naming a file PoCL still lists its devices but fails every build
  // (with an empty build log); that is no weft codegen bug, and the message says so.
  const fs::path file = write_text("pocl-cache-is-a-file", "");
  const Result r = weft({"run", example("softmax.weft").string(), "--no-cache"},
                        "POCL_CACHE_DIR=" + quote(file.string()));
  EXPECT_EQ(r.code, 1);
  EXPECT_CONTAINS(r.err, "PoCL then fails every program build");
  EXPECT_CONTAINS(r.err, file.string() + " is not a directory");
  EXPECT_FALSE(contains(r.err, "codegen bug")) << r.err;
}

// --- The persistent cache through the CLI ---

// Every program gets a row, however fast PoCL's own kernel cache made its compile.
const std::string kStoreAll = "WEFT_CACHE_MIN_COMPILE_TIME=0";

TEST_F(CliTest, SecondRunHitsAndCacheCommandsReportIt) {
  const std::string cache = (dir_ / "cache").string();
  const std::string file = example("softmax.weft").string();
  const auto first =
      parse_json(weft({"run", file, "--check", "--json", "--cache-dir", cache}, kStoreAll));
  EXPECT_EQ(first["cache"]["status"], "miss");
  const std::string key = first["cache"]["key"];
  ASSERT_EQ(key.size(), 32u);
  const auto second =
      parse_json(weft({"run", file, "--check", "--json", "--cache-dir", cache}, kStoreAll));
  EXPECT_EQ(second["cache"]["status"], "hit");
  EXPECT_EQ(second["cache"]["key"], key);
  EXPECT_EQ(second["check_ok"], true);
  EXPECT_EQ(second["kernels"], first["kernels"]);

  const auto stats = parse_json(weft({"cache", "stats", "--json", "--cache-dir", cache}));
  EXPECT_EQ(stats["entries"], 1);
  EXPECT_EQ(stats["writes"], 1);
  EXPECT_EQ(stats["hits"], 1);
  EXPECT_EQ(stats["misses"]["not_found"], 1);
  EXPECT_GT(stats["compile_time_saved_s"].get<double>(), 0.0);
  EXPECT_GT(stats["bytes"].get<double>(), 0.0);

  const auto list = parse_json(weft({"cache", "ls", "--json", "--cache-dir", cache}));
  ASSERT_EQ(list["entries"].size(), 1u);
  EXPECT_EQ(list["entries"][0]["key"], key);
  EXPECT_EQ(list["entries"][0]["components"]["function_name"], "softmax");
  EXPECT_EQ(list["entries"][0]["hits"], 1);

  // A unique prefix selects the entry, as `ls` prints 12 digits.
  const Result show = weft({"cache", "show", key.substr(0, 12), "--cache-dir", cache});
  ASSERT_EQ(show.code, 0) << show.err;
  EXPECT_CONTAINS(show.out, key);
  EXPECT_CONTAINS(show.out, "softmax");
  // The device identity is part of the key.
  EXPECT_CONTAINS(show.out, opencl::info_of(testing::test_device()).device_name);

  const auto explain = parse_json(weft({"cache", "explain", "--json", "--cache-dir", cache}));
  ASSERT_EQ(explain["misses"].size(), 1u);
  EXPECT_EQ(explain["misses"][0]["key"], key);
  EXPECT_EQ(explain["misses"][0]["reason"], "not_found");
  EXPECT_EQ(explain["misses"][0]["now_cached"], true);

  const auto gc =
      parse_json(weft({"cache", "gc", "--max-size", "0", "--json", "--cache-dir", cache}));
  EXPECT_EQ(gc["removed_entries"], 1);
  EXPECT_EQ(gc["entries"], 0);
  const auto third = parse_json(weft({"run", file, "--json", "--cache-dir", cache}, kStoreAll));
  EXPECT_EQ(third["cache"]["status"], "miss");
  const auto cleared = parse_json(weft({"cache", "clear", "--json", "--cache-dir", cache}));
  EXPECT_EQ(cleared["removed_entries"], 1);
  const auto after = parse_json(weft({"cache", "stats", "--json", "--cache-dir", cache}));
  EXPECT_EQ(after["entries"], 0);
  EXPECT_EQ(after["hits"], 0);
}

TEST_F(CliTest, ExplainNamesTheComponentThatDiffers) {
  const std::string cache = (dir_ / "cache").string();
  const fs::path small = write_text("small.weft",
                                    "func @scale(%x: f32[4]) -> (f32[4]) {\n"
                                    "  %c = constant[value=2.0] : f32[]\n"
                                    "  %b = broadcast_in_dim[dims=[]] %c : f32[4]\n"
                                    "  %y = mul %x, %b : f32[4]\n"
                                    "  return %y\n}\n");
  const fs::path large = write_text("large.weft",
                                    "func @scale(%x: f32[8]) -> (f32[8]) {\n"
                                    "  %c = constant[value=2.0] : f32[]\n"
                                    "  %b = broadcast_in_dim[dims=[]] %c : f32[8]\n"
                                    "  %y = mul %x, %b : f32[8]\n"
                                    "  return %y\n}\n");
  ASSERT_EQ(weft({"run", small.string(), "--cache-dir", cache}, kStoreAll).code, 0);
  const auto run =
      parse_json(weft({"run", large.string(), "--json", "--cache-dir", cache}, kStoreAll));
  EXPECT_EQ(run["cache"]["status"], "miss");
  // A user hook changes only its own component.
  const auto hooked = parse_json(weft({"run", large.string(), "--json", "--cache-dir", cache},
                                      "WEFT_CACHE_KEY_HOOK=image-7 " + kStoreAll));
  EXPECT_EQ(hooked["cache"]["status"], "miss");
  const auto explain =
      parse_json(weft({"cache", "explain", "--json", "-n", "2", "--cache-dir", cache}));
  ASSERT_EQ(explain["misses"].size(), 2u);
  // Newest first: the hooked run differs from the stored f32[8] entry in the hook only.
  const auto& hook_miss = explain["misses"][0];
  EXPECT_EQ(hook_miss["key"], hooked["cache"]["key"]);
  ASSERT_FALSE(hook_miss["nearest"].empty());
  EXPECT_EQ(hook_miss["nearest"][0]["differing"], nlohmann::json::array({"user_hook"}));
  // The f32[8] miss finds the f32[4] entry of the same function, differing in its IR (and the
  // hooked f32[8] entry written since, differing in the hook).
  const auto& shape_miss = explain["misses"][1];
  EXPECT_EQ(shape_miss["function_name"], "scale");
  bool found_ir_neighbour = false;
  for (const auto& n : shape_miss["nearest"])
    found_ir_neighbour |=
        n["differing"] == nlohmann::json::array({"ir_text"}) && n["function_name"] == "scale";
  EXPECT_TRUE(found_ir_neighbour) << shape_miss.dump(2);
  const Result text = weft({"cache", "explain", "--cache-dir", cache});
  EXPECT_CONTAINS(text.out, "differs in: user_hook");
}

TEST_F(CliTest, NoCacheFlagAndEnvironmentTurnTheCacheOff) {
  const fs::path cache = dir_ / "cache";
  const std::string file = example("select_tril.weft").string();
  auto flag =
      parse_json(weft({"run", file, "--json", "--no-cache", "--cache-dir", cache.string()}));
  EXPECT_EQ(flag["cache"]["status"], "off");
  auto env = parse_json(
      weft({"run", file, "--json"}, "WEFT_CACHE=0 WEFT_CACHE_DIR=" + quote(cache.string())));
  EXPECT_EQ(env["cache"]["status"], "off");
  EXPECT_FALSE(fs::exists(cache));
  const Result stats = weft({"cache", "stats", "--cache-dir", cache.string()});
  EXPECT_EQ(stats.code, 0);
  EXPECT_CONTAINS(stats.out, "No cache at");
  EXPECT_FALSE(fs::exists(cache / "cache.sqlite3"));  // inspecting creates nothing
}

TEST_F(CliTest, DebugLogShowsEveryLookupWithItsKey) {
  const std::string cache = (dir_ / "cache").string();
  const std::string file = example("select_tril.weft").string();
  const Result miss =
      weft({"run", file, "--json", "--cache-dir", cache}, "WEFT_LOG=cache=debug " + kStoreAll);
  const std::string key = parse_json(miss)["cache"]["key"];
  EXPECT_CONTAINS(miss.err, "lookup " + key);
  EXPECT_CONTAINS(miss.err, "miss (not_found)");
  EXPECT_CONTAINS(miss.err, "store " + key);
  const Result hit =
      weft({"run", file, "--json", "--cache-dir", cache}, "WEFT_LOG=cache=debug " + kStoreAll);
  EXPECT_CONTAINS(hit.err, "lookup " + key);
  EXPECT_CONTAINS(hit.err, ": hit,");
  // Without WEFT_LOG a clean run says nothing about the cache.
  const Result quiet = weft({"run", file, "--cache-dir", cache}, kStoreAll);
  EXPECT_EQ(quiet.err, "");
}

TEST_F(CliTest, CacheCommandErrorsAreClear) {
  const std::string cache = (dir_ / "cache").string();
  ASSERT_EQ(
      weft({"run", example("select_tril.weft").string(), "--cache-dir", cache}, kStoreAll).code, 0);
  const Result unknown = weft({"cache", "show", "ffff0000", "--cache-dir", cache});
  EXPECT_EQ(unknown.code, 1);
  EXPECT_CONTAINS(unknown.err, "no entry has a key starting with \"ffff0000\"");
  // A value that is no size or age is a usage error, as for every other flag.
  const Result size = weft({"cache", "gc", "--max-size", "12q", "--cache-dir", cache});
  EXPECT_EQ(size.code, 2);
  EXPECT_CONTAINS(size.err,
                  "weft cache gc: --max-size: expected a size in bytes or with a unit, e.g. "
                  "512M or 2G, got '12q'");
  const Result age = weft({"cache", "gc", "--older-than", "soon", "--cache-dir", cache});
  EXPECT_EQ(age.code, 2);
  EXPECT_CONTAINS(age.err,
                  "weft cache gc: --older-than: expected an age in seconds or with a unit, e.g. "
                  "12h, 30d or 2w, got 'soon'");
  const Result bare = weft({"cache"});
  EXPECT_EQ(bare.code, 2);
  // A cache file that is not a database: inspecting reports it; running goes on uncached.
  fs::create_directories(dir_ / "bad");
  std::ofstream(dir_ / "bad" / "cache.sqlite3") << "not a database\n";
  const Result stats = weft({"cache", "stats", "--cache-dir", (dir_ / "bad").string()});
  EXPECT_EQ(stats.code, 1);
  EXPECT_CONTAINS(stats.err, "not a SQLite database");
  const Result run = weft({"run", example("select_tril.weft").string(), "--check", "--json",
                           "--cache-dir", (dir_ / "bad").string()});
  EXPECT_EQ(run.code, 0) << run.err;
  EXPECT_EQ(nlohmann::json::parse(run.out)["cache"]["status"], "off");
  EXPECT_CONTAINS(run.err, "warning");
  EXPECT_CONTAINS(run.err, "without the persistent cache");
}

}  // namespace
}  // namespace weft
