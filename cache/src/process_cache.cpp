#include "weft/cache/process_cache.h"

#include <cstdlib>
#include <vector>

#include "weft/error.h"
#include "weft/log.h"

namespace weft::cache {

namespace {
constexpr std::string_view kComponent = "cache";
}

ProcessCache& ProcessCache::instance() {
  static ProcessCache* cache = new ProcessCache();
  return *cache;
}

ProcessCache::ProcessCache() {
  configure_from_environment();
}

void ProcessCache::configure_from_environment() {
  std::vector<std::string> warnings;
  CacheSettings settings = settings_from_environment(&warnings);
  for (const std::string& warning : warnings) log::warning(kComponent, warning);
  configure(std::move(settings));
}

void ProcessCache::configure(CacheSettings settings) {
  std::shared_ptr<ProgramStore> old;
  {
    std::lock_guard lock(mutex_);
    old = std::move(store_);
    settings_ = std::move(settings);
    opened_ = false;
    gave_up_ = false;
  }
  // The old store flushes in its destructor once its last user lets go.
}

CacheSettings ProcessCache::settings() const {
  std::lock_guard lock(mutex_);
  return settings_;
}

std::string ProcessCache::location() const {
  std::lock_guard lock(mutex_);
  if (store_) return store_->path().string();
  try {
    auto directory = settings_.directory.empty() ? default_cache_directory() : settings_.directory;
    return (directory / "cache.sqlite3").string();
  } catch (const Error&) {
    return {};
  }
}

std::shared_ptr<ProgramStore> ProcessCache::store() {
  std::lock_guard lock(mutex_);
  if (!settings_.enabled || gave_up_) return nullptr;
  if (opened_) return store_;
  opened_ = true;
  StoreOptions options;
  options.directory = settings_.directory;
  options.writer = settings_.writer;
  options.min_compile_time_s = settings_.min_compile_time_s;
  options.max_bytes = settings_.max_bytes;
  options.shared = settings_.shared;
  options.key_file = settings_.key_file;
  try {
    store_ = std::make_shared<ProgramStore>(options);
  } catch (const Error& e) {
    gave_up_ = true;
    std::string message = e.what();
    if (!message.empty() && message.back() != '.') message += '.';
    log::warning(kComponent,
                 message + " Running without the persistent cache (WEFT_CACHE=0 silences this).");
    return nullptr;
  }
  log::debug(kComponent, "opened " + store_->path().string() +
                             (settings_.writer ? " (writer" : " (read-only") + ": " +
                             settings_.writer_reason + ")");
  if (!exit_hook_) {
    exit_hook_ = true;
    std::atexit([] { ProcessCache::instance().flush(); });
  }
  return store_;
}

void ProcessCache::give_up(const ProgramStore* store, std::string_view what_failed) {
  std::shared_ptr<ProgramStore> old;
  {
    std::lock_guard lock(mutex_);
    if (store != store_.get()) {
      // The application has configured another cache since; this one no longer matters.
      log::warning(kComponent, std::string(what_failed) +
                                   " (a cache this process no longer uses; the current one "
                                   "stays on)");
      return;
    }
    if (gave_up_) return;
    gave_up_ = true;
    old = std::move(store_);
  }
  log::warning(kComponent, std::string(what_failed) +
                               ". Running the rest of this process without the persistent "
                               "cache (WEFT_CACHE=0 silences this).");
}

void ProcessCache::flush() noexcept {
  std::shared_ptr<ProgramStore> store;
  {
    std::lock_guard lock(mutex_);
    store = store_;
  }
  if (!store) return;
  try {
    store->flush();
  } catch (const std::exception& e) {
    log::debug(kComponent, std::string("could not write hit counts: ") + e.what());
  }
}

}  // namespace weft::cache
