// --cache-dir and --no-cache: the command-line equivalents of WEFT_CACHE_DIR and WEFT_CACHE=0.
#include "commands.h"
#include "weft/cache/process_cache.h"

namespace weft::cli {

void add_cache_flags(CLI::App& app, CacheFlags& flags) {
  app.add_option("--cache-dir", flags.directory,
                 "Directory of the persistent program cache (overrides WEFT_CACHE_DIR; default "
                 "$XDG_CACHE_HOME/weft, else ~/.cache/weft).")
      ->type_name("DIR")
      // An empty value would otherwise mean "not given" and quietly use the default.
      ->check(CLI::Validator(
          [](std::string& directory) -> std::string {
            if (!directory.empty()) return "";
            return "the directory is empty; give a directory (e.g. --cache-dir ~/.cache/weft), "
                   "or --no-cache to compile without the persistent cache";
          },
          "", ""));
  app.add_flag("--no-cache", flags.off,
               "Compile without the persistent program cache (as WEFT_CACHE=0).");
}

void apply_cache_flags(const CacheFlags& flags) {
  if (flags.directory.empty() && !flags.off) return;
  cache::ProcessCache& process_cache = cache::ProcessCache::instance();
  cache::CacheSettings settings = process_cache.settings();
  if (!flags.directory.empty()) settings.directory = flags.directory;
  if (flags.off) settings.enabled = false;
  process_cache.configure(std::move(settings));
}

}  // namespace weft::cli
