// Ownership, permission and link checks on the cache's files, and the per-user entry key.
#include "weft/cache/trust.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "weft/error.h"

namespace weft::cache {

namespace {

constexpr std::size_t kMinKeyBytes = 16;
constexpr std::size_t kMaxKeyBytes = 4096;
constexpr std::size_t kNewKeyBytes = 32;

std::string errno_text() {
  return std::strerror(errno);
}

// Closes a descriptor on every path out.
class FileDescriptor {
 public:
  explicit FileDescriptor(int fd) : fd_(fd) {}
  ~FileDescriptor() {
    if (fd_ >= 0) ::close(fd_);
  }
  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

const char* kind_of(mode_t mode) {
  if (S_ISLNK(mode)) return "a symbolic link";
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISCHR(mode) || S_ISBLK(mode)) return "a device";
  return "not a regular file";
}

// Writable by someone the policy does not trust: others always, the group unless shared.
std::string foreign_writers(mode_t mode, const TrustPolicy& policy) {
  if (mode & S_IWOTH) return "every user";
  if ((mode & S_IWGRP) && !policy.shared) return "its group";
  return {};
}

void check_owner_and_mode(const struct stat& info, const std::filesystem::path& path,
                          const char* what, const TrustPolicy& policy) {
  const unsigned mode = info.st_mode & 07777;
  if (info.st_uid != policy.owner && !policy.shared) {
    throw CacheError("weft cache: refusing to use " + std::string(what) + " " + path.string() +
                     ": it belongs to user id " + std::to_string(info.st_uid) +
                     ", not to this user (" + std::to_string(policy.owner) +
                     "), and cache entries are code weft runs. Use a cache directory of your "
                     "own (WEFT_CACHE_DIR), or set WEFT_CACHE_SHARED=1 for a team cache whose "
                     "members share WEFT_CACHE_KEY_FILE.");
  }
  if (const std::string writers = foreign_writers(info.st_mode, policy); !writers.empty()) {
    const std::string fix = policy.shared ? "chmod o-w " : "chmod go-w ";
    throw CacheError("weft cache: refusing to use " + std::string(what) + " " + path.string() +
                     ": its mode " + mode_text(mode) + " lets " + writers +
                     " write it, and cache entries are code weft runs. Run `" + fix +
                     path.string() + "`" +
                     (policy.shared ? "" : ", or set WEFT_CACHE_SHARED=1 for a team cache") + ".");
  }
}

std::filesystem::path config_home() {
  if (const char* xdg = std::getenv("XDG_CONFIG_HOME"); xdg && *xdg) return xdg;
  if (const char* home = std::getenv("HOME"); home && *home)
    return std::filesystem::path(home) / ".config";
  throw CacheError(
      "weft cache: neither XDG_CONFIG_HOME nor HOME is set, so there is no place for the cache "
      "key; set WEFT_CACHE_KEY_FILE");
}

void make_private_directories(const std::filesystem::path& directory) {
  std::filesystem::path prefix;
  for (const auto& part : directory) {
    prefix /= part;
    if (::mkdir(prefix.c_str(), 0700) == 0 || errno == EEXIST) continue;
    throw CacheError("weft cache: cannot create directory " + prefix.string() +
                     " for the cache key: " + errno_text() + "; set WEFT_CACHE_KEY_FILE");
  }
}

std::vector<std::uint8_t> read_key(int fd, const std::filesystem::path& key_file) {
  std::vector<std::uint8_t> key(kMaxKeyBytes + 1);
  std::size_t used = 0;
  while (used < key.size()) {
    const ssize_t got = ::read(fd, key.data() + used, key.size() - used);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0)
      throw CacheError("weft cache: cannot read the cache key " + key_file.string() + ": " +
                       errno_text());
    if (got == 0) break;
    used += static_cast<std::size_t>(got);
  }
  if (used < kMinKeyBytes || used > kMaxKeyBytes) {
    throw CacheError(
        "weft cache: the cache key " + key_file.string() + " holds " +
        (used > kMaxKeyBytes ? "more than " + std::to_string(kMaxKeyBytes) : std::to_string(used)) +
        " bytes; a key has " + std::to_string(kMinKeyBytes) + " to " +
        std::to_string(kMaxKeyBytes) +
        " random bytes. Delete it to have a new one made, or make one with "
        "`head -c 32 /dev/urandom > FILE`.");
  }
  key.resize(used);
  return key;
}

// Writes a fresh key beside `key_file` and links it into place, so that two processes
// creating the key at once both end up using the same one.
void create_key(const std::filesystem::path& key_file) {
  make_private_directories(key_file.parent_path());
  std::uint8_t bytes[kNewKeyBytes];
  for (std::size_t got = 0; got < sizeof bytes;) {
    const ssize_t n = ::getrandom(bytes + got, sizeof bytes - got, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw CacheError("weft cache: no random bytes for a new cache key: " + errno_text());
    got += static_cast<std::size_t>(n);
  }
  const std::filesystem::path temporary =
      key_file.string() + ".tmp" + std::to_string(static_cast<long>(::getpid()));
  {
    FileDescriptor fd(
        ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
    if (fd.get() < 0)
      throw CacheError("weft cache: cannot create the cache key " + key_file.string() + ": " +
                       errno_text() + "; set WEFT_CACHE_KEY_FILE to a writable place");
    if (::write(fd.get(), bytes, sizeof bytes) != static_cast<ssize_t>(sizeof bytes) ||
        ::fsync(fd.get()) != 0) {
      const std::string why = errno_text();
      ::unlink(temporary.c_str());
      throw CacheError("weft cache: cannot write the cache key " + key_file.string() + ": " + why);
    }
  }
  const bool linked = ::link(temporary.c_str(), key_file.c_str()) == 0;
  const int link_errno = errno;
  ::unlink(temporary.c_str());
  if (!linked && link_errno != EEXIST) {
    errno = link_errno;
    throw CacheError("weft cache: cannot create the cache key " + key_file.string() + ": " +
                     errno_text());
  }
}

}  // namespace

std::string mode_text(unsigned mode) {
  char text[8];
  std::snprintf(text, sizeof text, "%04o", mode & 07777);
  return text;
}

std::filesystem::path default_key_file() {
  if (const char* file = std::getenv("WEFT_CACHE_KEY_FILE"); file && *file) return file;
  return config_home() / "weft" / "cache.key";
}

void check_cache_directory(const std::filesystem::path& directory, const TrustPolicy& policy) {
  struct stat info {};
  if (::stat(directory.c_str(), &info) != 0)
    throw CacheError("weft cache: cannot examine the cache directory " + directory.string() + ": " +
                     errno_text());
  if (!S_ISDIR(info.st_mode))
    throw CacheError("weft cache: " + directory.string() + " is not a directory");
  check_owner_and_mode(info, directory, "the cache directory", policy);
}

void check_cache_file(int fd, const std::filesystem::path& path, const TrustPolicy& policy) {
  struct stat info {};
  if (::fstat(fd, &info) != 0)
    throw CacheError("weft cache: cannot examine " + path.string() + ": " + errno_text());
  if (!S_ISREG(info.st_mode))
    throw CacheError("weft cache: refusing to use " + path.string() + ": it is " +
                     kind_of(info.st_mode) + ". Remove it, or use another WEFT_CACHE_DIR.");
  check_owner_and_mode(info, path, "the cache database", policy);
}

void check_side_files(const std::filesystem::path& database, const TrustPolicy& policy) {
  for (const char* suffix : {"-wal", "-shm", "-journal"}) {
    const std::filesystem::path side = database.string() + suffix;
    struct stat info {};
    if (::lstat(side.c_str(), &info) != 0) {
      if (errno == ENOENT) continue;
      throw CacheError("weft cache: cannot examine " + side.string() + ": " + errno_text());
    }
    if (!S_ISREG(info.st_mode))
      throw CacheError("weft cache: refusing to use " + database.string() + ": its side file " +
                       side.string() + " is " + kind_of(info.st_mode) +
                       ", and weft follows no links for its database. Remove it (weft cache "
                       "clear does), or use another WEFT_CACHE_DIR.");
    check_owner_and_mode(info, side, "the cache side file", policy);
  }
}

std::vector<std::uint8_t> load_key(const std::filesystem::path& key_file, const TrustPolicy& policy,
                                   bool create) {
  for (int attempt = 0;; ++attempt) {
    FileDescriptor fd(::open(key_file.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK));
    if (fd.get() < 0) {
      if (errno == ENOENT && create && attempt == 0) {
        create_key(key_file);
        continue;
      }
      if (errno == ELOOP)
        throw CacheError("weft cache: refusing the cache key " + key_file.string() +
                         ": it is a symbolic link. Point WEFT_CACHE_KEY_FILE at the file itself.");
      throw CacheError("weft cache: cannot open the cache key " + key_file.string() + ": " +
                       errno_text() +
                       (errno == ENOENT ? "; a process that writes the cache creates it" : ""));
    }
    struct stat info {};
    if (::fstat(fd.get(), &info) != 0)
      throw CacheError("weft cache: cannot examine the cache key " + key_file.string() + ": " +
                       errno_text());
    if (!S_ISREG(info.st_mode))
      throw CacheError("weft cache: refusing the cache key " + key_file.string() + ": it is " +
                       kind_of(info.st_mode));
    // Whoever can read the key can forge entries; whoever can write it can swap it.
    const mode_t forbidden = policy.shared ? (S_IWGRP | S_IRWXO) : (S_IRWXG | S_IRWXO);
    if (info.st_mode & forbidden) {
      throw CacheError("weft cache: refusing the cache key " + key_file.string() + ": its mode " +
                       mode_text(info.st_mode) + " lets " +
                       (policy.shared ? "users outside its group" : "other users") +
                       " read or write it, and it authenticates code weft runs. Run `chmod " +
                       (policy.shared ? "640 " : "600 ") + key_file.string() + "`.");
    }
    if (info.st_uid != policy.owner && !policy.shared)
      throw CacheError("weft cache: refusing the cache key " + key_file.string() +
                       ": it belongs to user id " + std::to_string(info.st_uid) +
                       ", not to this user; use a key of your own, or set WEFT_CACHE_SHARED=1 "
                       "for a team key.");
    return read_key(fd.get(), key_file);
  }
}

}  // namespace weft::cache
