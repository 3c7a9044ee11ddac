// The live stream over a Unix domain socket: LiveSink (the program) and LiveListener (the
// monitor).
#include "weft/telemetry/live.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <nlohmann/json.hpp>

#include "record_json.h"
#include "weft/error.h"
#include "weft/log.h"

namespace weft::telemetry {

namespace {

using nlohmann::json;

constexpr std::size_t kMaxLineBytes = 16u << 20;

sockaddr_un socket_address(const std::filesystem::path& path) {
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  const std::string text = path.string();
  if (text.size() >= sizeof address.sun_path)
    throw TraceError("weft: the monitor socket path " + text + " is longer than the " +
                     std::to_string(sizeof address.sun_path - 1) +
                     " bytes a Unix socket allows; set WEFT_MONITOR_SOCKET to a shorter path");
  std::memcpy(address.sun_path, text.c_str(), text.size() + 1);
  return address;
}

struct Fd {
  int fd = -1;
  Fd() = default;
  explicit Fd(int f) : fd(f) {}
  Fd(Fd&& other) noexcept : fd(std::exchange(other.fd, -1)) {}
  Fd& operator=(Fd&& other) noexcept {
    if (this != &other) {
      reset();
      fd = std::exchange(other.fd, -1);
    }
    return *this;
  }
  ~Fd() { reset(); }
  void reset() {
    if (fd >= 0) ::close(fd);
    fd = -1;
  }
};

// Makes (or checks) the socket's directory: this user's own, reachable by nobody else.
void prepare_directory(const std::filesystem::path& dir) {
  if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST)
    throw TraceError("weft: cannot create the monitor socket directory " + dir.string() + ": " +
                     std::strerror(errno));
  struct stat st {};
  if (::lstat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
    throw TraceError("weft: the monitor socket directory " + dir.string() +
                     " is not a directory; remove it or set WEFT_MONITOR_SOCKET");
  if (st.st_uid != ::getuid() || (st.st_mode & 077) != 0)
    throw TraceError("weft: the monitor socket directory " + dir.string() +
                     " belongs to another user or others may enter it (it must be yours, mode "
                     "0700); fix it or set WEFT_MONITOR_SOCKET to a path in a private directory");
}

std::string octal_mode(mode_t mode) {
  char text[8];
  std::snprintf(text, sizeof text, "%04o", static_cast<unsigned>(mode & 07777));
  return text;
}

// The sending side of the rules the monitor keeps: the stream carries the command line, IR,
// sources and cache keys, so it goes only to a socket in a directory that are both this user's
// own and writable by nobody else. Anything else may be another user's listener.
void check_socket_is_private(const std::filesystem::path& path) {
  const uid_t me = ::getuid();
  auto refuse = [&](const std::string& what, const std::filesystem::path& place,
                    const struct stat& st) {
    const std::string owner = st.st_uid == me ? "you" : "uid " + std::to_string(st.st_uid);
    throw TraceError("weft: not streaming to the monitor: the " + what + " " + place.string() +
                     " belongs to " + owner + " (mode " + octal_mode(st.st_mode) +
                     "), and the stream is only sent where no other user can listen; remove it "
                     "(weft-monitor --live makes a private one, owned by uid " +
                     std::to_string(me) +
                     ", not writable by group or others) or set WEFT_MONITOR_SOCKET to a socket "
                     "in a directory of your own");
  };
  auto owned_privately = [&](const struct stat& st) {
    return st.st_uid == me && (st.st_mode & (S_IWGRP | S_IWOTH)) == 0;
  };
  const std::filesystem::path dir =
      path.parent_path().empty() ? std::filesystem::path(".") : path.parent_path();
  struct stat dir_status {
  }, socket_status{};
  if (::lstat(dir.c_str(), &dir_status) != 0 || ::lstat(path.c_str(), &socket_status) != 0)
    throw TraceError("weft: WEFT_MONITOR=1 but no monitor listens on " + path.string() + " (" +
                     std::strerror(errno) +
                     "); start `weft-monitor --live` first, or unset WEFT_MONITOR");
  if (!S_ISDIR(dir_status.st_mode) || !owned_privately(dir_status))
    refuse("socket directory", dir, dir_status);
  if (!S_ISSOCK(socket_status.st_mode) || !owned_privately(socket_status))
    refuse("socket", path, socket_status);
}

std::string serialize(std::span<const Span> spans, std::span<const Edge> edges,
                      std::span<const Program> programs, std::int64_t origin_ns) {
  std::string lines;
  auto add = [&](const char* key, json value) {
    lines += json{{key, std::move(value)}}.dump(-1, ' ', false, json::error_handler_t::replace);
    lines += '\n';
  };
  // Programs first: a kernel's span may name one.
  for (const Program& p : programs) add("program", detail::to_json(p));
  for (const Span& s : spans) add("span", detail::to_json(s, origin_ns));
  for (const Edge& e : edges) add("edge", detail::to_json(e));
  return lines;
}

}  // namespace

std::filesystem::path monitor_socket_path() {
  if (const char* explicit_path = std::getenv("WEFT_MONITOR_SOCKET");
      explicit_path && *explicit_path)
    return explicit_path;
  if (const char* runtime = std::getenv("XDG_RUNTIME_DIR"); runtime && *runtime)
    return std::filesystem::path(runtime) / "weft" / "monitor.sock";
  return std::filesystem::path("/tmp") / ("weft-" + std::to_string(::getuid())) / "monitor.sock";
}

// ---------------------------------------------------------------------------------------------
// The program's side.

struct LiveSink::Impl {
  Fd socket;
  std::string pending;  // serialized lines not yet taken by the socket
  std::size_t limit = 0;
  std::size_t dropped = 0;
  std::int64_t origin_ns = 0;
  bool connected = false;

  // Sends what the socket takes now; false once the monitor has gone.
  void send_some() {
    while (connected && !pending.empty()) {
      const ssize_t sent =
          ::send(socket.fd, pending.data(), pending.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
      if (sent > 0) {
        pending.erase(0, static_cast<std::size_t>(sent));
        continue;
      }
      if (sent < 0 && errno == EINTR) continue;
      if (sent < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
      disconnect("the monitor closed the connection");
    }
  }

  // Queues `lines` (`count` records) unless the monitor is too far behind, then sends.
  void queue(const std::string& lines, std::size_t count) {
    if (pending.size() + lines.size() > limit) {
      // The monitor is not keeping up: drop this batch rather than grow or wait.
      if (dropped == 0)
        log::warning("telemetry",
                     "the monitor is not keeping up with the live stream; dropping "
                     "records beyond its " +
                         std::to_string(limit >> 20) + " MiB buffer");
      dropped += count;
    } else {
      pending += lines;
    }
    send_some();
  }

  void disconnect(const std::string& why) {
    if (!connected) return;
    connected = false;
    socket.reset();
    pending.clear();
    log::info("telemetry", "live stream ended: " + why);
  }
};

LiveSink::LiveSink(const std::filesystem::path& path, std::string command, std::size_t buffer_bytes)
    : impl_(std::make_unique<Impl>()) {
  Impl& impl = *impl_;
  impl.limit = buffer_bytes;
  impl.origin_ns = now_ns();
  const sockaddr_un address = socket_address(path);
  check_socket_is_private(path);
  // Non-blocking from the start: a monitor that stopped accepting (its backlog full) makes
  // connect fail with EAGAIN at once instead of hanging the program.
  impl.socket = Fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (impl.socket.fd < 0)
    throw TraceError(std::string("weft: cannot create a socket for the monitor: ") +
                     std::strerror(errno));
  if (::connect(impl.socket.fd, reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0) {
    const int error = errno;
    throw TraceError("weft: WEFT_MONITOR=1 but " +
                     std::string(error == EAGAIN ? "the monitor on " + path.string() +
                                                       " is not accepting connections"
                                                 : "no monitor listens on " + path.string()) +
                     " (" + std::strerror(error) +
                     "); start `weft-monitor --live` first, or unset WEFT_MONITOR");
  }
  // The socket file was ours, but the listener behind it must be too (a socket moved or
  // hard-linked into place keeps its first owner's listener).
  ucred peer{};
  peer.uid = static_cast<uid_t>(-1);  // "uid 4294967295" if the kernel could not say
  socklen_t size = sizeof peer;
  if (::getsockopt(impl.socket.fd, SOL_SOCKET, SO_PEERCRED, &peer, &size) != 0 ||
      peer.uid != ::getuid())
    throw TraceError("weft: not streaming to the monitor: the program listening on " +
                     path.string() + " runs as uid " + std::to_string(peer.uid) +
                     ", not as you (uid " + std::to_string(::getuid()) +
                     "); stop it and start your own `weft-monitor --live`, or set "
                     "WEFT_MONITOR_SOCKET to a socket in a directory of your own");
  impl.connected = true;
  json hello = {{"weft_live", 1},
                {"origin_ns", std::to_string(impl.origin_ns)},
                {"pid", std::to_string(::getpid())},
                {"command", command},
                {"weft_version", WEFT_VERSION}};
  impl.pending = hello.dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
  impl.send_some();
}

LiveSink::~LiveSink() = default;

void LiveSink::write(std::span<const Span> spans, std::span<const Edge> edges,
                     std::span<const Program> programs) {
  Impl& impl = *impl_;
  if (!impl.connected) return;
  impl.queue(serialize(spans, edges, programs, impl.origin_ns),
             spans.size() + edges.size() + programs.size());
}

void LiveSink::write_counters(std::span<const Counter> counters) {
  Impl& impl = *impl_;
  if (!impl.connected) return;
  std::string lines;
  for (const Counter& c : counters) {
    lines += json{{"counter", detail::to_json(c, impl.origin_ns)}}.dump(
        -1, ' ', false, json::error_handler_t::replace);
    lines += '\n';
  }
  impl.queue(lines, counters.size());
}

void LiveSink::flush() {
  Impl& impl = *impl_;
  // At most a short wait for a monitor that is reading (the program is finishing): never more.
  const std::int64_t deadline = now_ns() + 250'000'000;
  while (impl.connected && !impl.pending.empty() && now_ns() < deadline) {
    impl.send_some();
    if (impl.pending.empty()) break;
    pollfd p{impl.socket.fd, POLLOUT, 0};
    ::poll(&p, 1, 20);
  }
}

std::size_t LiveSink::dropped() const {
  return impl_->dropped;
}

bool LiveSink::connected() const {
  return impl_->connected;
}

// ---------------------------------------------------------------------------------------------
// The monitor's side.

struct LiveListener::Impl {
  struct Connection {
    int number = 0;
    Fd socket;
    std::string buffer;
    bool said_hello = false;
  };
  std::filesystem::path path;
  Fd listening;
  std::vector<Connection> connections;
  int next_number = 1;

  void accept_waiting() {
    for (;;) {
      Fd client(::accept4(listening.fd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC));
      if (client.fd < 0) return;
      // Only this user's programs may send (the directory already keeps others out).
      ucred peer{};
      socklen_t size = sizeof peer;
      if (::getsockopt(client.fd, SOL_SOCKET, SO_PEERCRED, &peer, &size) != 0 ||
          peer.uid != ::getuid())
        continue;
      connections.push_back({next_number++, std::move(client), {}, false});
    }
  }

  void decode_line(Connection& c, std::string_view line, LiveBatch& batch) {
    json j = json::parse(line, nullptr, /*allow_exceptions=*/false);
    std::string problem;
    if (!j.is_object() || j.size() < 1) {
      batch.problems.push_back("line is not a JSON object");
      return;
    }
    if (!c.said_hello) {
      if (!j.contains("weft_live")) {
        batch.problems.push_back("the stream does not start with a weft hello");
        return;
      }
      c.said_hello = true;
      for (const char* key : {"pid", "command", "weft_version", "origin_ns"})
        if (auto v = j.find(key); v != j.end() && v->is_string())
          batch.meta[key] = v->get<std::string>();
      return;
    }
    if (auto s = j.find("span"); s != j.end()) {
      if (auto span = detail::span_from_json(*s, problem)) batch.spans.push_back(std::move(*span));
    } else if (auto e = j.find("edge"); e != j.end()) {
      if (auto edge = detail::edge_from_json(*e, problem)) batch.edges.push_back(std::move(*edge));
    } else if (auto p = j.find("program"); p != j.end()) {
      if (auto program = detail::program_from_json(*p, problem))
        batch.programs.push_back(std::move(*program));
    } else if (auto c = j.find("counter"); c != j.end()) {
      if (auto counter = detail::counter_from_json(*c, problem))
        batch.counters.push_back(std::move(*counter));
    } else {
      problem = "unknown record";
    }
    if (!problem.empty()) batch.problems.push_back(problem);
  }

  // Reads what `c` has sent; false when it closed.
  bool read(Connection& c, LiveBatch& batch) {
    char chunk[65536];
    for (;;) {
      const ssize_t got = ::recv(c.socket.fd, chunk, sizeof chunk, 0);
      if (got == 0) return false;
      if (got < 0) {
        if (errno == EINTR) continue;
        return errno == EAGAIN || errno == EWOULDBLOCK;
      }
      c.buffer.append(chunk, static_cast<std::size_t>(got));
      std::size_t start = 0;
      for (std::size_t end; (end = c.buffer.find('\n', start)) != std::string::npos;
           start = end + 1)
        decode_line(c, std::string_view(c.buffer).substr(start, end - start), batch);
      c.buffer.erase(0, start);
      if (c.buffer.size() > kMaxLineBytes) {
        batch.problems.push_back("a line longer than 16 MiB; closing the connection");
        return false;
      }
    }
  }
};

LiveListener::LiveListener(std::filesystem::path path) : impl_(std::make_unique<Impl>()) {
  Impl& impl = *impl_;
  impl.path = std::move(path);
  const sockaddr_un address = socket_address(impl.path);
  prepare_directory(impl.path.parent_path());
  {
    // A socket left by a monitor that crashed is replaced; a live one is not.
    // Non-blocking: a live monitor whose backlog is full answers EAGAIN rather than hanging.
    Fd probe(::socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
    if (probe.fd >= 0 &&
        (::connect(probe.fd, reinterpret_cast<const sockaddr*>(&address), sizeof address) == 0 ||
         errno == EAGAIN))
      throw TraceError("weft: another monitor already listens on " + impl.path.string() +
                       "; close it, or set WEFT_MONITOR_SOCKET for both sides");
    struct stat st {};
    if (::lstat(impl.path.c_str(), &st) == 0) {
      if (!S_ISSOCK(st.st_mode))
        throw TraceError("weft: " + impl.path.string() +
                         " exists and is not a socket; remove it or set WEFT_MONITOR_SOCKET");
      ::unlink(impl.path.c_str());
    }
  }
  impl.listening = Fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (impl.listening.fd < 0 ||
      ::bind(impl.listening.fd, reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0 ||
      ::chmod(impl.path.c_str(), 0600) != 0 || ::listen(impl.listening.fd, 16) != 0)
    throw TraceError("weft: cannot listen on " + impl.path.string() + ": " + std::strerror(errno));
}

LiveListener::~LiveListener() {
  impl_->connections.clear();
  impl_->listening.reset();
  ::unlink(impl_->path.c_str());
}

const std::filesystem::path& LiveListener::path() const {
  return impl_->path;
}

std::vector<LiveBatch> LiveListener::poll() {
  Impl& impl = *impl_;
  impl.accept_waiting();
  std::vector<LiveBatch> batches;
  for (auto it = impl.connections.begin(); it != impl.connections.end();) {
    LiveBatch batch;
    batch.connection = it->number;
    const bool open = impl.read(*it, batch);
    batch.closed = !open;
    // A connection that closed without a word (another monitor checking whether this one is
    // alive) is no program.
    const bool silent = !it->said_hello && batch.problems.empty() && it->buffer.empty();
    if (!batch.spans.empty() || !batch.edges.empty() || !batch.programs.empty() ||
        !batch.counters.empty() || !batch.meta.empty() || !batch.problems.empty() ||
        (batch.closed && !silent))
      batches.push_back(std::move(batch));
    it = open ? std::next(it) : impl.connections.erase(it);
  }
  return batches;
}

}  // namespace weft::telemetry
