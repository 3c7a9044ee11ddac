// The executables a device has compiled, by graph text, so that compiling a graph again (an
// eager op called in a loop, a second jit of one function) reuses the first build. Any
// executable some caller still holds is found, however many there are; of the others only the
// most recently used few stay alive, so a long-lived process that keeps making new programs
// (new jit objects, eager ops on new constants) keeps a bounded number of them. An executable
// whose graph has host callbacks stays only while a caller holds it: its key names those
// callbacks, so nobody else can ask for it again, and dropping it releases what they captured.
#pragma once

#include <cstddef>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include "weft/backend.h"
#include "weft/opencl/recently_used.h"

namespace weft::opencl {

class ExecutableCache {
 public:
  // Keeps at most `recently_used` executables alive that no caller holds.
  explicit ExecutableCache(std::size_t recently_used)
      : recent_(recently_used), sweep_at_(2 * recently_used) {}

  // The live executable stored under `key`, now the most recently used; null when none.
  std::shared_ptr<Executable> find(const std::string& key);
  // Stores `executable` under `key` and returns it, or returns the live one a racing compile
  // stored first. `reusable`: whether the cache may keep it alive once no caller holds it.
  std::shared_ptr<Executable> insert(std::string key, std::shared_ptr<Executable> executable,
                                     bool reusable);
  // Forgets every executable (those callers hold stay valid).
  void clear();
  // How many executables the cache itself keeps alive (at most `recently_used`).
  std::size_t kept() const;

 private:
  struct Entry {
    std::weak_ptr<Executable> executable;
    bool reusable = false;
  };
  using Kept = std::vector<std::shared_ptr<Executable>>;
  // Makes a live, reusable `executable` the most recently used; returns what no longer fits.
  Kept keep(const Entry& entry, const std::shared_ptr<Executable>& executable);
  // Drops the entries of executables that have died, once their number has doubled.
  void sweep();

  mutable std::mutex mutex_;
  std::unordered_map<std::string, Entry> entries_;
  RecentlyUsed<const Executable*, std::shared_ptr<Executable>> recent_;
  std::size_t sweep_at_;
};

}  // namespace weft::opencl
