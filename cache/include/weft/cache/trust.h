// Who may have written the cache. A cache entry holds native code that weft runs, so the
// cache directory, the database and its side files must be writable only by this user (or, for
// a team cache the user opted into, by the team), nothing in them may be a symbolic link, and
// every entry carries a MAC made with a secret kept outside the cache directory. See the trust
// model in docs/cache.md.
#pragma once

#include <sys/types.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace weft::cache {

struct TrustPolicy {
  // A team cache (WEFT_CACHE_SHARED=1): the directory and database may belong to another user
  // and be group-writable; never writable by others. The team shares WEFT_CACHE_KEY_FILE.
  bool shared = false;
  // The user the cache must belong to; tests substitute another.
  uid_t owner = ::geteuid();
};

// The key file when none is configured: $WEFT_CACHE_KEY_FILE, else
// $XDG_CONFIG_HOME/weft/cache.key, else $HOME/.config/weft/cache.key. It lives outside the cache
// directory so that whoever can write the cache cannot also read or replace the key. Throws
// CacheError when neither is set.
std::filesystem::path default_key_file();

// Checks that `directory` (an existing directory, reached through any links) may hold a
// cache under `policy`. Throws CacheError naming the directory, what is wrong and the fix.
void check_cache_directory(const std::filesystem::path& directory, const TrustPolicy& policy);

// Checks an open database file or side file (`-wal`, `-shm`): a regular file, owned and
// writable as `policy` allows. `fd` is an open descriptor of it. Throws CacheError.
void check_cache_file(int fd, const std::filesystem::path& path, const TrustPolicy& policy);

// Checks the side files SQLite opens beside `database` (`-wal`, `-shm`, `-journal`) where they
// exist: no links, owned and writable as `policy` allows. Throws CacheError.
void check_side_files(const std::filesystem::path& database, const TrustPolicy& policy);

// The secret that authenticates entries: the contents of `key_file` (16 to 4096 bytes). When
// the file is missing and `create` is true, 32 random bytes are written to it (mode 0600, its
// directory created 0700). The file must not be a link; a private key must be readable only by
// its owner, a shared key (policy.shared) only by its owner and group. Throws CacheError.
std::vector<std::uint8_t> load_key(const std::filesystem::path& key_file, const TrustPolicy& policy,
                                   bool create);

// "0755"
std::string mode_text(unsigned mode);

}  // namespace weft::cache
