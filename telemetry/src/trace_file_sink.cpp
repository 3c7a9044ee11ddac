// Writes a recording into an SQLite trace file, one transaction per delivered batch.
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <ctime>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <system_error>
#include <tuple>

#include "sqlite.h"
#include "trace_schema.h"
#include "weft/cache/process_cache.h"
#include "weft/cache/store.h"
#include "weft/error.h"
#include "weft/log.h"
#include "weft/telemetry/trace_file.h"

namespace weft::telemetry {

namespace {

using cache::detail::Database;
using cache::detail::SqliteFailure;
using cache::detail::Statement;
using cache::detail::WriteTransaction;

std::filesystem::path expand_pid(const std::filesystem::path& path) {
  std::string text = path.string();
  const std::string pid = std::to_string(getpid());
  for (std::size_t at = text.find("%p"); at != std::string::npos; at = text.find("%p", at)) {
    text.replace(at, 2, pid);
    at += pid.size();
  }
  return text;
}

std::string utc_now() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return text;
}

[[noreturn]] void refuse(const std::filesystem::path& path, const std::string& why) {
  throw TraceError("weft: cannot record a trace to " + path.string() + ": " + why);
}

// An open file descriptor, closed with its owner.
struct FileHandle {
  int fd = -1;
  explicit FileHandle(int f = -1) : fd(f) {}
  FileHandle(const FileHandle&) = delete;
  FileHandle& operator=(const FileHandle&) = delete;
  ~FileHandle() {
    if (fd >= 0) ::close(fd);
  }
};

// The files this process records into (device, inode). Another process sees a recording in
// progress by its lock; this one must not even open such a file to try the lock, because
// closing any descriptor of a file drops the POSIX locks SQLite holds on it here.
class FilesRecordedHere {
 public:
  // Never destroyed: a sink may end during static destruction.
  static FilesRecordedHere& instance() {
    static auto* files = new FilesRecordedHere;
    return *files;
  }
  bool contains(const struct stat& st) {
    std::lock_guard lock(mutex_);
    return files_.count({st.st_dev, st.st_ino}) > 0;
  }
  void add(const struct stat& st) {
    std::lock_guard lock(mutex_);
    files_.insert({st.st_dev, st.st_ino});
  }
  void remove(const struct stat& st) {
    std::lock_guard lock(mutex_);
    files_.erase({st.st_dev, st.st_ino});
  }

 private:
  std::mutex mutex_;
  std::set<std::pair<dev_t, ino_t>> files_;
};

constexpr const char* kRecordingInProgress =
    "another recording is in progress in it (its recorder holds the file's lock), so it is left "
    "alone; give each process its own file with %p in the name (WEFT_TRACE=run-%p.wefttrace) or "
    "choose another path";

// Removes an earlier trace at `path`; refuses to touch anything else, and a recording in
// progress (its recorder holds the file's lock) above all.
void clear_earlier_trace(const std::filesystem::path& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) == 0 && FilesRecordedHere::instance().contains(st))
    refuse(path, kRecordingInProgress);
  FileHandle existing(::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
  if (existing.fd < 0) {
    if (errno == ENOENT) return;
    if (errno == ELOOP) refuse(path, "it exists and is not a regular file; choose another path");
    refuse(path, std::string("it exists and cannot be opened (") + std::strerror(errno) +
                     "), so it is left alone; remove it or choose another path");
  }
  if (::fstat(existing.fd, &st) != 0 || !S_ISREG(st.st_mode))
    refuse(path, "it exists and is not a regular file; choose another path");
  if (::flock(existing.fd, LOCK_EX | LOCK_NB) != 0) refuse(path, kRecordingInProgress);

  if (!detail::is_weft_trace(path))
    refuse(path,
           "the file exists and is not a weft trace, so it is left alone; remove it or choose "
           "another path");
  std::error_code error;
  std::filesystem::remove(path, error);
  for (const char* suffix : {"-wal", "-shm", "-journal"})
    std::filesystem::remove(path.string() + suffix, error);
}

// Creates `path` afresh and takes its lock, held until the recording ends: an exclusive flock(2),
// which on Linux is apart from the POSIX locks SQLite itself takes on the file.
int create_locked(const std::filesystem::path& path) {
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0) {
    if (errno == EEXIST)
      refuse(path,
             "another process created it just now (two recordings given the same path?), so it "
             "is left alone; give each process its own file with %p in the name");
    refuse(path, std::string(std::strerror(errno)) +
                     ". Check that its directory exists and is writable, or set WEFT_TRACE to "
                     "another path.");
  }
  // Blocking: whoever else holds it is only checking whether the file is a recording in progress.
  while (::flock(fd, LOCK_EX) != 0 && errno == EINTR) {
  }
  return fd;
}

// Where this process's persistent cache lives, so a viewer can explain its misses.
std::string cache_directory() {
  try {
    const cache::CacheSettings settings = cache::ProcessCache::instance().settings();
    if (!settings.enabled) return "";
    return (settings.directory.empty() ? cache::default_cache_directory() : settings.directory)
        .string();
  } catch (const std::exception&) {
    return "";
  }
}

// Plain printable ASCII needs no escaping in JSON text (nor any UTF-8 repair).
bool is_plain(std::string_view text) {
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte < 0x20 || byte >= 0x7f || c == '"' || c == '\\') return false;
  }
  return true;
}

// A span's args as a JSON object (later keys win, as the reader reads them). Written by hand in
// the common plain case: this runs for every span, and a JSON library's object is several
// times slower than the SQLite insert it feeds.
void append_args_json(const Args& args, std::string& out) {
  out.clear();
  bool plain = true;
  for (const auto& [key, value] : args) plain = plain && is_plain(key) && is_plain(value);
  if (!plain) {
    nlohmann::json object = nlohmann::json::object();
    for (const auto& [key, value] : args) object[key] = value;
    out = object.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    return;
  }
  out.push_back('{');
  for (const auto& [key, value] : args) {
    if (out.size() > 1) out.push_back(',');
    out.push_back('"');
    out.append(key);
    out.append("\":\"");
    out.append(value);
    out.push_back('"');
  }
  out.push_back('}');
}

}  // namespace

struct TraceFileSink::Impl {
  // First, so it is closed last: after the database, whose POSIX locks a close of another
  // descriptor of the file would drop.
  struct Lock {
    FileHandle file;
    struct stat identity {};
    ~Lock() {
      if (file.fd >= 0) FilesRecordedHere::instance().remove(identity);
    }
  } lock;
  std::filesystem::path path;
  std::unique_ptr<Database> db;
  std::unique_ptr<Statement> insert_span, insert_edge, insert_program, insert_track, insert_counter;
  // Keyed by the track itself, so a lookup compares the span's strings without copying them.
  struct TrackOrder {
    bool operator()(const Track& a, const Track& b) const {
      return std::tie(a.kind, a.name, a.device) < std::tie(b.kind, b.name, b.device);
    }
  };
  std::map<Track, std::int64_t, TrackOrder> track_ids;
  std::int64_t origin_ns = 0;
  bool failed = false;
  std::string args_text;  // reused: one allocation for the whole recording

  std::int64_t track_id(const Track& track) {
    if (auto found = track_ids.find(track); found != track_ids.end()) return found->second;
    const auto id = static_cast<std::int64_t>(track_ids.size()) + 1;
    insert_track->reset();
    insert_track->bind(1, id);
    insert_track->bind(2, to_string(track.kind));
    insert_track->bind(3, track.name);
    insert_track->bind(4, track.device);
    insert_track->run();
    track_ids.emplace(track, id);
    return id;
  }

  void write(std::span<const Span> spans, std::span<const Edge> edges,
             std::span<const Program> programs) {
    WriteTransaction transaction(*db);
    for (const Span& span : spans) {
      const std::int64_t track = track_id(span.track);
      append_args_json(span.args, args_text);
      Statement& s = *insert_span;
      s.reset();
      s.bind(1, static_cast<std::int64_t>(span.id));
      s.bind(2, static_cast<std::int64_t>(span.parent));
      s.bind(3, to_string(span.kind));
      s.bind(4, track);
      s.bind(5, span.name);
      s.bind(6, span.effect);
      s.bind(7, span.seq);
      s.bind(8, span.start_ns - origin_ns);
      s.bind(9, span.end_ns - origin_ns);
      s.bind(10, args_text);
      s.run();
    }
    for (const Edge& edge : edges) {
      Statement& s = *insert_edge;
      s.reset();
      s.bind(1, static_cast<std::int64_t>(edge.from));
      s.bind(2, static_cast<std::int64_t>(edge.to));
      s.bind(3, edge.effect);
      s.run();
    }
    for (const Program& program : programs) {
      nlohmann::json kernels = nlohmann::json::array();
      for (const Program::Kernel& k : program.kernels)
        kernels.push_back({{"name", k.name}, {"kind", k.kind}, {"fused_ops", k.fused_ops}});
      Statement& s = *insert_program;
      s.reset();
      s.bind(1, static_cast<std::int64_t>(program.id));
      s.bind(2, program.function);
      s.bind(3, program.device);
      s.bind(4, program.cache_key);
      s.bind(5, program.cache_status);
      s.bind(6, program.ir);
      s.bind(7, program.source);
      s.bind(8, kernels.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
      s.run();
    }
    transaction.commit();
  }

  void give_up(const SqliteFailure& e) {
    failed = true;
    log::warning("telemetry", "writing the trace " + path.string() + " failed: " + e.what() +
                                  "; the rest of this recording is dropped (the file keeps "
                                  "what was written before)");
  }

  void write_counters(std::span<const Counter> counters) {
    WriteTransaction transaction(*db);
    for (const Counter& counter : counters) {
      Statement& s = *insert_counter;
      s.reset();
      s.bind(1, counter.name);
      s.bind(2, counter.device);
      s.bind(3, counter.time_ns - origin_ns);
      s.bind(4, counter.value);
      s.run();
    }
    transaction.commit();
  }
};

TraceFileSink::TraceFileSink(const std::filesystem::path& requested, std::string command)
    : impl_(std::make_unique<Impl>()) {
  Impl& impl = *impl_;
  impl.path = expand_pid(requested);
  impl.origin_ns = now_ns();
  try {
    clear_earlier_trace(impl.path);
    impl.lock.file.fd = create_locked(impl.path);
    ::fstat(impl.lock.file.fd, &impl.lock.identity);
    FilesRecordedHere::instance().add(impl.lock.identity);
    impl.db = std::make_unique<Database>(
        impl.path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOFOLLOW |
                       SQLITE_OPEN_NOMUTEX);  // one delivery at a time uses it
    // A trace is rewritten from scratch each run: losing it to a power cut is acceptable, a
    // crash of the recorded process must still leave a readable file (WAL does).
    // 16 KiB pages: fewer page splits per batch of rows than the default 4 KiB (about 10%).
    impl.db->exec("PRAGMA page_size=16384; PRAGMA journal_mode=WAL; PRAGMA synchronous=OFF;");
    impl.db->exec(detail::kTraceSchema);
    Statement meta(*impl.db, "INSERT INTO weft_trace(key, value) VALUES(?1, ?2)");
    auto put = [&](const char* key, const std::string& value) {
      meta.reset();
      meta.bind(1, key);
      meta.bind(2, value);
      meta.run();
    };
    put("format", detail::kFormatName);
    put("version", std::to_string(kTraceFormatVersion));
    put("weft_version", WEFT_VERSION);
    put("pid", std::to_string(getpid()));
    put("started", utc_now());
    put("command", command);
    put("clock", "steady_clock ns since the recording started");
    put("cache_dir", cache_directory());
    impl.insert_span = std::make_unique<Statement>(
        *impl.db,
        "INSERT OR REPLACE INTO spans(id, parent, kind, track, name, effect, seq, start_ns, "
        "end_ns, args) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)");
    impl.insert_edge = std::make_unique<Statement>(
        *impl.db, "INSERT INTO edges(source, target, effect) VALUES(?1, ?2, ?3)");
    impl.insert_program = std::make_unique<Statement>(
        *impl.db,
        "INSERT OR REPLACE INTO programs(id, function, device, cache_key, cache_status, ir, "
        "source, kernels) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)");
    impl.insert_track = std::make_unique<Statement>(
        *impl.db, "INSERT INTO tracks(id, kind, name, device) VALUES(?1, ?2, ?3, ?4)");
    impl.insert_counter = std::make_unique<Statement>(
        *impl.db, "INSERT INTO counters(name, device, time_ns, value) VALUES(?1, ?2, ?3, ?4)");
  } catch (const SqliteFailure& e) {
    throw TraceError("weft: cannot record a trace to " + impl.path.string() + ": " + e.what() +
                     ". Check that its directory exists and is writable, or set WEFT_TRACE "
                     "to another path.");
  }
}

TraceFileSink::~TraceFileSink() {
  if (!impl_->db || impl_->failed) return;
  // Back to a single self-contained file that read-only viewers open without side files.
  sqlite3_exec(impl_->db->get(), "PRAGMA journal_mode=DELETE", nullptr, nullptr, nullptr);
}

const std::filesystem::path& TraceFileSink::path() const {
  return impl_->path;
}

void TraceFileSink::write(std::span<const Span> spans, std::span<const Edge> edges,
                          std::span<const Program> programs) {
  if (impl_->failed) return;
  try {
    impl_->write(spans, edges, programs);
  } catch (const SqliteFailure& e) {
    impl_->give_up(e);
  }
}

void TraceFileSink::write_counters(std::span<const Counter> counters) {
  if (impl_->failed) return;
  try {
    impl_->write_counters(counters);
  } catch (const SqliteFailure& e) {
    impl_->give_up(e);
  }
}

void TraceFileSink::flush() {
  if (impl_->failed || !impl_->db) return;
  // Folds the write-ahead log into the file, so a copy of the file alone is the whole trace.
  sqlite3_wal_checkpoint_v2(impl_->db->get(), nullptr, SQLITE_CHECKPOINT_TRUNCATE, nullptr,
                            nullptr);
}

}  // namespace weft::telemetry
