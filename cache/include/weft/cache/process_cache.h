// The persistent cache as compilation uses it in this process: settings from the environment
// unless the application configures them, the store opened on first use, and the rule that
// cache trouble never fails a compile: one warning, then the process runs uncached.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include "weft/cache/settings.h"
#include "weft/cache/store.h"

namespace weft::cache {

class ProcessCache {
 public:
  // The process's instance (never destroyed: exit handlers write through it).
  static ProcessCache& instance();

  // Replaces the settings; the store is reopened on next use and earlier warnings are forgotten.
  void configure(CacheSettings settings);
  // Back to what the environment says.
  void configure_from_environment();
  CacheSettings settings() const;

  // The open store, or null when the cache is off or unusable (the first failure to open it is
  // warned about once, naming the file and the cause).
  std::shared_ptr<ProgramStore> store();
  // Where the store lives (or would live), for messages; empty when it cannot be determined.
  std::string location() const;

  // A database operation on `store` failed (locked past the timeout, I/O error, not a
  // database): warns once and runs the rest of the process uncached. When `store` is no longer
  // the configured one (a late write to a cache the application has since replaced), it only
  // warns.
  void give_up(const ProgramStore* store, std::string_view what_failed);
  // Writes hit bookkeeping now (also done at exit). Never throws.
  void flush() noexcept;

 private:
  ProcessCache();

  mutable std::mutex mutex_;
  CacheSettings settings_;
  std::shared_ptr<ProgramStore> store_;
  bool opened_ = false;     // an attempt to open was made with the current settings
  bool gave_up_ = false;    // warned; uncached until configure()
  bool exit_hook_ = false;  // flush registered with atexit
};

}  // namespace weft::cache
