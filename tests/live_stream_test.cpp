// The live stream (telemetry/include/weft/telemetry/live.h): where the socket lives, a private
// socket in a private directory, records sent by a LiveSink decoded by a LiveListener with times
// relative to the sender's origin, one numbered connection per program, a listener that refuses
// to share its path or to use a directory others may enter, stale sockets replaced, untrusted
// bytes reported as problems, and a sink that never blocks the program: a monitor that does not
// read makes it drop, a monitor that goes away ends the stream quietly.
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "support/make_span.h"
#include "support/temp_dir.h"
#include "weft/error.h"
#include "weft/telemetry/live.h"

namespace weft::telemetry {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using ::testing::HasSubstr;

class TempDir : public test::TempDir {
 public:
  TempDir() : test::TempDir("weft-live-test") {}
};

// Sets (or unsets, with nullopt) an environment variable for the scope's lifetime.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, std::optional<std::string> value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value)
      ::setenv(name, value->c_str(), 1);
    else
      ::unsetenv(name);
  }
  ~ScopedEnv() {
    if (old_)
      ::setenv(name_, old_->c_str(), 1);
    else
      ::unsetenv(name_);
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
  std::optional<std::string> old_;
};

const Track kMain{TrackKind::host_thread, "main (thread 1)", ""};
const Track kQueue{TrackKind::queue, "cpu:0 queue", "cpu:0"};
const Track kCallbacks{TrackKind::callback, "callbacks cpu:0 level 0", "cpu:0"};
const Track kRuntime{TrackKind::runtime, "runtime cpu:0", "cpu:0"};
const Track kCacheWriter{TrackKind::cache_writer, "cache writer", ""};

using testing::make_span;

Args sorted(Args args) {
  std::sort(args.begin(), args.end());
  return args;
}

// Everything one connection sent, over as many polls as it took.
struct Received {
  std::map<std::string, std::string> meta;
  int batches_with_meta = 0;
  std::vector<Span> spans;
  std::vector<Edge> edges;
  std::vector<Program> programs;
  std::vector<Counter> counters;
  std::vector<std::string> problems;
  bool closed = false;
};
using Connections = std::map<int, Received>;

void collect(std::vector<LiveBatch> batches, Connections& into) {
  for (LiveBatch& batch : batches) {
    Received& r = into[batch.connection];
    EXPECT_FALSE(r.closed) << "connection " << batch.connection << " sent after it closed";
    if (!batch.meta.empty()) {
      ++r.batches_with_meta;
      r.meta = batch.meta;
    }
    std::move(batch.spans.begin(), batch.spans.end(), std::back_inserter(r.spans));
    std::move(batch.edges.begin(), batch.edges.end(), std::back_inserter(r.edges));
    std::move(batch.programs.begin(), batch.programs.end(), std::back_inserter(r.programs));
    std::move(batch.counters.begin(), batch.counters.end(), std::back_inserter(r.counters));
    std::move(batch.problems.begin(), batch.problems.end(), std::back_inserter(r.problems));
    r.closed = r.closed || batch.closed;
  }
}

// Polls (never blocking) until `done` holds for what has arrived, or `limit` passes. `between`
// runs after each poll (a sender's turn, when sender and listener share the thread).
bool poll_until(LiveListener& listener, Connections& connections,
                const std::function<bool(const Connections&)>& done,
                std::chrono::milliseconds limit = 10s, const std::function<void()>& between = {}) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  for (;;) {
    collect(listener.poll(), connections);
    if (done(connections)) return true;
    if (std::chrono::steady_clock::now() > deadline) return false;
    if (between) between();
    std::this_thread::sleep_for(1ms);
  }
}

// Runs `work` on a thread of its own; true when it finished within `limit`. A thread still
// running at the deadline is left behind so that the test reports it rather than hanging; what
// it uses must be owned by the closure.
bool finishes_within(std::chrono::seconds limit, std::function<void()> work) {
  auto finished = std::make_shared<std::promise<void>>();
  std::future<void> future = finished->get_future();
  std::thread([finished, work = std::move(work)] {
    try {
      work();
      finished->set_value();
    } catch (...) {
      finished->set_exception(std::current_exception());
    }
  }).detach();
  if (future.wait_for(limit) != std::future_status::ready) return false;
  future.get();  // rethrows what the work threw
  return true;
}

// A raw client of the listener, as an untrusted program would be.
class RawClient {
 public:
  explicit RawClient(const fs::path& path) {
    fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    std::strncpy(address.sun_path, path.c_str(), sizeof address.sun_path - 1);
    connected_ = ::connect(fd_, reinterpret_cast<const sockaddr*>(&address), sizeof address) == 0;
  }
  ~RawClient() { close(); }
  RawClient(const RawClient&) = delete;
  RawClient& operator=(const RawClient&) = delete;
  bool connected() const { return connected_; }
  // Sends all of `bytes` (blocking); false once the peer has gone.
  bool send(std::string_view bytes) {
    while (!bytes.empty()) {
      const ssize_t sent = ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
      if (sent < 0 && errno == EINTR) continue;
      if (sent <= 0) return false;
      bytes.remove_prefix(static_cast<std::size_t>(sent));
    }
    return true;
  }
  void close() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }
  // Ends both directions without releasing the descriptor: safe while another thread is in
  // send() on it (closing it there would race with that thread and could reuse the number).
  void shutdown() {
    if (fd_ >= 0) ::shutdown(fd_, SHUT_RDWR);
  }

 private:
  int fd_ = -1;
  bool connected_ = false;
};

// A socket file that nobody listens on: bound, then closed without unlinking (what a monitor
// that crashed leaves).
void make_stale_socket(const fs::path& path) {
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  ASSERT_GE(fd, 0);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::strncpy(address.sun_path, path.c_str(), sizeof address.sun_path - 1);
  ASSERT_EQ(::bind(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address), 0)
      << std::strerror(errno);
  ASSERT_EQ(::listen(fd, 1), 0);
  ::close(fd);
  struct stat st {};
  ASSERT_EQ(::lstat(path.c_str(), &st), 0);
  ASSERT_TRUE(S_ISSOCK(st.st_mode));
}

mode_t mode_of(const fs::path& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) return 0;
  return st.st_mode;
}

// A recording with every span and track kind, arguments that need escaping, an edge and a
// program.
struct Sample {
  std::vector<Span> spans;
  std::vector<Edge> edges;
  std::vector<Program> programs;
};

Sample sample(std::int64_t base) {
  Sample s;
  const Track tracks[] = {kMain, kQueue, kCallbacks, kRuntime, kCacheWriter};
  for (int k = 0; k < kSpanKindCount; ++k) {
    const auto kind = static_cast<SpanKind>(k);
    Span span = make_span(10 + static_cast<Id>(k), kind, tracks[k % 5],
                          "span " + std::string(to_string(kind)), base + k * 1000,
                          base + k * 1000 + 100 + k,
                          {{"quote", "say \"hi\""},
                           {"unicode", "\u03c0 \u2248 3.14 \u65e5\u672c \U0001F642"},
                           {"line\nbreak", "tab\there\\"}});
    if (k > 0) span.parent = 10;
    if (kind == SpanKind::callback) {
      span.effect = "print";
      span.seq = 4;
    }
    s.spans.push_back(std::move(span));
  }
  s.edges = {{10, 15, "print"}, {15, 21, ""}};
  Program p;
  p.id = 5;
  p.function = "f";
  p.device = "cpu:0";
  p.cache_key = "00112233445566778899aabbccddeeff";
  p.cache_status = "hit";
  p.ir = "graph @f() {\n}";
  p.source = "__kernel void k() {}";
  p.kernels = {{"k", "elementwise", {"add", "exp"}}, {"r", "reduce", {}}};
  s.programs = {p};
  return s;
}

// ---------------------------------------------------------------------------------------------

TEST(LiveStream, SocketPathFollowsTheEnvironment) {
  TempDir dir;
  {
    ScopedEnv env_socket("WEFT_MONITOR_SOCKET", (dir.path() / "my.sock").string());
    EXPECT_EQ(monitor_socket_path(), dir.path() / "my.sock");
    // The listener's default path is the same.
    LiveListener listener;
    EXPECT_EQ(listener.path(), dir.path() / "my.sock");
    EXPECT_TRUE(S_ISSOCK(mode_of(dir.path() / "my.sock")));
  }
  EXPECT_FALSE(fs::exists(dir.path() / "my.sock"));
  {
    ScopedEnv env_socket("WEFT_MONITOR_SOCKET", std::nullopt);
    ScopedEnv env_runtime("XDG_RUNTIME_DIR", "/run/user/4242");
    EXPECT_EQ(monitor_socket_path(), fs::path("/run/user/4242/weft/monitor.sock"));
  }
  {
    ScopedEnv env_socket("WEFT_MONITOR_SOCKET", "");
    ScopedEnv env_runtime("XDG_RUNTIME_DIR", std::nullopt);
    EXPECT_EQ(monitor_socket_path(),
              fs::path("/tmp") / ("weft-" + std::to_string(::getuid())) / "monitor.sock");
  }
}

TEST(LiveStream, ListenerMakesAPrivateSocketInAPrivateDirectory) {
  TempDir dir;
  const fs::path socket_dir = dir.path() / "made";
  const fs::path path = socket_dir / "monitor.sock";
  {
    LiveListener listener(path);
    EXPECT_EQ(listener.path(), path);
    const mode_t dir_mode = mode_of(socket_dir);
    EXPECT_TRUE(S_ISDIR(dir_mode));
    EXPECT_EQ(dir_mode & 07777, 0700u);
    const mode_t socket_mode = mode_of(path);
    EXPECT_TRUE(S_ISSOCK(socket_mode));
    EXPECT_EQ(socket_mode & 07777, 0600u);
  }
  EXPECT_FALSE(fs::exists(path)) << "the listener leaves its socket behind";
  EXPECT_TRUE(fs::is_directory(socket_dir));
}

TEST(LiveStream, SinkSendsRecordsTheListenerDecodes) {
  TempDir dir;
  const fs::path path = dir.path() / "monitor.sock";
  LiveListener listener(path);
  const std::int64_t before = now_ns();
  LiveSink sink(path, "./app --live \u2713", 1u << 20);
  const std::int64_t after = now_ns();
  EXPECT_TRUE(sink.connected());
  const Sample s = sample(now_ns() + 1'000'000);
  sink.write(s.spans, s.edges, s.programs);
  sink.flush();

  Connections connections;
  ASSERT_TRUE(poll_until(listener, connections,
                         [&](const Connections& c) {
                           return c.count(1) && c.at(1).spans.size() == s.spans.size() &&
                                  c.at(1).edges.size() == s.edges.size() &&
                                  c.at(1).programs.size() == s.programs.size();
                         }))
      << "received " << (connections.count(1) ? connections[1].spans.size() : 0) << " spans";
  ASSERT_EQ(connections.size(), 1u);
  const Received& r = connections.at(1);
  EXPECT_TRUE(r.problems.empty()) << ::testing::PrintToString(r.problems);
  EXPECT_FALSE(r.closed);
  EXPECT_EQ(r.batches_with_meta, 1);
  EXPECT_EQ(r.meta.at("pid"), std::to_string(::getpid()));
  EXPECT_EQ(r.meta.at("command"), "./app --live \u2713");
  EXPECT_FALSE(r.meta.at("weft_version").empty());

  // Times are relative to the sender's origin (taken when the sink was made).
  const std::int64_t shift = s.spans[0].start_ns - r.spans[0].start_ns;
  EXPECT_GE(shift, before);
  EXPECT_LE(shift, after);
  for (std::size_t i = 0; i < s.spans.size(); ++i) {
    SCOPED_TRACE("span " + std::to_string(s.spans[i].id));
    const Span& got = r.spans[i];
    const Span& want = s.spans[i];
    EXPECT_EQ(got.id, want.id);
    EXPECT_EQ(got.parent, want.parent);
    EXPECT_EQ(got.kind, want.kind);
    EXPECT_EQ(got.track, want.track);
    EXPECT_EQ(got.name, want.name);
    EXPECT_EQ(got.effect, want.effect);
    EXPECT_EQ(got.seq, want.seq);
    EXPECT_EQ(got.start_ns, want.start_ns - shift);
    EXPECT_EQ(got.end_ns, want.end_ns - shift);
    EXPECT_EQ(sorted(got.args), sorted(want.args));
  }
  for (std::size_t i = 0; i < s.edges.size(); ++i) {
    EXPECT_EQ(r.edges[i].from, s.edges[i].from);
    EXPECT_EQ(r.edges[i].to, s.edges[i].to);
    EXPECT_EQ(r.edges[i].effect, s.edges[i].effect);
  }
  const Program& got = r.programs[0];
  const Program& want = s.programs[0];
  EXPECT_EQ(got.id, want.id);
  EXPECT_EQ(got.function, want.function);
  EXPECT_EQ(got.device, want.device);
  EXPECT_EQ(got.cache_key, want.cache_key);
  EXPECT_EQ(got.cache_status, want.cache_status);
  EXPECT_EQ(got.ir, want.ir);
  EXPECT_EQ(got.source, want.source);
  ASSERT_EQ(got.kernels.size(), 2u);
  EXPECT_EQ(got.kernels[0].name, "k");
  EXPECT_EQ(got.kernels[0].kind, "elementwise");
  EXPECT_EQ(got.kernels[0].fused_ops, (std::vector<std::string>{"add", "exp"}));
  EXPECT_TRUE(got.kernels[1].fused_ops.empty());

  // Nothing more arrives, and nothing was dropped.
  EXPECT_TRUE(listener.poll().empty());
  EXPECT_EQ(sink.dropped(), 0u);
}

TEST(LiveStream, CounterSamplesArriveWithTimesFromTheSendersOrigin) {
  TempDir dir;
  const fs::path path = dir.path() / "monitor.sock";
  LiveListener listener(path);
  LiveSink sink(path, "counters", 1u << 20);
  const std::int64_t t = now_ns();
  const std::vector<Counter> sent = {{"device_memory_bytes", "cpu:0", t + 1000, 4096},
                                     {"callback_queue_depth", "", t + 2000, 3}};
  sink.write_counters(sent);
  sink.flush();
  Connections connections;
  ASSERT_TRUE(poll_until(listener, connections, [](const Connections& c) {
    return c.count(1) && c.at(1).counters.size() == 2;
  }));
  const Received& r = connections.at(1);
  EXPECT_TRUE(r.problems.empty()) << ::testing::PrintToString(r.problems);
  EXPECT_EQ(r.counters[0].name, "device_memory_bytes");
  EXPECT_EQ(r.counters[0].device, "cpu:0");
  EXPECT_EQ(r.counters[0].value, 4096.0);
  EXPECT_EQ(r.counters[1].device, "");
  EXPECT_EQ(r.counters[1].time_ns - r.counters[0].time_ns, 1000);
  EXPECT_GE(r.counters[0].time_ns, 1000) << "relative to the sink's origin, taken before t";
}

TEST(LiveStream, SinkWorksThroughTheTelemetryQueue) {
  TempDir dir;
  const fs::path path = dir.path() / "monitor.sock";
  LiveListener listener(path);
  auto sink = std::make_shared<LiveSink>(path, "queued");
  add_sink(sink);
  const std::int64_t start = now_ns();
  const Id first = next_id();
  for (int i = 0; i < 50; ++i)
    emit(make_span(first + static_cast<Id>(i), SpanKind::transfer, kMain, "upload", start + i,
                   start + i + 1));
  emit(Edge{first, first + 1, "token"});
  remove_sink(sink);
  Connections connections;
  ASSERT_TRUE(poll_until(listener, connections, [&](const Connections& c) {
    return c.count(1) && c.at(1).spans.size() == 50 && c.at(1).edges.size() == 1;
  }));
  EXPECT_EQ(connections[1].spans.front().id, first);
  EXPECT_EQ(connections[1].spans.back().id, first + 49);
  EXPECT_EQ(connections[1].meta.at("command"), "queued");
}

TEST(LiveStream, TwoSinksAreTwoConnections) {
  TempDir dir;
  const fs::path path = dir.path() / "monitor.sock";
  LiveListener listener(path);
  auto first = std::make_unique<LiveSink>(path, "first");
  auto second = std::make_unique<LiveSink>(path, "second");
  const std::int64_t base = now_ns();
  first->write(
      std::vector<Span>{make_span(1, SpanKind::dispatch, kMain, "from first", base, base + 1)}, {},
      {});
  second->write(
      std::vector<Span>{make_span(1, SpanKind::dispatch, kMain, "from second", base, base + 1)}, {},
      {});
  Connections connections;
  ASSERT_TRUE(poll_until(listener, connections, [](const Connections& c) {
    return c.size() == 2 && c.begin()->second.spans.size() == 1 &&
           c.rbegin()->second.spans.size() == 1;
  }));
  ASSERT_EQ(connections.count(1), 1u);
  ASSERT_EQ(connections.count(2), 1u);
  // Numbered in the order they connected.
  EXPECT_EQ(connections[1].meta.at("command"), "first");
  EXPECT_EQ(connections[1].spans[0].name, "from first");
  EXPECT_EQ(connections[2].meta.at("command"), "second");
  EXPECT_EQ(connections[2].spans[0].name, "from second");

  // Closing one ends its connection only.
  first.reset();
  ASSERT_TRUE(
      poll_until(listener, connections, [](const Connections& c) { return c.at(1).closed; }));
  EXPECT_FALSE(connections[2].closed);
  second->write(
      std::vector<Span>{make_span(2, SpanKind::dispatch, kMain, "still here", base, base + 1)}, {},
      {});
  ASSERT_TRUE(poll_until(listener, connections,
                         [](const Connections& c) { return c.at(2).spans.size() == 2; }));
  second.reset();
  ASSERT_TRUE(
      poll_until(listener, connections, [](const Connections& c) { return c.at(2).closed; }));
  // A third program is connection 3.
  LiveSink third(path, "third");
  ASSERT_TRUE(poll_until(listener, connections,
                         [](const Connections& c) { return c.count(3) && !c.at(3).meta.empty(); }));
  EXPECT_EQ(connections[3].meta.at("command"), "third");
}

TEST(LiveStream, SecondListenerOnThePathIsRefused) {
  TempDir dir;
  const fs::path path = dir.path() / "monitor.sock";
  LiveListener listener(path);
  try {
    LiveListener second(path);
    ADD_FAILURE() << "two listeners on " << path;
  } catch (const TraceError& e) {
    EXPECT_THAT(e.what(), HasSubstr("another monitor already listens on " + path.string()));
  }
  // The first still listens, on the same socket.
  EXPECT_TRUE(S_ISSOCK(mode_of(path)));
  LiveSink sink(path, "after the refusal");
  Connections connections;
  ASSERT_TRUE(poll_until(listener, connections, [](const Connections& c) {
    return std::any_of(c.begin(), c.end(), [](const auto& entry) {
      return entry.second.meta.count("command") &&
             entry.second.meta.at("command") == "after the refusal";
    });
  }));
}

TEST(LiveStream, StaleSocketIsReplaced) {
  TempDir dir;
  const fs::path path = dir.path() / "monitor.sock";
  make_stale_socket(path);
  // Nobody listens on it: a program cannot connect.
  EXPECT_THROW(LiveSink(path, "too early"), TraceError);
  LiveListener listener(path);
  EXPECT_EQ(mode_of(path) & 07777, 0600u);
  LiveSink sink(path, "after");
  Connections connections;
  ASSERT_TRUE(poll_until(listener, connections,
                         [](const Connections& c) { return c.count(1) && !c.at(1).meta.empty(); }));
  EXPECT_EQ(connections[1].meta.at("command"), "after");
}

TEST(LiveStream, FileThatIsNotASocketIsLeftAlone) {
  TempDir dir;
  const fs::path path = dir.path() / "monitor.sock";
  {
    std::ofstream out(path);
    out << "keep me";
  }
  try {
    LiveListener listener(path);
    ADD_FAILURE() << "listened over a regular file";
  } catch (const TraceError& e) {
    EXPECT_THAT(e.what(), HasSubstr("is not a socket"));
  }
  std::ifstream in(path);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text, "keep me");
}

TEST(LiveStream, DirectoryOthersMayEnterIsRefused) {
  TempDir dir;
  for (const mode_t mode : {0755u, 0710u, 0701u, 0770u}) {
    const fs::path shared = dir.path() / ("shared" + std::to_string(mode));
    ASSERT_EQ(::mkdir(shared.c_str(), 0700), 0);
    ASSERT_EQ(::chmod(shared.c_str(), mode), 0);
    try {
      LiveListener listener(shared / "monitor.sock");
      ADD_FAILURE() << "listened in a directory of mode " << std::oct << mode;
    } catch (const TraceError& e) {
      EXPECT_THAT(e.what(), HasSubstr(shared.string()));
      EXPECT_THAT(e.what(), HasSubstr("0700"));
    }
    EXPECT_FALSE(fs::exists(shared / "monitor.sock"));
    EXPECT_EQ(mode_of(shared) & 07777, mode) << "the listener changed the directory's mode";
  }
  // A path whose directory is a file.
  { std::ofstream out(dir.path() / "file"); }
  EXPECT_THROW(LiveListener(dir.path() / "file" / "monitor.sock"), TraceError);
}

TEST(LiveStream, SinkWithoutAListenerThrows) {
  TempDir dir;
  const fs::path path = dir.path() / "nobody.sock";
  try {
    LiveSink sink(path, "lonely");
    ADD_FAILURE() << "connected to nothing";
  } catch (const TraceError& e) {
    EXPECT_THAT(e.what(), HasSubstr("weft-monitor"));
    EXPECT_THAT(e.what(), HasSubstr(path.string()));
  }
  // A path too long for a Unix socket is a TraceError too, not a truncated path.
  const fs::path long_path = dir.path() / (std::string(120, 'x') + ".sock");
  EXPECT_THROW(LiveSink(long_path, "long"), TraceError);
  EXPECT_THROW(LiveListener{long_path}, TraceError);
}

TEST(LiveStream, MalformedLinesAreReportedAndSkipped) {
  TempDir dir;
  const fs::path path = dir.path() / "monitor.sock";
  LiveListener listener(path);
  RawClient client(path);
  ASSERT_TRUE(client.connected());
  const std::string valid_span =
      R"({"span":{"id":7,"parent":0,"kind":"kernel","track":{"kind":"queue","name":"q","device":"d"},)"
      R"("name":"good","effect":"","seq":-1,"start_ns":5,"end_ns":9,"args":{"a":"b"}}})";
  const std::vector<std::pair<std::string, std::string>> lines = {
      {"not json at all", "line is not a JSON object"},
      {R"({"span":{"id":1}})", "the stream does not start with a weft hello"},
      {R"({"weft_live":1,"pid":"4242","command":"raw client","weft_version":7})", ""},
      {"", "line is not a JSON object"},
      {"[1, 2, 3]", "line is not a JSON object"},
      {"{}", "line is not a JSON object"},
      {R"({"span":{"id":1}})", "\"parent\" is missing or not an integer"},
      {R"({"span":"text"})", "a span is not a JSON object"},
      {R"({"edge":[1, 2]})", "an edge is not a JSON object"},
      {R"({"edge":{"from":-1,"to":2,"effect":""}})", "\"from\" is negative"},
      {R"({"program":{"id":1}})", "\"function\" is missing or not text"},
      {R"({"mystery":{}})", "unknown record"},
      {R"({"counter":{"name":"c","device":"d","time_ns":1,"value":"high"}})",
       "\"value\" is missing or not a finite number"},
      {R"({"counter":{"name":"","device":"d","time_ns":1,"value":1}})", "an empty name"},
      {R"({"counter":{"name":"c","device":"d","time_ns":1.5,"value":1}})",
       "\"time_ns\" is missing or not an integer"},
      {R"({"counter":{"name":"c","time_ns":1,"value":1}})", "\"device\" is missing or not text"},
      {R"({"counter":{"name":"c","device":"d","time_ns":1,"value":1e999}})",
       "line is not a JSON object"},
      {R"({"counter":{"name":"c","device":"d","time_ns":4,"value":2.5}})", ""},
      {R"({"span":{"id":0,"parent":0,"kind":"kernel","name":"","effect":"","seq":0,"start_ns":0,"end_ns":0}})",
       "a span has id 0"},
      {R"({"span":{"id":3,"parent":0,"kind":"warp","name":"","effect":"","seq":0,"start_ns":0,"end_ns":0}})",
       "unknown span kind \"warp\""},
      {R"({"span":{"id":3,"parent":0,"kind":"kernel","name":"","effect":"","seq":0,"start_ns":9,"end_ns":1}})",
       "a span ends before it starts"},
      {"{\"span\": \"\xff\xfe\"}", "line is not a JSON object"},
      {"{\"span\": " + std::string(200'000, '[') + std::string(200'000, ']') + "}",
       "a span is not a JSON object"},
      {valid_span, ""},
  };
  std::size_t want_problems = 0;
  std::string stream;
  for (const auto& [line, problem] : lines) {
    stream += line + "\n";
    want_problems += !problem.empty();
  }
  // Sent from another thread: more than the socket holds, so the listener must read meanwhile.
  std::thread sender([&] { EXPECT_TRUE(client.send(stream)); });
  Connections connections;
  ASSERT_TRUE(poll_until(listener, connections, [&](const Connections& c) {
    return c.count(1) && c.at(1).spans.size() == 1 && c.at(1).problems.size() >= want_problems;
  })) << ::testing::PrintToString(connections[1].problems);
  sender.join();
  const Received& r = connections[1];
  EXPECT_EQ(r.meta.at("pid"), "4242");
  EXPECT_EQ(r.meta.at("command"), "raw client");
  EXPECT_EQ(r.meta.count("weft_version"), 0u) << "a non-text version is not meta";
  EXPECT_EQ(r.spans[0].name, "good");
  EXPECT_EQ(r.spans[0].args, (Args{{"a", "b"}}));
  EXPECT_EQ(r.counters, (std::vector<Counter>{{"c", "d", 4, 2.5}}));
  ASSERT_EQ(r.problems.size(), want_problems) << ::testing::PrintToString(r.problems);
  std::size_t at = 0;
  for (const auto& [line, problem] : lines) {
    if (problem.empty()) continue;
    EXPECT_THAT(r.problems[at], HasSubstr(problem)) << "line: " << line.substr(0, 80);
    ++at;
  }
  EXPECT_FALSE(r.closed);

  // A partial line, then the end: the stream closes, the fragment is not decoded.
  ASSERT_TRUE(client.send(valid_span.substr(0, 40)));
  client.close();
  ASSERT_TRUE(
      poll_until(listener, connections, [](const Connections& c) { return c.at(1).closed; }));
  EXPECT_EQ(connections[1].spans.size(), 1u);
}

TEST(LiveStream, OverlongLineClosesTheConnection) {
  TempDir dir;
  const fs::path path = dir.path() / "monitor.sock";
  LiveListener listener(path);
  auto client = std::make_shared<RawClient>(path);
  ASSERT_TRUE(client->connected());
  ASSERT_TRUE(client->send("{\"weft_live\":1,\"pid\":\"1\",\"command\":\"long\"}\n"));
  // More than 16 MiB without a newline, from another thread (the listener reads as it goes).
  auto sent_all = std::make_shared<std::atomic<bool>>(false);
  std::thread sender([client, sent_all] {
    const std::string chunk(1u << 20, 'x');
    bool ok = true;
    for (int i = 0; i < 20 && ok; ++i) ok = client->send(chunk);
    sent_all->store(ok);
  });
  Connections connections;
  const bool closed = poll_until(
      listener, connections, [](const Connections& c) { return c.count(1) && c.at(1).closed; },
      60s);
  client->shutdown();  // unblocks the sender if the listener never closed
  sender.join();
  ASSERT_TRUE(closed) << "the listener kept reading an endless line";
  ASSERT_EQ(connections[1].problems.size(), 1u)
      << ::testing::PrintToString(connections[1].problems);
  EXPECT_THAT(connections[1].problems[0], HasSubstr("longer than 16 MiB"));
  EXPECT_EQ(connections[1].meta.at("command"), "long");
  // The listener still serves others.
  LiveSink sink(path, "next");
  ASSERT_TRUE(poll_until(listener, connections,
                         [](const Connections& c) { return c.count(2) && !c.at(2).meta.empty(); }));
}

TEST(LiveStream, SinkNeverBlocksOnAMonitorThatDoesNotRead) {
  TempDir dir;
  const fs::path path = dir.path() / "monitor.sock";
  auto listener = std::make_shared<LiveListener>(path);
  auto sink = std::make_shared<LiveSink>(path, "flood", 1u << 20);
  // About 100 MiB of records: 350 batches of 1000 spans of about 300 bytes each.
  constexpr int kBatches = 350;
  constexpr std::size_t kBatch = 1000;
  auto spans = std::make_shared<std::vector<Span>>();
  const std::int64_t base = now_ns();
  for (std::size_t i = 0; i < kBatch; ++i)
    spans->push_back(make_span(i + 1, SpanKind::kernel, kQueue, "flooding_kernel", base, base + 1,
                               {{"padding", std::string(160, 'p')}}));
  const bool finished = finishes_within(120s, [sink, spans] {
    for (int b = 0; b < kBatches; ++b) sink->write(*spans, {}, {});
    sink->flush();  // at most a short wait
  });
  ASSERT_TRUE(finished) << "the sink blocked on a monitor that does not read";
  const std::size_t total = kBatches * kBatch;
  EXPECT_GT(sink->dropped(), 0u);
  EXPECT_LT(sink->dropped(), total);
  EXPECT_TRUE(sink->connected());

  // Now the monitor reads: everything not counted as dropped arrives, whole and in order.
  Connections connections;
  const std::vector<Span> none;
  const bool all = poll_until(
      *listener, connections,
      [&](const Connections& c) {
        return c.count(1) && c.at(1).spans.size() >= total - sink->dropped();
      },
      60s, [&] { sink->write(none, {}, {}); });
  ASSERT_TRUE(all) << "received " << connections[1].spans.size() << " of "
                   << total - sink->dropped();
  EXPECT_EQ(connections[1].spans.size(), total - sink->dropped());
  EXPECT_TRUE(connections[1].problems.empty()) << ::testing::PrintToString(connections[1].problems);
  // Records arrive whole: what is dropped is dropped at record boundaries.
  for (const Span& span : connections[1].spans) {
    ASSERT_GE(span.id, 1u);
    ASSERT_LE(span.id, kBatch);
    ASSERT_EQ(span.name, "flooding_kernel");
    ASSERT_EQ(span.args, (Args{{"padding", std::string(160, 'p')}}));
  }
}

TEST(LiveStream, MonitorGoingAwayEndsTheStreamQuietly) {
  TempDir dir;
  const fs::path path = dir.path() / "monitor.sock";
  auto listener = std::make_unique<LiveListener>(path);
  auto sink = std::make_shared<LiveSink>(path, "orphan", 1u << 20);
  const std::int64_t base = now_ns();
  auto batch = std::make_shared<std::vector<Span>>();
  for (Id i = 1; i <= 100; ++i)
    batch->push_back(make_span(i, SpanKind::dispatch, kMain, "f", base, base + 1));
  sink->write(*batch, {}, {});
  Connections connections;
  ASSERT_TRUE(poll_until(*listener, connections, [](const Connections& c) {
    return c.count(1) && !c.at(1).spans.empty();
  }));
  // Unread records are in flight when the monitor goes.
  sink->write(*batch, {}, {});
  listener.reset();
  EXPECT_FALSE(fs::exists(path));
  const bool finished = finishes_within(60s, [sink, batch] {
    const auto deadline = std::chrono::steady_clock::now() + 10s;
    while (sink->connected() && std::chrono::steady_clock::now() < deadline) {
      sink->write(*batch, {}, {});
      std::this_thread::sleep_for(1ms);
    }
    sink->flush();
  });
  ASSERT_TRUE(finished) << "writes blocked after the monitor went away";
  EXPECT_FALSE(sink->connected());
  // Later writes are no-ops.
  EXPECT_NO_THROW(sink->write(*batch, {}, {}));
  EXPECT_NO_THROW(sink->flush());
  EXPECT_FALSE(sink->connected());
}

TEST(LiveStream, ConnectingNeverBlocksOnAMonitorThatDoesNotAccept) {
  // A monitor that is stuck (stopped, busy) never accepts: once its backlog is full, further
  // programs must still start (failing to connect or connecting later), not hang in connect().
  TempDir dir;
  const fs::path path = dir.path() / "monitor.sock";
  auto listener = std::make_shared<LiveListener>(path);
  auto sinks = std::make_shared<std::vector<std::unique_ptr<LiveSink>>>();
  auto refused = std::make_shared<std::atomic<int>>(0);
  const bool finished = finishes_within(10s, [path, sinks, refused] {
    for (int i = 0; i < 40; ++i) {
      try {
        sinks->push_back(std::make_unique<LiveSink>(path, "crowd " + std::to_string(i)));
      } catch (const TraceError&) {
        ++*refused;
      }
    }
  });
  if (!finished) {
    ADD_FAILURE() << "LiveSink's constructor blocked in connect() after " << sinks->size()
                  << " programs connected to a monitor that does not accept";
    // Closing the listening socket releases the blocked connect.
    listener.reset();
    std::this_thread::sleep_for(1s);
    return;
  }
  EXPECT_EQ(sinks->size() + static_cast<std::size_t>(refused->load()), 40u);
}

TEST(LiveStream, SecondListenerNeverBlocksOnAMonitorThatDoesNotAccept) {
  // The check for a live monitor must not hang either when that monitor's backlog is full.
  TempDir dir;
  const fs::path path = dir.path() / "monitor.sock";
  auto listener = std::make_shared<LiveListener>(path);
  std::vector<int> clients;
  for (int i = 0; i < 64; ++i) {
    const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    ASSERT_GE(fd, 0);
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    std::strncpy(address.sun_path, path.c_str(), sizeof address.sun_path - 1);
    const bool queued =
        ::connect(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address) == 0;
    clients.push_back(fd);
    if (!queued) break;  // the backlog is full
  }
  ASSERT_LT(clients.size(), 64u) << "the listener's backlog never filled";
  auto outcome = std::make_shared<std::string>();
  const bool finished = finishes_within(10s, [path, outcome] {
    try {
      LiveListener second(path);
      *outcome = "listening";
    } catch (const TraceError& e) {
      *outcome = e.what();
    }
  });
  if (!finished) {
    ADD_FAILURE() << "LiveListener's constructor blocked probing a monitor whose backlog is full";
    listener.reset();  // releases the blocked probe
    std::this_thread::sleep_for(1s);
  } else {
    EXPECT_THAT(*outcome, HasSubstr("another monitor already listens"));
  }
  for (int fd : clients) ::close(fd);
}

// ---------------------------------------------------------------------------------------------
// The program sends nothing where another user could listen: the monitor refuses such places,
// and so must the sender (the stream carries the command line, IR, sources and cache keys).

// A listening socket made by hand at `path`, as another user could leave one (a LiveListener
// refuses such places). Its file keeps the mode the umask gives, or `mode`.
int raw_listener(const fs::path& path, std::optional<mode_t> mode = std::nullopt,
                 bool listen_now = true) {
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::strncpy(address.sun_path, path.c_str(), sizeof address.sun_path - 1);
  EXPECT_EQ(::bind(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address), 0);
  if (mode) {
    EXPECT_EQ(::chmod(path.c_str(), *mode), 0);
  }
  if (listen_now) {
    EXPECT_EQ(::listen(fd, 4), 0);
  }
  return fd;
}

// What a hand-made listener received: the bytes of every connection waiting on it.
std::string received(int listening) {
  std::string bytes;
  for (int client; (client = ::accept4(listening, nullptr, nullptr, SOCK_NONBLOCK)) >= 0;) {
    char chunk[4096];
    for (ssize_t got; (got = ::recv(client, chunk, sizeof chunk, 0)) > 0;)
      bytes.append(chunk, static_cast<std::size_t>(got));
    ::close(client);
  }
  return bytes;
}

void expect_refused(const fs::path& path, const std::string& owner_and_mode) {
  try {
    LiveSink sink(path, "secret command line");
    ADD_FAILURE() << "streamed to " << path;
  } catch (const TraceError& e) {
    EXPECT_THAT(e.what(), HasSubstr(owner_and_mode));
    EXPECT_THAT(e.what(), HasSubstr("WEFT_MONITOR_SOCKET"));
  }
}

TEST(LiveStream, SinkSendsNothingToASocketInADirectoryOthersMayWrite) {
  // WEFT_MONITOR_SOCKET in a shared directory (0777, or sticky like /tmp): any user can put a
  // socket there. Any user can build this case.
  TempDir dir;
  for (const mode_t mode : {0777u, 01777u, 0720u}) {
    SCOPED_TRACE(mode);
    const fs::path shared = dir.path() / ("shared" + std::to_string(mode));
    ASSERT_EQ(::mkdir(shared.c_str(), 0700), 0);
    ASSERT_EQ(::chmod(shared.c_str(), mode), 0);
    const fs::path path = shared / "monitor.sock";
    const int listening = raw_listener(path, 0600);
    char octal[16];
    std::snprintf(octal, sizeof octal, "(mode %04o)", static_cast<unsigned>(mode));
    expect_refused(path, shared.string() + " belongs to you " + octal);
    EXPECT_EQ(received(listening), "");
    ::close(listening);
  }
  // A socket others may write to, in a private directory.
  const fs::path path = dir.path() / "open.sock";
  const int listening = raw_listener(path, 0666);
  expect_refused(path, path.string() + " belongs to you (mode 0666)");
  EXPECT_EQ(received(listening), "");
  ::close(listening);
}

TEST(LiveStream, SinkSendsNothingToAnotherUsersSocketOrListener) {
  TempDir dir;
  if (::geteuid() != 0) {
    // Only root can give files away; the shared directory is the case other users can build.
    const fs::path path = dir.path() / "open.sock";
    const int listening = raw_listener(path, 0777);
    expect_refused(path, path.string() + " belongs to you (mode 0777)");
    EXPECT_EQ(received(listening), "");
    ::close(listening);
    return;
  }
  // As root (as a hostile probe ran it): `nobody` made /tmp/weft-0 (XDG_RUNTIME_DIR unset) and
  // listens in it.
  {
    const fs::path theirs = dir.path() / "weft-0";
    ASSERT_EQ(::mkdir(theirs.c_str(), 0700), 0);
    const fs::path path = theirs / "monitor.sock";
    const int listening = raw_listener(path, 0600);
    ASSERT_EQ(::chown(theirs.c_str(), 65534, 65534), 0);
    expect_refused(path, theirs.string() + " belongs to uid 65534 (mode 0700)");
    EXPECT_EQ(received(listening), "");
    ::close(listening);
  }
  // Their socket in our directory.
  {
    const fs::path path = dir.path() / "theirs.sock";
    const int listening = raw_listener(path, 0600);
    ASSERT_EQ(::lchown(path.c_str(), 65534, 65534), 0);
    expect_refused(path, path.string() + " belongs to uid 65534 (mode 0600)");
    EXPECT_EQ(received(listening), "");
    ::close(listening);
  }
  // Our socket file, but a listener that runs as uid 65534 (it listened after setuid): only the
  // peer's credentials show it.
  const fs::path path = dir.path() / "borrowed.sock";
  const int bound = raw_listener(path, 0600, /*listen_now=*/false);
  int ready[2], report[2];
  ASSERT_EQ(::pipe(ready), 0);
  ASSERT_EQ(::pipe(report), 0);
  const pid_t child = ::fork();
  if (child == 0) {
    if (::setgid(65534) != 0 || ::setuid(65534) != 0 || ::listen(bound, 4) != 0) ::_exit(1);
    char byte = 'r';
    if (::write(ready[1], &byte, 1) != 1) ::_exit(1);
    // Waits for the parent's verdict, then counts what the connection (if any) carried.
    if (::read(report[0], &byte, 1) != 1) ::_exit(1);
    ssize_t total = 0;
    for (int client; (client = ::accept4(bound, nullptr, nullptr, SOCK_NONBLOCK)) >= 0;) {
      char chunk[4096];
      for (ssize_t got; (got = ::recv(client, chunk, sizeof chunk, 0)) > 0;) total += got;
      ::close(client);
    }
    ::_exit(total == 0 ? 0 : 2);
  }
  ::close(bound);
  char byte = 0;
  ASSERT_EQ(::read(ready[0], &byte, 1), 1);
  try {
    LiveSink sink(path, "secret command line");
    ADD_FAILURE() << "streamed to a listener of uid 65534";
  } catch (const TraceError& e) {
    EXPECT_THAT(e.what(), HasSubstr("runs as uid 65534"));
    EXPECT_THAT(e.what(), HasSubstr(path.string()));
  }
  ASSERT_EQ(::write(report[1], &byte, 1), 1);
  int status = 0;
  ::waitpid(child, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
      << "the listener of uid 65534 received bytes (status " << status << ")";
  for (int fd : {ready[0], ready[1], report[0], report[1]}) ::close(fd);
}

}  // namespace
}  // namespace weft::telemetry
