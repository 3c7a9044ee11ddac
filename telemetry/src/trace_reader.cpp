// Reads a trace file back, treating it as untrusted: SQLite's defensive mode, no trust in the
// schema (views or triggers are refused), every row validated before use, and text from the
// file quoted in an error escaped for the terminal.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <nlohmann/json.hpp>
#include <numeric>
#include <unordered_map>

#include "sqlite.h"
#include "trace_schema.h"
#include "weft/error.h"
#include "weft/telemetry/terminal_text.h"
#include "weft/telemetry/trace_file.h"

namespace weft::telemetry {

namespace {

using cache::detail::Database;
using cache::detail::SqliteFailure;
using cache::detail::Statement;

constexpr std::array<const char*, 5> kTables = {"weft_trace", "tracks", "spans", "edges",
                                                "programs"};
constexpr char kSqliteMagic[] = "SQLite format 3";  // and its NUL: the first 16 bytes

// Every text or blob a row may hold (a program's source is the largest thing).
constexpr int kMaxValueBytes = 64 << 20;
// Times are nanoseconds from the recording's start: 2^60 ns is 36 years either way, and keeps
// every difference and sum of two times far from overflowing.
constexpr std::int64_t kMaxTimeNs = std::int64_t{1} << 60;

[[noreturn]] void fail(const std::string& where, const std::string& problem) {
  throw TraceError("weft: " + where + " " + problem);
}

const char* file_kind(mode_t mode) {
  if (S_ISFIFO(mode)) return "FIFO";
  if (S_ISDIR(mode)) return "directory";
  if (S_ISCHR(mode) || S_ISBLK(mode)) return "device";
  if (S_ISSOCK(mode)) return "socket";
  return "special file";
}

void harden(sqlite3* db) {
  sqlite3_db_config(db, SQLITE_DBCONFIG_DEFENSIVE, 1, nullptr);
  sqlite3_db_config(db, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, nullptr);
  sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_TRIGGER, 0, nullptr);
  sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_VIEW, 0, nullptr);
  sqlite3_limit(db, SQLITE_LIMIT_LENGTH, kMaxValueBytes);
  sqlite3_limit(db, SQLITE_LIMIT_ATTACHED, 0);
  sqlite3_exec(db, "PRAGMA cell_size_check=ON; PRAGMA query_only=ON;", nullptr, nullptr, nullptr);
}

bool is_table(Database& db, const char* name) {
  Statement s(db, "SELECT type FROM sqlite_schema WHERE name = ?1");
  s.bind(1, std::string_view(name));
  return s.step() && s.column_text(0) == "table";
}

// The common case fast: a flat object of plain strings (no escapes), as weft writes it. Returns
// false, with nothing consumed, for anything else (escapes, other JSON), which parse_args then
// gives to the full JSON parser.
bool parse_plain_args(std::string_view text, Args& args) {
  std::size_t i = 0;
  auto skip_space = [&] {
    while (i < text.size() &&
           (text[i] == ' ' || text[i] == '\n' || text[i] == '\t' || text[i] == '\r'))
      ++i;
  };
  auto plain_string = [&](std::string& out) {
    if (i >= text.size() || text[i] != '"') return false;
    const std::size_t start = ++i;
    while (i < text.size() && text[i] != '"') {
      const auto c = static_cast<unsigned char>(text[i]);
      if (c == '\\' || c < 0x20) return false;
      ++i;
    }
    if (i >= text.size()) return false;
    out.assign(text.substr(start, i - start));
    ++i;
    return true;
  };
  skip_space();
  if (i >= text.size() || text[i] != '{') return false;
  ++i;
  skip_space();
  if (i < text.size() && text[i] == '}') {
    ++i;
    skip_space();
    return i == text.size();
  }
  for (;;) {
    std::string key, value;
    skip_space();
    if (!plain_string(key)) return false;
    skip_space();
    if (i >= text.size() || text[i] != ':') return false;
    ++i;
    skip_space();
    if (!plain_string(value)) return false;
    args.emplace_back(std::move(key), std::move(value));
    skip_space();
    if (i < text.size() && text[i] == ',') {
      ++i;
      continue;
    }
    if (i < text.size() && text[i] == '}') {
      ++i;
      skip_space();
      return i == text.size();
    }
    return false;
  }
}

// `where` names the row, made only on failure.
template <typename Where>
Args parse_args(std::string_view text, const Where& where) {
  Args args;
  if (parse_plain_args(text, args)) {
    // JSON objects keep their last value of a repeated key, and list keys in order.
    std::stable_sort(args.begin(), args.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    for (std::size_t k = args.size(); k-- > 1;)
      if (args[k - 1].first == args[k].first)
        args.erase(args.begin() + static_cast<std::ptrdiff_t>(k - 1));
    return args;
  }
  args.clear();
  nlohmann::json json = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!json.is_object()) fail(where(), "has arguments that are not a JSON object");
  args.reserve(json.size());
  for (auto& [key, value] : json.items()) {
    if (!value.is_string())
      fail(where(), "has the non-text argument \"" + terminal_text(key) + "\"");
    args.emplace_back(key, value.template get<std::string>());
  }
  return args;
}

// The counters table, absent from traces recorded before counters (still version 1: a reader
// may do without it). Every row is checked: text where the format has text, an integer time
// within kMaxTimeNs, a finite number.
std::vector<Counter> read_counters(Database& db, const std::string& where) {
  std::vector<Counter> counters;
  if (!is_table(db, "counters")) return counters;
  // typeof() says what each value is stored as (a column's declared type binds nothing).
  Statement s(db,
              "SELECT name, device, time_ns, value, typeof(name), typeof(device), "
              "typeof(time_ns), typeof(value) FROM counters");
  std::size_t row_number = 0;
  while (s.step()) {
    ++row_number;
    auto row = [&] { return where + " counter row " + std::to_string(row_number); };
    if (s.column_view(4) != "text" || s.column_view(5) != "text")
      fail(row(), "has a name or device that is not text");
    if (s.column_view(6) != "integer") fail(row(), "has a time that is not an integer");
    const std::string_view value_type = s.column_view(7);
    if (value_type != "real" && value_type != "integer")
      fail(row(), "has a value that is not a number");
    Counter counter;
    counter.name = s.column_text(0);
    if (counter.name.empty()) fail(row(), "has an empty name");
    counter.device = s.column_text(1);
    counter.time_ns = s.column_int(2);
    if (counter.time_ns < -kMaxTimeNs || counter.time_ns > kMaxTimeNs)
      fail(row(), "has a time more than 36 years from the recording's start");
    counter.value = s.column_double(3);
    if (!std::isfinite(counter.value)) fail(row(), "has a value that is not finite");
    counters.push_back(std::move(counter));
  }
  std::stable_sort(counters.begin(), counters.end(),
                   [](const Counter& a, const Counter& b) { return a.time_ns < b.time_ns; });
  return counters;
}

std::vector<Program::Kernel> parse_kernels(const std::string& text, const std::string& where) {
  nlohmann::json json = nlohmann::json::parse(text, nullptr, false);
  if (!json.is_array()) fail(where, "has a kernel list that is not a JSON array");
  std::vector<Program::Kernel> kernels;
  for (const nlohmann::json& k : json) {
    if (!k.is_object() || !k.contains("name") || !k["name"].is_string() || !k.contains("kind") ||
        !k["kind"].is_string() || !k.contains("fused_ops") || !k["fused_ops"].is_array())
      fail(where, "has a malformed kernel entry");
    Program::Kernel kernel{k["name"].get<std::string>(), k["kind"].get<std::string>(), {}};
    for (const nlohmann::json& op : k["fused_ops"]) {
      if (!op.is_string()) fail(where, "has a fused op that is not text");
      kernel.fused_ops.push_back(op.get<std::string>());
    }
    kernels.push_back(std::move(kernel));
  }
  return kernels;
}

Trace read_database(Database& db, const std::string& name) {
  const std::string where = name;
  harden(db.get());
  Trace trace;
  try {
    if (!is_table(db, "weft_trace"))
      fail(where, "is not a weft trace (an SQLite database without the weft_trace table)");
    {
      Statement s(db, "SELECT key, value FROM weft_trace");
      while (s.step()) trace.meta[s.column_text(0)] = s.column_text(1);
    }
    if (trace.meta["format"] != detail::kFormatName)
      fail(where,
           "is not a weft trace (its format is \"" + terminal_text(trace.meta["format"]) + "\")");
    int version = 0;
    try {
      version = std::stoi(trace.meta["version"]);
    } catch (const std::exception&) {
      fail(where,
           "has the unreadable format version \"" + terminal_text(trace.meta["version"]) + "\"");
    }
    if (version < 1 || version > kTraceFormatVersion)
      fail(where, "is a version " + terminal_text(trace.meta["version"]) +
                      " weft trace; this weft reads versions 1 to " +
                      std::to_string(kTraceFormatVersion) + " (open it with a newer weft)");
    for (const char* table : kTables)
      if (!is_table(db, table))
        fail(where, std::string("is not a complete weft trace (no table ") + table + ")");

    std::unordered_map<std::int64_t, std::size_t> track_index;
    {
      Statement s(db, "SELECT id, kind, name, device FROM tracks ORDER BY id");
      while (s.step()) {
        const std::int64_t id = s.column_int(0);
        const std::string kind = s.column_text(1);
        std::optional<TrackKind> parsed = parse_track_kind(kind);
        if (!parsed)
          fail(where, "has track " + std::to_string(id) + " of the unknown kind \"" +
                          terminal_text(kind) + "\"");
        track_index.emplace(id, trace.tracks.size());
        trace.tracks.push_back({*parsed, s.column_text(2), s.column_text(3)});
      }
    }
    {
      Statement count(db, "SELECT count(*) FROM spans");
      if (count.step())
        trace.spans.reserve(static_cast<std::size_t>(
            std::clamp<std::int64_t>(count.column_int(0), 0, std::int64_t{1} << 26)));
    }
    {
      Statement s(db,
                  "SELECT id, parent, kind, track, name, effect, seq, start_ns, end_ns, args "
                  "FROM spans");
      while (s.step()) {
        Span span;
        const std::int64_t id = s.column_int(0);
        // Named only when something is wrong (this loop runs once per span).
        auto row = [&] { return where + " span " + std::to_string(id); };
        for (int column : {0, 1, 3, 6, 7, 8})
          if (!s.column_is_integer(column))
            fail(row(), "has a value that is not an integer where the format has one");
        if (id <= 0) fail(row(), "has a non-positive id");
        span.id = static_cast<Id>(id);
        span.parent = static_cast<Id>(std::max<std::int64_t>(0, s.column_int(1)));
        const std::string_view kind = s.column_view(2);
        std::optional<SpanKind> parsed = parse_span_kind(kind);
        if (!parsed) fail(row(), "has the unknown kind \"" + terminal_text(kind) + "\"");
        span.kind = *parsed;
        auto track = track_index.find(s.column_int(3));
        if (track == track_index.end()) fail(row(), "names a track the file does not have");
        span.track = trace.tracks[track->second];
        span.name = s.column_text(4);
        span.effect = s.column_text(5);
        span.seq = s.column_int(6);
        span.start_ns = s.column_int(7);
        span.end_ns = s.column_int(8);
        if (span.end_ns < span.start_ns) fail(row(), "ends before it starts");
        if (span.start_ns < -kMaxTimeNs || span.end_ns > kMaxTimeNs)
          fail(row(), "has a time more than 36 years from the recording's start");
        span.args = parse_args(s.column_view(9), row);
        trace.spans.push_back(std::move(span));
      }
    }
    // Sorted here rather than by SQL (faster): by start, then id. Files come nearly sorted,
    // so sort positions and move each span once.
    const auto earlier = [](const Span& a, const Span& b) {
      return a.start_ns != b.start_ns ? a.start_ns < b.start_ns : a.id < b.id;
    };
    if (!std::is_sorted(trace.spans.begin(), trace.spans.end(), earlier)) {
      std::vector<std::uint32_t> order(trace.spans.size());
      std::iota(order.begin(), order.end(), 0u);
      std::sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) {
        return earlier(trace.spans[a], trace.spans[b]);
      });
      std::vector<Span> sorted;
      sorted.reserve(trace.spans.size());
      for (std::uint32_t i : order) sorted.push_back(std::move(trace.spans[i]));
      trace.spans = std::move(sorted);
    }
    trace.reindex();
    {
      Statement s(db, "SELECT source, target, effect FROM edges");
      while (s.step()) {
        Edge edge{static_cast<Id>(s.column_int(0)), static_cast<Id>(s.column_int(1)),
                  s.column_text(2)};
        // An edge to a span the recording lost (the process died first) is dropped, not fatal.
        if (trace.index_of(edge.from) < 0 || trace.index_of(edge.to) < 0) continue;
        trace.edges.push_back(std::move(edge));
      }
    }
    {
      Statement s(db,
                  "SELECT id, function, device, cache_key, cache_status, ir, source, kernels "
                  "FROM programs ORDER BY id");
      while (s.step()) {
        Program program;
        program.id = static_cast<Id>(s.column_int(0));
        program.function = s.column_text(1);
        program.device = s.column_text(2);
        program.cache_key = s.column_text(3);
        program.cache_status = s.column_text(4);
        program.ir = s.column_text(5);
        program.source = s.column_text(6);
        program.kernels =
            parse_kernels(s.column_text(7), where + " program " + std::to_string(program.id));
        trace.programs.push_back(std::move(program));
      }
    }
    trace.counters = read_counters(db, where);
  } catch (const SqliteFailure& e) {
    if (e.code() == SQLITE_NOTADB) fail(where, "is not a weft trace (not an SQLite database)");
    fail(where,
         std::string("cannot be read: it is truncated or corrupt (SQLite: ") + e.what() + ")");
  }
  return trace;
}

// "file:" and the absolute path, with every byte that means something in a URI escaped.
std::string uri_of(const std::filesystem::path& path) {
  static const char* hex = "0123456789ABCDEF";
  std::string uri = "file:";
  for (unsigned char c : std::filesystem::absolute(path).string()) {
    if (std::isalnum(c) || c == '/' || c == '-' || c == '_' || c == '.' || c == '~') {
      uri += static_cast<char>(c);
    } else {
      uri += '%';
      uri += hex[c >> 4];
      uri += hex[c & 15];
    }
  }
  return uri;
}

// Refuses anything but a regular SQLite file before SQLite sees it: a FIFO or a device would
// block the reader (or never end). Opened without blocking, checked with fstat, then read.
void check_trace_file(const std::filesystem::path& path, const std::string& where) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0)
    fail(where, std::string("cannot be opened (") + std::strerror(errno) +
                    "; does it exist, and may you read it?)");
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0)
    fail(where, std::string("cannot be examined: ") + std::strerror(errno));
  if (!S_ISREG(st.st_mode))
    fail(where, std::string("is not a regular file (it is a ") + file_kind(st.st_mode) +
                    "); give the path of a trace file that WEFT_TRACE or --trace recorded");
  char magic[16] = {};
  std::size_t got = 0;
  while (got < sizeof magic) {
    const ssize_t n = ::read(fd, magic + got, sizeof magic - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) fail(where, std::string("cannot be read: ") + std::strerror(errno));
    if (n == 0) break;
    got += static_cast<std::size_t>(n);
  }
  if (got == 0) fail(where, "is empty (was the recording interrupted?)");
  if (got < sizeof magic || std::memcmp(magic, kSqliteMagic, sizeof kSqliteMagic) != 0)
    fail(where, "is not a weft trace (not an SQLite database)");
}

// False when SQLite cannot use the file as it is here: a write-ahead-log file whose index it
// may neither make nor write (the first query says so, as "unable to open" or "readonly").
bool queryable(Database& db) {
  try {
    Statement probe(db, "SELECT count(*) FROM sqlite_schema");
    probe.step();
  } catch (const SqliteFailure& e) {
    return e.code() != SQLITE_CANTOPEN && e.code() != SQLITE_READONLY;
  }
  return true;
}

}  // namespace

namespace detail {

bool is_weft_trace(const std::filesystem::path& path) {
  try {
    Database db(path, SQLITE_OPEN_READONLY);
    harden(db.get());
    return is_table(db, "weft_trace");
  } catch (const std::exception&) {
    return false;
  }
}

}  // namespace detail

std::ptrdiff_t Trace::index_of(Id id) const {
  auto found = by_id_.find(id);
  return found == by_id_.end() ? -1 : static_cast<std::ptrdiff_t>(found->second);
}

const Program* Trace::program(Id id) const {
  for (const Program& p : programs)
    if (p.id == id) return &p;
  return nullptr;
}

void Trace::reindex() {
  by_id_.clear();
  by_id_.reserve(spans.size());
  for (std::size_t i = 0; i < spans.size(); ++i) by_id_.emplace(spans[i].id, i);
}

Trace read_trace(const std::filesystem::path& path) {
  const std::string where = "the trace file " + path.string();
  check_trace_file(path, where);
  // Read-only. A trace still in write-ahead-log mode (being recorded, or its recorder was
  // killed) needs a shared-memory index beside it; where that cannot be made or written (a
  // read-only directory, another user's file) SQLite fails on the first query, not on open, and
  // the file is read as immutable: what the file itself holds.
  try {
    // One thread reads: no per-call locking inside SQLite.
    Database db(path, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX);
    if (queryable(db)) return read_database(db, where);
  } catch (const SqliteFailure& e) {
    if (e.code() != SQLITE_CANTOPEN) fail(where, std::string("cannot be read: ") + e.what());
  }
  try {
    Database db(uri_of(path) + "?immutable=1",
                SQLITE_OPEN_READONLY | SQLITE_OPEN_URI | SQLITE_OPEN_NOMUTEX);
    return read_database(db, where);
  } catch (const SqliteFailure& e) {
    fail(where, std::string("cannot be opened: ") + e.what());
  }
}

Trace read_trace(std::span<const std::uint8_t> bytes) {
  const std::string where = "the trace (" + std::to_string(bytes.size()) + " bytes)";
  if (bytes.size() < 16 || std::memcmp(bytes.data(), kSqliteMagic, sizeof kSqliteMagic) != 0)
    fail(where, "is not a weft trace (not an SQLite database)");
  Database db(":memory:", SQLITE_OPEN_READWRITE | SQLITE_OPEN_MEMORY);
  auto* copy = static_cast<unsigned char*>(sqlite3_malloc64(bytes.size()));
  if (!copy) fail(where, "is too large to read into memory");
  std::memcpy(copy, bytes.data(), bytes.size());
  // A database in memory cannot use a write-ahead log: read a WAL-mode file (bytes 18 and 19
  // are its read and write versions, 2) as the rollback-journal file it is otherwise.
  if (bytes.size() >= 20 && copy[18] == 2 && copy[19] == 2) copy[18] = copy[19] = 1;
  const int rc =
      sqlite3_deserialize(db.get(), "main", copy, static_cast<sqlite3_int64>(bytes.size()),
                          static_cast<sqlite3_int64>(bytes.size()),
                          SQLITE_DESERIALIZE_FREEONCLOSE | SQLITE_DESERIALIZE_READONLY);
  if (rc != SQLITE_OK) fail(where, "cannot be read: " + std::string(sqlite3_errstr(rc)));
  return read_database(db, where);
}

}  // namespace weft::telemetry
