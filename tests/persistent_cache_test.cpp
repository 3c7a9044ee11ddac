// The persistent program cache as compilation uses it: a miss then a hit, damaged and
// driver-rejected entries, unusable databases, the writer policy, logging, and several `weft`
// processes sharing one database. Every test works in its own temporary cache directory,
// configured through ProcessCache (CTest's WEFT_CACHE_DIR is restored afterwards).
// cache_store_test.cpp covers the store on its own.
#include <spawn.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "support/device_check.h"
#include "support/raw_sqlite.h"
#include "support/reseal_entries.h"
#include "support/temp_dir.h"
#include "support/test_support.h"
#include "weft/cache/key.h"
#include "weft/cache/process_cache.h"
#include "weft/cache/settings.h"
#include "weft/cache/store.h"
#include "weft/cache/trust.h"
#include "weft/interp/interpreter.h"
#include "weft/log.h"
#include "weft/opencl/device.h"
#include "weft/weft.h"

extern char** environ;

namespace weft {
namespace {

namespace fs = std::filesystem;
using cache::CacheSettings;
using cache::MissReason;
using cache::ProcessCache;
using cache::ProgramStore;
using testing::compare_arrays;
using ::testing::HasSubstr;
using testing::MultiFn;
using namespace std::chrono_literals;

// ---------------------------------------------------------------------------------------------
// Helpers

// Each test file names its directories after itself.
class TempDir : public test::TempDir {
 public:
  TempDir() : test::TempDir("weft-pcache-test") {}
};

std::string slurp(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

// Captures every log line; the sink may be called from the background cache writer.
class LogCapture {
 public:
  LogCapture() : state_(std::make_shared<State>()) {
    log::set_sink([state = state_](const std::string& line) {
      std::lock_guard lock(state->mutex);
      state->lines.push_back(line);
    });
  }
  ~LogCapture() { log::set_sink({}); }
  LogCapture(const LogCapture&) = delete;
  LogCapture& operator=(const LogCapture&) = delete;

  std::vector<std::string> starting_with(const std::string& prefix) const {
    std::lock_guard lock(state_->mutex);
    std::vector<std::string> out;
    for (const std::string& line : state_->lines)
      if (line.rfind(prefix, 0) == 0) out.push_back(line);
    return out;
  }
  std::vector<std::string> cache_warnings() const { return starting_with("weft[cache] warning: "); }
  // Warnings can come from the background writer after the first run: waits for `count`.
  bool wait_for_cache_warnings(std::size_t count, std::chrono::seconds timeout = 30s) const {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (cache_warnings().size() < count) {
      if (std::chrono::steady_clock::now() > deadline) return false;
      std::this_thread::sleep_for(10ms);
    }
    return true;
  }
  std::string all() const {
    std::lock_guard lock(state_->mutex);
    std::string out;
    for (const std::string& line : state_->lines) out += line + "\n";
    return out;
  }

 private:
  struct State {
    std::mutex mutex;
    std::vector<std::string> lines;
  };
  std::shared_ptr<State> state_;
};

// Sets environment variables for one scope and restores them afterwards.
class EnvGuard {
 public:
  explicit EnvGuard(std::vector<std::string> names) {
    for (const std::string& name : names) {
      const char* value = std::getenv(name.c_str());
      saved_.emplace_back(name, value ? std::optional<std::string>(value) : std::nullopt);
      ::unsetenv(name.c_str());
    }
  }
  ~EnvGuard() {
    for (const auto& [name, value] : saved_) {
      if (value)
        ::setenv(name.c_str(), value->c_str(), 1);
      else
        ::unsetenv(name.c_str());
    }
  }
  EnvGuard(const EnvGuard&) = delete;
  EnvGuard& operator=(const EnvGuard&) = delete;

 private:
  std::vector<std::pair<std::string, std::optional<std::string>>> saved_;
};

opencl::OpenCLDevice& cl_device() {
  auto* device = dynamic_cast<opencl::OpenCLDevice*>(&default_device());
  if (!device) throw std::runtime_error("the default device is not an OpenCL device");
  return *device;
}

CacheSettings settings_in(const fs::path& directory, bool writer = true) {
  CacheSettings settings;
  settings.enabled = true;
  settings.directory = directory;
  settings.writer = writer;
  settings.writer_reason = "set by the test";
  // PoCL's own kernel cache can make a rebuild faster than the default threshold; every
  // program here must qualify for a row.
  settings.min_compile_time_s = 0;
  return settings;
}

// What one compile and its first run produced.
struct Outcome {
  CompiledInfo info;
  Graph graph;
  std::vector<HostArray> got;       // the device's outputs
  std::vector<HostArray> expected;  // the reference interpreter's outputs
};

// Traces `fn` under jit as `name`, compiles it on the default device (which consults the
// persistent cache unless the device already holds this graph in memory), runs it once and
// downloads the outputs, which also means the first run has finished.
Outcome compile_and_run(const MultiFn& fn, const std::string& name,
                        const std::vector<HostArray>& inputs) {
  auto f = jit([&fn](const std::vector<Array>& xs) { return fn(xs); }, {.name = name});
  std::vector<Array> args;
  for (const HostArray& h : inputs) args.push_back(Array::from_host(h));
  Lowered lowered = f.lower(args);
  std::shared_ptr<Executable> executable = lowered.compile();
  Outcome outcome;
  outcome.info = executable->info();
  outcome.graph = lowered.graph();
  // The jit call compiles the same graph again and gets this executable from the device's
  // in-memory cache, so its first run is this executable's first run.
  std::vector<Array> got = f(args);
  EXPECT_EQ(f.lower(args).compile().get(), executable.get())
      << "the jit call ran a different executable";
  for (const Array& a : got) outcome.got.push_back(a.to_host());
  outcome.expected = interpret(outcome.graph, inputs);
  return outcome;
}

// Empty when every output matches the interpreter.
std::string check_outcome(const Outcome& o) {
  if (o.got.size() != o.expected.size()) return "output count differs";
  for (std::size_t i = 0; i < o.got.size(); ++i) {
    std::string diff = compare_arrays(o.got[i], o.expected[i], 1e-5, 1e-5);
    if (!diff.empty()) return "output " + std::to_string(i) + ": " + diff;
  }
  return {};
}

// Empty when both runs produced bit-identical outputs.
std::string same_outputs(const Outcome& a, const Outcome& b) {
  if (a.got.size() != b.got.size()) return "output count differs";
  for (std::size_t i = 0; i < a.got.size(); ++i) {
    std::string diff = compare_arrays(a.got[i], b.got[i], 0, 0);
    if (!diff.empty()) return "output " + std::to_string(i) + ": " + diff;
  }
  return {};
}

// The entry is written by a background thread after the first run: polls for it.
bool wait_for_entry(ProgramStore& store, const std::string& key,
                    std::chrono::seconds timeout = 30s) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!store.show(key).has_value()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(10ms);
  }
  return true;
}

using test::raw_sql;

// The first column of the first row of `sql`, as text ("" when there is none).
std::string query_text(const fs::path& db_path, const std::string& sql) {
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(db_path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK) {
    sqlite3_close(db);
    return "<cannot open>";
  }
  // The process's own connection may still be closing (its last-connection checkpoint holds
  // the lock for a moment), as any other reader of a shared cache would have to wait for.
  sqlite3_busy_timeout(db, 10000);
  sqlite3_stmt* stmt = nullptr;
  std::string out;
  if (sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt, nullptr) == SQLITE_OK &&
      sqlite3_step(stmt) == SQLITE_ROW) {
    const unsigned char* text = sqlite3_column_text(stmt, 0);
    out = text ? reinterpret_cast<const char*>(text) : "";
  } else {
    out = std::string("<error: ") + sqlite3_errmsg(db) + ">";
  }
  sqlite3_finalize(stmt);
  sqlite3_close(db);
  return out;
}

std::uint64_t misses_of(const cache::CacheCounters& counters, MissReason reason) {
  return counters.misses[static_cast<std::size_t>(reason)];
}

// Deterministic inputs.
std::vector<HostArray> inputs_of(const std::vector<Shape>& shapes, unsigned seed) {
  std::mt19937 rng(seed);
  std::vector<HostArray> out;
  for (const Shape& shape : shapes)
    out.push_back(testing::random_array(DType::F32, shape, -1.0, 1.0, rng));
  return out;
}

// Two small single-kernel programs (distinct IR, so distinct keys).
const MultiFn kScaleTanh = [](const std::vector<Array>& xs) {
  return std::vector<Array>{np::tanh(xs[0] * 3.0 + xs[1])};
};
const MultiFn kSquareSum = [](const std::vector<Array>& xs) {
  return std::vector<Array>{xs[0] * xs[0] - xs[1] * 0.5};
};
std::vector<HostArray> small_inputs(unsigned seed = 1) {
  return inputs_of({{37}, {37}}, seed);
}

// Several fused kernels: a reduction, elementwise work and a matrix product.
const MultiFn kSeveralKernels = [](const std::vector<Array>& xs) {
  const Array& x = xs[0];                                        // [6, 8]
  const Array& w = xs[1];                                        // [8, 5]
  Array row_sums = np::sum(np::exp(x), {1}, /*keepdims=*/true);  // [6, 1]
  Array normalized = x / row_sums;                               // [6, 8]
  Array product = np::matmul(normalized, w);                     // [6, 5]
  return std::vector<Array>{np::tanh(product) + 1.0, np::max(x, {0})};
};
std::vector<HostArray> several_inputs() {
  return inputs_of({{6, 8}, {8, 5}}, 7);
}

// ---------------------------------------------------------------------------------------------
// In-process tests, each in a fresh temporary cache.

class PersistentCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    log::set_levels("warning");
    configure(settings_in(dir_.path()));
  }
  void TearDown() override {
    cl_device().forget_compiled();
    ProcessCache::instance().configure_from_environment();
    log::reset_levels_from_environment();
  }

  // Replaces the process's cache settings and makes the next compile of every graph consult
  // the persistent cache again.
  void configure(const CacheSettings& settings) {
    ProcessCache::instance().configure(settings);
    cl_device().forget_compiled();
  }
  std::shared_ptr<ProgramStore> store() {
    auto store = ProcessCache::instance().store();
    EXPECT_TRUE(store) << "the process cache has no store";
    return store;
  }
  // Compiles (a miss), runs and waits until the program is stored.
  Outcome store_program(const MultiFn& fn, const std::string& name,
                        const std::vector<HostArray>& inputs) {
    Outcome o = compile_and_run(fn, name, inputs);
    EXPECT_EQ(o.info.cache_status, "miss");
    EXPECT_EQ(check_outcome(o), "");
    auto s = store();
    if (s) {
      EXPECT_TRUE(wait_for_entry(*s, o.info.cache_key)) << "never stored " << name;
    }
    return o;
  }

  TempDir dir_;
};

// "weft[cache] debug: lookup KEY (FUNCTION on DEVICE): OUTCOME...", the debug log's lookup line.
bool is_lookup_line(const std::string& line, const std::string& key, const std::string& function,
                    const std::string& outcome) {
  const std::string head = "weft[cache] debug: lookup " + key + " (" + function + " on ";
  if (line.rfind(head, 0) != 0) return false;
  const std::size_t close = line.find("): ", head.size());
  return close != std::string::npos && line.compare(close + 3, outcome.size(), outcome) == 0;
}

TEST_F(PersistentCacheTest, MissThenHitInOneProcess) {
  const auto inputs = small_inputs();
  const Outcome miss = compile_and_run(kScaleTanh, "scale_tanh", inputs);
  EXPECT_EQ(miss.info.cache_status, "miss");
  ASSERT_EQ(miss.info.cache_key.size(), 32u);
  EXPECT_EQ(miss.info.cache_key, cache::compute_key(cl_device().cache_components(miss.graph)));
  EXPECT_EQ(check_outcome(miss), "");
  // Independently of the interpreter: tanh(3x + y).
  {
    const auto x = inputs[0].to_vector<float>(), y = inputs[1].to_vector<float>();
    const auto got = miss.got.at(0).to_vector<float>();
    ASSERT_EQ(got.size(), x.size());
    for (std::size_t i = 0; i < x.size(); ++i)
      EXPECT_NEAR(got[i], std::tanh(3.0f * x[i] + y[i]), 1e-5) << "at " << i;
  }

  auto s = store();
  ASSERT_TRUE(s);
  ASSERT_TRUE(wait_for_entry(*s, miss.info.cache_key));
  EXPECT_EQ(s->path(), dir_.path() / "cache.sqlite3");
  const auto entry = s->show(miss.info.cache_key);
  ASSERT_TRUE(entry.has_value());
  EXPECT_EQ(entry->components.function_name, "scale_tanh");
  EXPECT_GT(entry->uncompressed_size, 0u);

  cl_device().forget_compiled();
  const Outcome hit = compile_and_run(kScaleTanh, "scale_tanh", inputs);
  EXPECT_EQ(hit.info.cache_status, "hit");
  EXPECT_EQ(hit.info.cache_key, miss.info.cache_key);
  EXPECT_EQ(check_outcome(hit), "");
  EXPECT_EQ(same_outputs(hit, miss), "");

  // The hit wrote nothing: one entry, one write.
  const cache::StoreStats stats = s->stats();
  EXPECT_EQ(stats.entries, 1u);
  EXPECT_EQ(stats.process.writes, 1u);
  EXPECT_GE(stats.process.hits, 1u);
  EXPECT_EQ(misses_of(stats.process, MissReason::not_found), 1u);
  EXPECT_EQ(stats.process.total_misses(), 1u);
  // stats() flushed the bookkeeping: the persisted totals agree.
  EXPECT_EQ(stats.total.writes, 1u);
  EXPECT_GE(stats.total.hits, 1u);
  EXPECT_EQ(s->show(miss.info.cache_key)->hit_count, 1u);
}

// A loop body multiplying by `factor` inside a while loop, a scan and a cond: programs whose
// plans nest blocks. Two factors give graphs that differ only inside a region.
MultiFn control_flow_program(float factor) {
  return [factor](const std::vector<Array>& xs) {
    const Array& x = xs[0];  // f32[4, 8]
    auto scanned = lax::scan(
        [factor](const Array& c, const Array& row) {
          Array next = c * factor + row;
          return std::pair{next, np::tanh(next)};
        },
        np::zeros({8}), x);
    Array count = lax::while_loop([](const Array& i) { return i < 5; },
                                  [](const Array& i) { return i + 1; }, Array::scalar_int(0));
    Array picked = lax::cond(
        np::sum(scanned.first) > 0.0f, [](const Array& v) { return v * 2.0f; },
        [](const Array& v) { return -v; }, scanned.first);
    return std::vector<Array>{picked, scanned.second, count};
  };
}

TEST_F(PersistentCacheTest, ControlFlowProgramsHitAndBodiesKeyApart) {
  const auto inputs = inputs_of({{4, 8}}, 3);
  const MultiFn program = control_flow_program(0.5f);
  const Outcome miss = store_program(program, "control_flow", inputs);
  // Loops and conds are steps of the stored plan; the hit regenerates and compares them.
  cl_device().forget_compiled();
  const Outcome hit = compile_and_run(program, "control_flow", inputs);
  EXPECT_EQ(hit.info.cache_status, "hit");
  EXPECT_EQ(hit.info.cache_key, miss.info.cache_key);
  EXPECT_EQ(check_outcome(hit), "");
  EXPECT_EQ(same_outputs(hit, miss), "");

  // The same program with another factor in the scan body only: another key, another entry,
  // and results of its own.
  cl_device().forget_compiled();
  const Outcome other = compile_and_run(control_flow_program(0.25f), "control_flow", inputs);
  EXPECT_EQ(other.info.cache_status, "miss");
  EXPECT_NE(other.info.cache_key, miss.info.cache_key);
  EXPECT_EQ(check_outcome(other), "");
  EXPECT_NE(same_outputs(other, miss), "");
}

TEST_F(PersistentCacheTest, SeveralFusedKernelsRoundTrip) {
  const auto inputs = several_inputs();
  const Outcome miss = compile_and_run(kSeveralKernels, "several", inputs);
  ASSERT_EQ(miss.info.cache_status, "miss");
  EXPECT_EQ(check_outcome(miss), "");
  std::set<std::string> kinds;
  for (const KernelSummary& k : miss.info.kernels) kinds.insert(k.kind);
  EXPECT_GE(miss.info.kernels.size(), 3u);
  EXPECT_TRUE(kinds.count("reduce")) << "no reduction kernel";
  EXPECT_TRUE(kinds.count("dot")) << "no dot kernel";
  EXPECT_TRUE(kinds.count("loop")) << "no elementwise kernel";

  auto s = store();
  ASSERT_TRUE(s);
  ASSERT_TRUE(wait_for_entry(*s, miss.info.cache_key));

  cl_device().forget_compiled();
  const Outcome hit = compile_and_run(kSeveralKernels, "several", inputs);
  ASSERT_EQ(hit.info.cache_status, "hit");
  EXPECT_EQ(check_outcome(hit), "");
  EXPECT_EQ(same_outputs(hit, miss), "");

  ASSERT_EQ(hit.info.kernels.size(), miss.info.kernels.size());
  for (std::size_t i = 0; i < miss.info.kernels.size(); ++i) {
    const KernelSummary &a = miss.info.kernels[i], &b = hit.info.kernels[i];
    EXPECT_EQ(b.name, a.name) << "kernel " << i;
    EXPECT_EQ(b.kind, a.kind) << "kernel " << i;
    EXPECT_EQ(b.launches, a.launches) << "kernel " << i;
    EXPECT_EQ(b.fused_ops, a.fused_ops) << "kernel " << i;
    EXPECT_EQ(b.elements, a.elements) << "kernel " << i;
  }
  EXPECT_EQ(hit.info.intermediate_buffers, miss.info.intermediate_buffers);
  EXPECT_EQ(hit.info.source, miss.info.source);
}

// Kernels of the same code are kept once (launches name the function they run): the stored
// plan carries that, and a hit runs the shared functions as the miss did.
TEST_F(PersistentCacheTest, SharedKernelsRoundTrip) {
  const MultiFn sorts = [](const std::vector<Array>& xs) {
    return std::vector<Array>{np::sort(xs[0]), np::sort(xs[1]), np::cumsum(xs[0], 1)};
  };
  const auto inputs = inputs_of({{4, 300}, {4, 300}}, 11);
  const Outcome miss = compile_and_run(sorts, "shared", inputs);
  ASSERT_EQ(miss.info.cache_status, "miss");
  EXPECT_EQ(check_outcome(miss), "");
  EXPECT_NE(miss.info.source.find(" runs as "), std::string::npos) << miss.info.source;

  auto s = store();
  ASSERT_TRUE(s);
  ASSERT_TRUE(wait_for_entry(*s, miss.info.cache_key));
  cl_device().forget_compiled();
  const Outcome hit = compile_and_run(sorts, "shared", inputs);
  ASSERT_EQ(hit.info.cache_status, "hit");
  EXPECT_EQ(check_outcome(hit), "");
  EXPECT_EQ(same_outputs(hit, miss), "");
  EXPECT_EQ(hit.info.source, miss.info.source);
}

TEST_F(PersistentCacheTest, CorruptEntryWarnsOnceRecompilesAndIsRewritten) {
  const auto inputs = small_inputs(2);
  const std::string key = store_program(kScaleTanh, "scale_tanh", inputs).info.cache_key;
  auto s = store();
  ASSERT_TRUE(s);
  ASSERT_EQ(s->list().size(), 1u);
  raw_sql(s->path(), "UPDATE payloads SET binary = zeroblob(length(binary))");
  // Damage behind a valid MAC (as if the disk garbled bytes before they were signed), so the
  // check after authentication is the one that fires.
  const std::string secret = slurp(cache::default_key_file());
  ASSERT_FALSE(secret.empty()) << "no key at " << cache::default_key_file();
  test::reseal_entries(
      s->path(), std::span(reinterpret_cast<const std::uint8_t*>(secret.data()), secret.size()));

  LogCapture capture;
  cl_device().forget_compiled();
  const Outcome damaged = compile_and_run(kScaleTanh, "scale_tanh", inputs);
  EXPECT_EQ(damaged.info.cache_status, "miss");
  EXPECT_EQ(damaged.info.cache_key, key);
  EXPECT_EQ(check_outcome(damaged), "");
  // Rewritten after the first run.
  ASSERT_TRUE(wait_for_entry(*s, key));

  const auto warnings = capture.cache_warnings();
  ASSERT_EQ(warnings.size(), 1u) << capture.all();
  EXPECT_THAT(warnings[0], HasSubstr(key));
  EXPECT_THAT(warnings[0], HasSubstr("zstd"));
  EXPECT_EQ(misses_of(s->stats().process, MissReason::decompression_failed), 1u);

  // The rewritten entry is good: a plain lookup hits and the next compile loads it.
  EXPECT_TRUE(s->lookup(cl_device().cache_components(damaged.graph)).hit());
  cl_device().forget_compiled();
  const Outcome healed = compile_and_run(kScaleTanh, "scale_tanh", inputs);
  EXPECT_EQ(healed.info.cache_status, "hit");
  EXPECT_EQ(check_outcome(healed), "");
  EXPECT_EQ(capture.cache_warnings().size(), 1u) << capture.all();
}

TEST_F(PersistentCacheTest, DriverRejectedEntryIsDeletedAndRewritten) {
  const auto inputs = small_inputs(3);
  const Outcome original = store_program(kScaleTanh, "scale_tanh", inputs);
  const std::string key = original.info.cache_key;
  auto s = store();
  ASSERT_TRUE(s);
  const cache::CacheKeyComponents components = cl_device().cache_components(original.graph);
  ASSERT_EQ(cache::compute_key(components), key);
  const cache::LookupResult real = s->lookup(components);
  ASSERT_TRUE(real.hit()) << real.detail;
  ASSERT_FALSE(real.metadata.empty());

  // Valid metadata and checksums, but a binary no driver accepts.
  s->clear();
  std::vector<std::uint8_t> garbage(4096);
  for (std::size_t i = 0; i < garbage.size(); ++i)
    garbage[i] = static_cast<std::uint8_t>((i * 131 + 7) % 251);
  ASSERT_EQ(s->insert(components, garbage, real.metadata, 1.0).status,
            cache::InsertStatus::written);
  const cache::StoreStats before = s->stats();

  LogCapture capture;
  cl_device().forget_compiled();
  const Outcome rejected = compile_and_run(kScaleTanh, "scale_tanh", inputs);
  EXPECT_EQ(rejected.info.cache_status, "miss");
  EXPECT_EQ(rejected.info.cache_key, key);
  EXPECT_EQ(check_outcome(rejected), "");
  EXPECT_EQ(same_outputs(rejected, original), "");

  // Rewritten after the first run, with the real binary this time.
  ASSERT_TRUE(wait_for_entry(*s, key));
  const cache::LookupResult rewritten = s->lookup(components);
  ASSERT_TRUE(rewritten.hit()) << rewritten.detail;
  EXPECT_NE(rewritten.binary, garbage);

  const auto warnings = capture.cache_warnings();
  ASSERT_EQ(warnings.size(), 1u) << capture.all();
  EXPECT_THAT(warnings[0], HasSubstr(key));
  EXPECT_THAT(warnings[0], HasSubstr("unusable"));
  EXPECT_THAT(warnings[0], HasSubstr("deleted it"));

  const cache::StoreStats after = s->stats();
  EXPECT_EQ(misses_of(after.process, MissReason::rejected) -
                misses_of(before.process, MissReason::rejected),
            1u);
  EXPECT_EQ(misses_of(after.total, MissReason::rejected), 1u);
  EXPECT_EQ(after.process.writes - before.process.writes, 1u);
  bool remembered = false;
  for (const cache::RecentMiss& m : s->recent_misses())
    remembered |= m.key == key && m.reason == MissReason::rejected;
  EXPECT_TRUE(remembered) << "the rejection is not among the recent misses";
}

TEST_F(PersistentCacheTest, UnparsableLaunchPlanIsRejectedLikeABadBinary) {
  const auto inputs = small_inputs(10);
  const Outcome original = store_program(kSquareSum, "square_sum", inputs);
  auto s = store();
  ASSERT_TRUE(s);
  const cache::CacheKeyComponents components = cl_device().cache_components(original.graph);
  const cache::LookupResult real = s->lookup(components);
  ASSERT_TRUE(real.hit()) << real.detail;
  // The real binary, but metadata of a plan format this weft does not know.
  s->clear();
  ASSERT_EQ(s->insert(components, real.binary, R"({"format": 999})", 1.0).status,
            cache::InsertStatus::written);

  LogCapture capture;
  cl_device().forget_compiled();
  const Outcome rejected = compile_and_run(kSquareSum, "square_sum", inputs);
  EXPECT_EQ(rejected.info.cache_status, "miss");
  EXPECT_EQ(check_outcome(rejected), "");
  EXPECT_EQ(same_outputs(rejected, original), "");
  ASSERT_TRUE(wait_for_entry(*s, original.info.cache_key));
  const cache::LookupResult rewritten = s->lookup(components);
  ASSERT_TRUE(rewritten.hit()) << rewritten.detail;
  EXPECT_NE(rewritten.metadata, R"({"format": 999})");

  const auto warnings = capture.cache_warnings();
  ASSERT_EQ(warnings.size(), 1u) << capture.all();
  EXPECT_THAT(warnings[0], HasSubstr(original.info.cache_key));
  EXPECT_THAT(warnings[0], HasSubstr("launch plan does not parse"));
  EXPECT_EQ(misses_of(s->stats().process, MissReason::rejected), 1u);
}

// Compiles two different programs with the cache unusable: both succeed, one warning in all.
void expect_runs_uncached(const LogCapture& capture, const std::string& first_status) {
  const Outcome first = compile_and_run(kScaleTanh, "scale_tanh", small_inputs(4));
  EXPECT_EQ(first.info.cache_status, first_status);
  EXPECT_EQ(check_outcome(first), "");
  ASSERT_TRUE(capture.wait_for_cache_warnings(1)) << "no warning; log:\n" << capture.all();
  const Outcome second = compile_and_run(kSquareSum, "square_sum", small_inputs(5));
  EXPECT_EQ(second.info.cache_status, "off");
  EXPECT_TRUE(second.info.cache_key.empty());
  EXPECT_EQ(check_outcome(second), "");
  EXPECT_EQ(ProcessCache::instance().store(), nullptr);
  EXPECT_EQ(capture.cache_warnings().size(), 1u) << capture.all();
}

TEST_F(PersistentCacheTest, CacheFileThatIsNotADatabase) {
  const fs::path directory = dir_.path() / "text";
  fs::create_directories(directory);
  std::ofstream(directory / "cache.sqlite3") << std::string(8192, 't') << "\nnot a database\n";
  LogCapture capture;
  configure(settings_in(directory));
  expect_runs_uncached(capture, "off");
  ASSERT_FALSE(capture.cache_warnings().empty());
  EXPECT_THAT(capture.cache_warnings()[0], HasSubstr("not a SQLite database"));
  EXPECT_THAT(capture.cache_warnings()[0], HasSubstr((directory / "cache.sqlite3").string()));
  // The file was left alone.
  EXPECT_THAT(slurp(directory / "cache.sqlite3"), HasSubstr("not a database"));
}

TEST_F(PersistentCacheTest, CacheDirectoryBelowARegularFile) {
  // A directory below a regular file can never be created, even by root.
  std::ofstream(dir_.path() / "plain-file") << "x";
  LogCapture capture;
  configure(settings_in(dir_.path() / "plain-file" / "weft"));
  expect_runs_uncached(capture, "off");
  ASSERT_FALSE(capture.cache_warnings().empty());
  EXPECT_THAT(capture.cache_warnings()[0], HasSubstr("cannot create directory"));
  EXPECT_TRUE(fs::is_regular_file(dir_.path() / "plain-file"));
}

TEST_F(PersistentCacheTest, DatabaseLockedPastTheBusyTimeoutWhileWriting) {
  auto s = store();
  ASSERT_TRUE(s);
  const fs::path path = s->path();
  s.reset();
  // Another connection holds the write lock for the rest of the test. WAL readers still get
  // through, so the lookup is an ordinary miss; the write after the first run times out.
  sqlite3* other = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &other), SQLITE_OK);
  sqlite3_busy_timeout(other, 10000);
  ASSERT_EQ(sqlite3_exec(other, "BEGIN EXCLUSIVE; INSERT INTO counters VALUES ('x', 1);", nullptr,
                         nullptr, nullptr),
            SQLITE_OK);
  {
    LogCapture capture;
    expect_runs_uncached(capture, "miss");
    ASSERT_FALSE(capture.cache_warnings().empty());
    EXPECT_THAT(capture.cache_warnings()[0], HasSubstr("busy timeout"));
    EXPECT_THAT(capture.cache_warnings()[0], HasSubstr(path.string()));
  }
  sqlite3_exec(other, "ROLLBACK", nullptr, nullptr, nullptr);
  sqlite3_close(other);
  // Nothing was written while the lock was held.
  EXPECT_EQ(query_text(path, "SELECT count(*) FROM entries"), "0");
}

TEST_F(PersistentCacheTest, DatabaseLockedPastTheBusyTimeoutWhileOpening) {
  // A rollback-journal database (not yet switched to WAL) locked before the process opens it:
  // even reading the schema waits for the lock.
  const fs::path directory = dir_.path() / "locked";
  fs::create_directories(directory);
  const fs::path path = directory / "cache.sqlite3";
  sqlite3* other = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &other), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(other, "CREATE TABLE t(x); BEGIN EXCLUSIVE; INSERT INTO t VALUES (1);",
                         nullptr, nullptr, nullptr),
            SQLITE_OK);
  {
    LogCapture capture;
    configure(settings_in(directory));
    expect_runs_uncached(capture, "off");
    ASSERT_FALSE(capture.cache_warnings().empty());
    EXPECT_THAT(capture.cache_warnings()[0], HasSubstr("busy timeout"));
  }
  sqlite3_exec(other, "ROLLBACK", nullptr, nullptr, nullptr);
  sqlite3_close(other);
}

TEST(CacheSettingsFromEnvironment, WriterPolicy) {
  EnvGuard guard({"WEFT_CACHE", "WEFT_CACHE_DIR", "WEFT_CACHE_WRITER", "WEFT_CACHE_KEY_HOOK",
                  "WEFT_CACHE_MAX_SIZE", "WEFT_CACHE_MIN_COMPILE_TIME", "OMPI_COMM_WORLD_RANK",
                  "PMI_RANK", "PMIX_RANK", "MV2_COMM_WORLD_RANK", "SLURM_PROCID", "PALS_RANKID",
                  "FLUX_TASK_RANK"});
  std::vector<std::string> warnings;
  CacheSettings s = cache::settings_from_environment(&warnings);
  EXPECT_TRUE(s.enabled);
  EXPECT_TRUE(s.writer);
  EXPECT_EQ(s.writer_reason, "default");
  EXPECT_TRUE(warnings.empty());

  // Every launcher's rank variable: rank 0 writes, any other rank does not.
  for (const char* name : {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK", "MV2_COMM_WORLD_RANK",
                           "SLURM_PROCID", "PALS_RANKID", "FLUX_TASK_RANK"}) {
    ::setenv(name, "0", 1);
    s = cache::settings_from_environment(&warnings);
    EXPECT_TRUE(s.writer) << name;
    EXPECT_THAT(s.writer_reason, HasSubstr(name));
    ::setenv(name, "3", 1);
    s = cache::settings_from_environment(&warnings);
    EXPECT_FALSE(s.writer) << name;
    EXPECT_THAT(s.writer_reason, HasSubstr(std::string(name) + "=3"));
    ::unsetenv(name);
  }
  EXPECT_TRUE(warnings.empty());

  // An explicit WEFT_CACHE_WRITER wins over the rank, either way.
  ::setenv("OMPI_COMM_WORLD_RANK", "3", 1);
  ::setenv("WEFT_CACHE_WRITER", "1", 1);
  s = cache::settings_from_environment(&warnings);
  EXPECT_TRUE(s.writer);
  EXPECT_EQ(s.writer_reason, "WEFT_CACHE_WRITER=1");
  ::setenv("OMPI_COMM_WORLD_RANK", "0", 1);
  ::setenv("WEFT_CACHE_WRITER", "0", 1);
  s = cache::settings_from_environment(&warnings);
  EXPECT_FALSE(s.writer);
  EXPECT_TRUE(warnings.empty());

  // A malformed WEFT_CACHE_WRITER is warned about and the rank decides.
  ::setenv("OMPI_COMM_WORLD_RANK", "3", 1);
  ::setenv("WEFT_CACHE_WRITER", "maybe", 1);
  s = cache::settings_from_environment(&warnings);
  EXPECT_FALSE(s.writer);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_THAT(warnings[0], HasSubstr("WEFT_CACHE_WRITER"));
  EXPECT_THAT(warnings[0], HasSubstr("maybe"));
  ::unsetenv("OMPI_COMM_WORLD_RANK");
  warnings.clear();
  s = cache::settings_from_environment(&warnings);
  EXPECT_TRUE(s.writer);
  EXPECT_EQ(warnings.size(), 1u);
  ::unsetenv("WEFT_CACHE_WRITER");

  // Other malformed values: a warning each, defaults kept.
  warnings.clear();
  ::setenv("WEFT_CACHE", "sometimes", 1);
  ::setenv("WEFT_CACHE_MAX_SIZE", "lots", 1);
  ::setenv("WEFT_CACHE_MIN_COMPILE_TIME", "soon", 1);
  s = cache::settings_from_environment(&warnings);
  EXPECT_TRUE(s.enabled);
  EXPECT_EQ(s.max_bytes, std::uint64_t{1} << 30);
  EXPECT_DOUBLE_EQ(s.min_compile_time_s, 0.01);
  ASSERT_EQ(warnings.size(), 3u);
  EXPECT_THAT(warnings[0], HasSubstr("WEFT_CACHE=\"sometimes\""));
  EXPECT_THAT(warnings[1], HasSubstr("WEFT_CACHE_MAX_SIZE"));
  EXPECT_THAT(warnings[2], HasSubstr("WEFT_CACHE_MIN_COMPILE_TIME"));

  // Well-formed values.
  warnings.clear();
  ::setenv("WEFT_CACHE", "off", 1);
  ::setenv("WEFT_CACHE_DIR", "/somewhere/else", 1);
  ::setenv("WEFT_CACHE_MAX_SIZE", "512M", 1);
  ::setenv("WEFT_CACHE_MIN_COMPILE_TIME", "20ms", 1);
  ::setenv("WEFT_CACHE_KEY_HOOK", "image@sha256:abc", 1);
  s = cache::settings_from_environment(&warnings);
  EXPECT_TRUE(warnings.empty());
  EXPECT_FALSE(s.enabled);
  EXPECT_EQ(s.directory, fs::path("/somewhere/else"));
  EXPECT_EQ(s.max_bytes, std::uint64_t{512} << 20);
  EXPECT_DOUBLE_EQ(s.min_compile_time_s, 0.02);
  EXPECT_EQ(s.user_hook, "image@sha256:abc");
}

TEST_F(PersistentCacheTest, ReadOnlyProcessHitsButNeverWrites) {
  const auto inputs = small_inputs(6);
  const std::string stored_key = store_program(kScaleTanh, "scale_tanh", inputs).info.cache_key;
  const fs::path path = store()->path();

  // As rank 3 of a job would: same directory, no writes.
  configure(settings_in(dir_.path(), /*writer=*/false));
  auto s = store();
  ASSERT_TRUE(s);
  EXPECT_FALSE(s->options().writer);

  const Outcome hit = compile_and_run(kScaleTanh, "scale_tanh", inputs);
  EXPECT_EQ(hit.info.cache_status, "hit");
  EXPECT_EQ(check_outcome(hit), "");

  const Outcome miss = compile_and_run(kSquareSum, "square_sum", small_inputs(7));
  EXPECT_EQ(miss.info.cache_status, "miss");
  ASSERT_EQ(miss.info.cache_key.size(), 32u);
  EXPECT_EQ(check_outcome(miss), "");

  // The first run is over (its outputs were downloaded); a write would be scheduled by now.
  // Give a (wrongly) scheduled write time to land before checking that none did.
  EXPECT_FALSE(wait_for_entry(*s, miss.info.cache_key, 1s)) << "a read-only process wrote";
  s->flush();  // no hit bookkeeping either
  ProcessCache::instance().flush();
  EXPECT_EQ(query_text(path, "SELECT count(*) FROM entries"), "1");
  EXPECT_EQ(query_text(path, "SELECT key FROM entries"), stored_key);
  EXPECT_EQ(query_text(path, "SELECT hit_count FROM entries"), "0");
  EXPECT_EQ(query_text(path, "SELECT count(*) FROM recent_misses WHERE key = '" +
                                 miss.info.cache_key + "'"),
            "0");
  EXPECT_THROW(s->clear(), CacheError);
}

TEST_F(PersistentCacheTest, DisabledCacheIsOffAndCreatesNothing) {
  const fs::path directory = dir_.path() / "never-created";
  CacheSettings settings = settings_in(directory);
  settings.enabled = false;
  configure(settings);
  EXPECT_EQ(ProcessCache::instance().store(), nullptr);
  const Outcome o = compile_and_run(kScaleTanh, "scale_tanh", small_inputs(8));
  EXPECT_EQ(o.info.cache_status, "off");
  EXPECT_TRUE(o.info.cache_key.empty());
  EXPECT_EQ(check_outcome(o), "");
  ProcessCache::instance().flush();
  EXPECT_FALSE(fs::exists(directory));
  EXPECT_TRUE(fs::is_empty(dir_.path()));
}

TEST_F(PersistentCacheTest, DebugLogNamesTheKeyOfEachMissAndHit) {
  LogCapture capture;
  log::set_levels("cache=debug");
  const auto inputs = small_inputs(9);
  const Outcome miss = compile_and_run(kSquareSum, "square_sum", inputs);
  ASSERT_EQ(miss.info.cache_status, "miss");
  auto s = store();
  ASSERT_TRUE(s);
  ASSERT_TRUE(wait_for_entry(*s, miss.info.cache_key));
  cl_device().forget_compiled();
  const Outcome hit = compile_and_run(kSquareSum, "square_sum", inputs);
  ASSERT_EQ(hit.info.cache_status, "hit");
  EXPECT_EQ(hit.info.cache_key, miss.info.cache_key);

  const auto lookups = capture.starting_with("weft[cache] debug: lookup ");
  ASSERT_EQ(lookups.size(), 2u) << capture.all();
  EXPECT_TRUE(is_lookup_line(lookups[0], miss.info.cache_key, "square_sum", "miss")) << lookups[0];
  EXPECT_THAT(lookups[0], HasSubstr("not_found"));
  EXPECT_TRUE(is_lookup_line(lookups[1], hit.info.cache_key, "square_sum", "hit")) << lookups[1];
  // The write in between is logged too, under the same key.
  bool stored = false;
  for (const std::string& line : capture.starting_with("weft[cache] debug: store "))
    stored |= contains(line, miss.info.cache_key) && contains(line, "written");
  EXPECT_TRUE(stored) << capture.all();
  EXPECT_TRUE(capture.cache_warnings().empty()) << capture.all();
}

// A background write to a cache the application has since replaced (configure()) may fail;
// that failure must not turn off the new, healthy cache.
TEST_F(PersistentCacheTest, StaleWriteFailureDoesNotDisableANewConfiguration) {
  const fs::path old_directory = dir_.path() / "old", new_directory = dir_.path() / "new";
  configure(settings_in(old_directory));
  auto old_store = store();
  ASSERT_TRUE(old_store);
  const fs::path old_path = old_store->path();
  old_store.reset();
  sqlite3* other = nullptr;
  ASSERT_EQ(sqlite3_open(old_path.c_str(), &other), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(other, "BEGIN EXCLUSIVE; INSERT INTO counters VALUES ('x', 1);", nullptr,
                         nullptr, nullptr),
            SQLITE_OK);
  LogCapture capture;
  const Outcome first = compile_and_run(kScaleTanh, "scale_tanh", small_inputs(4));
  EXPECT_EQ(first.info.cache_status, "miss");
  // Its write to the old, locked store is pending (it waits out the busy timeout).
  configure(settings_in(new_directory));
  auto new_store = store();
  ASSERT_TRUE(new_store);
  ASSERT_TRUE(capture.wait_for_cache_warnings(1)) << capture.all();
  EXPECT_THAT(capture.cache_warnings()[0], HasSubstr(old_path.string()));
  sqlite3_exec(other, "ROLLBACK", nullptr, nullptr, nullptr);
  sqlite3_close(other);

  const Outcome second = compile_and_run(kSquareSum, "square_sum", small_inputs(5));
  EXPECT_EQ(check_outcome(second), "");
  EXPECT_EQ(second.info.cache_status, "miss");
  EXPECT_EQ(ProcessCache::instance().store(), new_store);
  if (second.info.cache_status == "miss") {
    EXPECT_TRUE(wait_for_entry(*new_store, second.info.cache_key));
  }
}

// ---------------------------------------------------------------------------------------------
// Several `weft` processes against one database.

#ifdef WEFT_CLI_PATH

// Whether a child's stderr logs a lookup of `key` with `outcome`, whatever the function.
bool logs_lookup(const std::string& err, const std::string& key, const std::string& outcome) {
  std::istringstream lines(err);
  const std::string head = "weft[cache] debug: lookup " + key + " (";
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind(head, 0) != 0) continue;
    const std::size_t close = line.find("): ", head.size());
    if (close != std::string::npos && line.compare(close + 3, outcome.size(), outcome) == 0)
      return true;
  }
  return false;
}

std::string quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

pid_t spawn_shell(const std::string& command) {
  pid_t pid = -1;
  std::string shell = "/bin/sh", flag = "-c", text = command;
  char* argv[] = {shell.data(), flag.data(), text.data(), nullptr};
  if (::posix_spawn(&pid, "/bin/sh", nullptr, nullptr, argv, environ) != 0) return -1;
  return pid;
}

int wait_for_exit(pid_t pid) {
  int status = 0;
  if (::waitpid(pid, &status, 0) != pid) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

const char kSharedProgram[] = R"(# Shared by every process.
func @shared(%x: f32[64], %y: f32[64]) -> (f32[64], f32[]) {
  %e = exp %x : f32[64]
  %s = add %e, %y : f32[64]
  %t = reduce_sum[axes=[0]] %s : f32[]
  return %s, %t
}
)";

// Process i's own program: a different constant, so a different key.
std::string own_program(int i) {
  return "func @own" + std::to_string(i) + R"((%x: f32[32]) -> (f32[32]) {
  %c = constant[value=)" +
         std::to_string(i) +
         R"(.5] : f32[]
  %cb = broadcast_in_dim[dims=[]] %c : f32[32]
  %y = mul %x, %cb : f32[32]
  %z = tanh %y : f32[32]
  return %z
}
)";
}

TEST(PersistentCacheProcesses, FourProcessesShareOneDatabase) {
  constexpr int kProcesses = 4;
  TempDir dir;
  const fs::path cache_dir = dir.path() / "shared-cache";
  const fs::path shared_file = dir.path() / "shared.weft";
  std::ofstream(shared_file) << kSharedProgram;
  std::vector<fs::path> own_files;
  for (int i = 0; i < kProcesses; ++i) {
    own_files.push_back(dir.path() / ("own" + std::to_string(i) + ".weft"));
    std::ofstream(own_files.back()) << own_program(i);
  }

  // The keys the processes must store, computed here as the CLI computes them (its cache has
  // no key hook, like the settings this process runs with below).
  ProcessCache::instance().configure(settings_in(dir.path() / "unused"));
  std::map<std::string, std::string> expected;  // key -> function name
  auto key_of = [](const std::string& text) {
    return cache::compute_key(cl_device().cache_components(parse_graph(text)));
  };
  const std::string shared_key = key_of(kSharedProgram);
  expected[shared_key] = "shared";
  std::vector<std::string> own_keys;
  for (int i = 0; i < kProcesses; ++i) {
    own_keys.push_back(key_of(own_program(i)));
    expected[own_keys.back()] = "own" + std::to_string(i);
  }
  ProcessCache::instance().configure_from_environment();
  ASSERT_EQ(expected.size(), 1u + kProcesses) << "the programs' keys are not distinct";

  // All processes are started before any is waited for. Each runs the shared program and its
  // own, checking both against the reference interpreter.
  auto run_wave = [&](const std::string& wave, const std::string& extra_env) {
    std::vector<pid_t> pids;
    for (int i = 0; i < kProcesses; ++i) {
      const std::string tag = wave + std::to_string(i);
      const std::string env =
          "unset WEFT_CACHE_KEY_HOOK WEFT_CACHE_MAX_SIZE WEFT_LOG; "
          "export WEFT_CACHE=1 WEFT_CACHE_WRITER=1 "
          "WEFT_CACHE_MIN_COMPILE_TIME=0 WEFT_CACHE_DIR=" +
          quote(cache_dir.string()) + " " + extra_env + "; ";
      const std::string weft = quote(WEFT_CLI_PATH);
      const std::string command =
          env + "{ " + weft + " run " + quote(shared_file.string()) + " --check && " + weft +
          " run " + quote(own_files[static_cast<std::size_t>(i)].string()) + " --check; } >" +
          quote((dir.path() / (tag + ".out")).string()) + " 2>" +
          quote((dir.path() / (tag + ".err")).string()) + " </dev/null";
      const pid_t pid = spawn_shell(command);
      EXPECT_GT(pid, 0) << "could not start process " << i;
      pids.push_back(pid);
    }
    for (int i = 0; i < kProcesses; ++i) {
      const std::string tag = wave + std::to_string(i);
      const int code = pids[static_cast<std::size_t>(i)] > 0
                           ? wait_for_exit(pids[static_cast<std::size_t>(i)])
                           : -1;
      const std::string out = slurp(dir.path() / (tag + ".out"));
      EXPECT_EQ(code, 0) << tag << "\n" << out << slurp(dir.path() / (tag + ".err"));
      EXPECT_THAT(out, HasSubstr("check against the reference interpreter")) << tag;
      EXPECT_FALSE(contains(out, "MISMATCH")) << tag << "\n" << out;
      // Not even a lock wait past the busy timeout (the process would run uncached).
      const std::string err = slurp(dir.path() / (tag + ".err"));
      EXPECT_FALSE(contains(err, "warning")) << tag << "\n" << err;
    }
  };

  auto check_database = [&]() {
    const fs::path path = cache_dir / "cache.sqlite3";
    ASSERT_TRUE(fs::exists(path));
    EXPECT_EQ(query_text(path, "PRAGMA integrity_check"), "ok");
    EXPECT_EQ(query_text(path, "SELECT count(*) FROM entries"), std::to_string(expected.size()));
    EXPECT_EQ(query_text(path, "SELECT count(*) FROM payloads"), std::to_string(expected.size()));
    EXPECT_EQ(query_text(path,
                         "SELECT count(*) FROM entries e LEFT JOIN payloads p "
                         "ON p.id = e.id WHERE p.id IS NULL"),
              "0");
    cache::StoreOptions options;
    options.directory = cache_dir;
    options.writer = false;
    ProgramStore store(options);
    std::map<std::string, int> seen;
    std::map<std::string, std::string> names;
    for (const cache::EntryInfo& entry : store.list()) {
      ++seen[entry.key];
      names[entry.key] = entry.components.function_name;
    }
    for (const auto& [key, count] : seen) EXPECT_EQ(count, 1) << key << " listed twice";
    EXPECT_EQ(names, expected);
    const cache::StoreStats stats = store.stats();
    EXPECT_EQ(stats.entries, expected.size());
    // Exactly one write per program: processes that lost a race found the entry present.
    EXPECT_EQ(stats.total.writes, expected.size());
  };

  run_wave("first", "");
  check_database();

  // A second wave finds everything stored: every lookup is a hit, nothing is written again.
  run_wave("second", "WEFT_LOG=cache=debug");
  for (int i = 0; i < kProcesses; ++i) {
    const std::string err = slurp(dir.path() / ("second" + std::to_string(i) + ".err"));
    const std::string own_key = own_keys[static_cast<std::size_t>(i)];
    EXPECT_TRUE(logs_lookup(err, shared_key, "hit")) << "process " << i << ":\n" << err;
    EXPECT_TRUE(logs_lookup(err, own_key, "hit")) << "process " << i << ":\n" << err;
    EXPECT_FALSE(contains(err, ": miss")) << "process " << i << ":\n" << err;
    EXPECT_FALSE(contains(err, "warning")) << "process " << i << ":\n" << err;
  }
  check_database();
  {
    cache::StoreOptions options;
    options.directory = cache_dir;
    options.writer = false;
    ProgramStore store(options);
    // 2 hits per process in the second wave (the first wave may hit too, after a race).
    EXPECT_GE(store.stats().total.hits, 2u * kProcesses);
  }
}

#endif  // WEFT_CLI_PATH

}  // namespace
}  // namespace weft
