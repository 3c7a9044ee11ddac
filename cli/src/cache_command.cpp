// `weft cache stats|ls|show|explain|gc|clear`: look at and tidy the persistent program cache,
// the way `ccache -s` / `ccache -C` do for compilers.
#include <ctime>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "format.h"
#include "numeric_flags.h"
#include "weft/cache/explain.h"
#include "weft/cache/process_cache.h"
#include "weft/cache/settings.h"
#include "weft/cache/store.h"
#include "weft/error.h"

namespace weft::cli {

namespace {

using nlohmann::json;

std::filesystem::path cache_directory() {
  const cache::CacheSettings settings = cache::ProcessCache::instance().settings();
  return settings.directory.empty() ? cache::default_cache_directory() : settings.directory;
}

std::string shorten(const std::string& key) {
  return key.substr(0, 12);
}

json components_json(const cache::StoredComponents& c) {
  return {{"function_name", c.function_name},
          {"ir_hash", c.ir_hash},
          {"weft_version", c.weft_version},
          {"build_options", c.build_options},
          {"platform_name", c.platform_name},
          {"platform_version", c.platform_version},
          {"device_name", c.device_name},
          {"driver_version", c.driver_version},
          {"opencl_c_version", c.opencl_c_version},
          {"compression", c.compression},
          {"user_hook", c.user_hook}};
}

json entry_json(const cache::EntryInfo& e) {
  return {{"key", e.key},
          {"components", components_json(e.components)},
          {"binary_bytes", e.uncompressed_size},
          {"stored_bytes", e.compressed_size + e.metadata_size},
          {"checksum", e.checksum},
          {"compile_time_s", e.compile_time_s},
          {"created", e.created},
          {"last_used", e.last_used},
          {"hits", e.hit_count}};
}

json gc_json(const cache::GcResult& r, cache::ProgramStore& store) {
  const cache::StoreStats after = store.stats();
  return {{"path", store.path().string()},
          {"removed_entries", r.removed_entries},
          {"removed_bytes", r.removed_bytes},
          {"entries", after.entries},
          {"bytes", after.bytes}};
}

// Read-only inspection must not create a database where there is none.
bool report_missing(const std::filesystem::path& path, bool as_json) {
  if (std::filesystem::exists(path)) return false;
  if (as_json)
    std::cout << json_text(json{{"path", path.string()}, {"exists", false}}) << "\n";
  else
    std::cout << "No cache at " << path.string()
              << " yet: nothing has been compiled with the persistent cache there.\n";
  return true;
}

cache::StoreOptions store_options(bool writer) {
  const cache::CacheSettings settings = cache::ProcessCache::instance().settings();
  cache::StoreOptions options;
  options.directory = cache_directory();
  options.writer = writer;
  options.max_bytes = settings.max_bytes;
  options.shared = settings.shared;
  options.key_file = settings.key_file;
  // An administrator's command may wait longer for a busy cache than a compile would.
  options.busy_timeout = std::chrono::milliseconds(10000);
  return options;
}

cache::ProgramStore open_store(bool writer) {
  return cache::ProgramStore(store_options(writer));
}

int run_stats(const CacheOptions& o) {
  const auto path = cache_directory() / "cache.sqlite3";
  if (report_missing(path, o.json)) return kExitOk;
  cache::ProgramStore store = open_store(/*writer=*/false);
  const cache::StoreStats s = store.stats();
  const cache::CacheCounters& t = s.total;
  const cache::CacheSettings settings = cache::ProcessCache::instance().settings();
  if (o.json) {
    json misses = json::object();
    for (std::size_t i = 1; i < cache::kMissReasonCount; ++i)
      misses[std::string(cache::to_string(static_cast<cache::MissReason>(i)))] = t.misses[i];
    std::cout << json_text(json{{"path", store.path().string()},
                                {"exists", true},
                                {"entries", s.entries},
                                {"bytes", s.bytes},
                                {"binary_bytes", s.uncompressed_bytes},
                                {"max_bytes", settings.max_bytes},
                                {"hits", t.hits},
                                {"misses", misses},
                                {"misses_total", t.total_misses()},
                                {"writes", t.writes},
                                {"evictions", t.evictions},
                                {"compile_time_saved_s", t.compile_time_saved_s}})
              << "\n";
    return kExitOk;
  }
  const std::uint64_t lookups = t.hits + t.total_misses();
  std::cout << "cache " << store.path().string() << "\n";
  Table table({"", ""});
  table.add_row({"entries", std::to_string(s.entries)});
  table.add_row({"size", format_bytes(s.bytes) + " of " + format_bytes(settings.max_bytes) +
                             " (binaries " + format_bytes(s.uncompressed_bytes) + " before zstd)"});
  table.add_row(
      {"hits", std::to_string(t.hits) +
                   (lookups ? " (" + std::to_string(100 * t.hits / lookups) + "%)" : "")});
  table.add_row({"misses", std::to_string(t.total_misses())});
  for (std::size_t i = 1; i < cache::kMissReasonCount; ++i)
    if (t.misses[i])
      table.add_row({"  " + std::string(cache::to_string(static_cast<cache::MissReason>(i))),
                     std::to_string(t.misses[i])});
  table.add_row({"writes", std::to_string(t.writes)});
  table.add_row({"evictions", std::to_string(t.evictions)});
  table.add_row({"compile time saved", format_seconds(t.compile_time_saved_s)});
  std::cout << table.render("  ", false);
  return kExitOk;
}

int run_ls(const CacheOptions& o) {
  const auto path = cache_directory() / "cache.sqlite3";
  if (report_missing(path, o.json)) return kExitOk;
  cache::ProgramStore store = open_store(false);
  std::vector<cache::EntryInfo> entries = store.list();
  if (o.limit > 0 && entries.size() > static_cast<std::size_t>(o.limit))
    entries.resize(static_cast<std::size_t>(o.limit));
  if (o.json) {
    json list = json::array();
    for (const auto& e : entries) list.push_back(entry_json(e));
    std::cout << json_text(json{{"path", store.path().string()}, {"entries", list}}) << "\n";
    return kExitOk;
  }
  if (entries.empty()) {
    std::cout << "The cache at " << store.path().string() << " is empty.\n";
    return kExitOk;
  }
  Table table({"key", "function", "device", "size", "compile", "hits", "last used"},
              {Table::Align::Left, Table::Align::Left, Table::Align::Left, Table::Align::Right,
               Table::Align::Right, Table::Align::Right, Table::Align::Left});
  for (const auto& e : entries)
    table.add_row({shorten(e.key), e.components.function_name, e.components.device_name,
                   format_bytes(e.compressed_size + e.metadata_size),
                   format_seconds(e.compile_time_s), std::to_string(e.hit_count),
                   cache::format_local_time(e.last_used)});
  std::cout << table.render("");
  return kExitOk;
}

int run_show(const CacheOptions& o) {
  const auto path = cache_directory() / "cache.sqlite3";
  if (report_missing(path, o.json)) return kExitError;
  cache::ProgramStore store = open_store(false);
  // A unique prefix is enough, as with git hashes; `ls` prints 12 digits.
  std::vector<cache::EntryInfo> matches;
  for (auto& e : store.list())
    if (e.key.rfind(o.key, 0) == 0) matches.push_back(std::move(e));
  if (matches.size() != 1)
    throw InvalidArgumentError(
        "weft cache show: " +
        std::string(matches.empty() ? "no entry has a key starting with "
                                    : "more than one entry has a key starting with ") +
        "\"" + o.key + "\" in " + store.path().string() + ". `weft cache ls` lists the keys.");
  const cache::EntryInfo& e = matches.front();
  if (o.json) {
    std::cout << json_text(entry_json(e)) << "\n";
    return kExitOk;
  }
  const cache::StoredComponents& c = e.components;
  Table table({"", ""});
  table.add_row({"key", e.key});
  table.add_row({"function", c.function_name});
  table.add_row({"IR hash", c.ir_hash});
  table.add_row({"weft version", c.weft_version});
  table.add_row({"build options", c.build_options});
  table.add_row({"platform", c.platform_name + " (" + c.platform_version + ")"});
  table.add_row({"device", c.device_name});
  table.add_row({"driver version", c.driver_version});
  table.add_row({"OpenCL C", c.opencl_c_version});
  table.add_row({"compression", c.compression});
  table.add_row({"user hook", c.user_hook.empty() ? "(none)" : c.user_hook});
  table.add_row({"binary", format_bytes(e.uncompressed_size) + " (" +
                               format_bytes(e.compressed_size) + " compressed)"});
  table.add_row({"launch plan", format_bytes(e.metadata_size)});
  table.add_row({"compile time", format_seconds(e.compile_time_s)});
  table.add_row({"created", cache::format_local_time(e.created)});
  table.add_row({"last used", cache::format_local_time(e.last_used)});
  table.add_row({"hits", std::to_string(e.hit_count)});
  std::cout << table.render("", false);
  return kExitOk;
}

int run_explain(const CacheOptions& o) {
  const auto path = cache_directory() / "cache.sqlite3";
  if (report_missing(path, o.json)) return kExitOk;
  cache::ProgramStore store = open_store(false);
  const std::size_t limit = o.limit > 0 ? static_cast<std::size_t>(o.limit) : 10;
  json out = json::array();
  const auto explanations = cache::explain_recent_misses(store, limit);
  if (explanations.empty() && !o.json)
    std::cout << "No misses recorded in " << store.path().string() << ".\n";
  for (const cache::MissExplanation& e : explanations) {
    if (!o.json) {
      std::cout << cache::format_explanation(e);
      continue;
    }
    json candidates = json::array();
    for (const auto& n : e.nearest)
      candidates.push_back({{"key", n.entry.key},
                            {"function_name", n.entry.components.function_name},
                            {"differing", n.differing},
                            {"last_used", n.entry.last_used}});
    out.push_back({{"key", e.miss.key},
                   {"function_name", e.miss.components.function_name},
                   {"reason", std::string(cache::to_string(e.miss.reason))},
                   {"time", e.miss.time},
                   {"now_cached", e.now_cached},
                   {"nearest", candidates}});
  }
  if (o.json)
    std::cout << json_text(json{{"path", store.path().string()}, {"misses", out}}) << "\n";
  return kExitOk;
}

int run_gc(const CacheOptions& o) {
  std::optional<std::uint64_t> max_bytes;
  std::optional<std::chrono::seconds> older_than;
  // The flags' validators (add_cache_command) refused values that do not parse.
  if (!o.max_size.empty()) max_bytes = cache::parse_byte_size(o.max_size).value();
  if (!o.older_than.empty()) older_than = cache::parse_duration(o.older_than).value();
  // Without limits, gc applies the configured size cap (WEFT_CACHE_MAX_SIZE, default 1 GiB).
  if (!max_bytes && !older_than) max_bytes = cache::ProcessCache::instance().settings().max_bytes;
  const auto path = cache_directory() / "cache.sqlite3";
  if (report_missing(path, o.json)) return kExitOk;
  cache::ProgramStore store = open_store(true);
  const cache::GcResult result = store.gc(max_bytes, older_than);
  if (o.json) {
    std::cout << json_text(gc_json(result, store)) << "\n";
    return kExitOk;
  }
  const cache::StoreStats after = store.stats();
  std::cout << "Removed " << result.removed_entries << " entries ("
            << format_bytes(result.removed_bytes) << "); " << after.entries << " entries ("
            << format_bytes(after.bytes) << ") remain in " << store.path().string() << ".\n";
  return kExitOk;
}

int run_clear(const CacheOptions& o) {
  cache::StoreOptions options = store_options(/*writer=*/true);
  const auto path = options.directory / options.file_name;
  if (!cache::database_files_exist(options)) {
    report_missing(path, o.json);
    return kExitOk;
  }
  // Removing and recreating the files works whatever state the database is in.
  const cache::GcResult result = cache::reset_database(options);
  if (o.json) {
    cache::ProgramStore store = open_store(false);
    std::cout << json_text(gc_json(result, store)) << "\n";
    return kExitOk;
  }
  std::cout << "Removed " << result.removed_entries << " entries ("
            << format_bytes(result.removed_bytes) << ") and started " << path.string()
            << " afresh.\n";
  return kExitOk;
}

}  // namespace

CLI::App* add_cache_command(CLI::App& app, CacheOptions& options) {
  CLI::App* cmd = app.add_subcommand(
      "cache", "Inspect and tidy the persistent program cache (see docs/cache.md).");
  cmd->require_subcommand(1);
  auto json_flag = [&](CLI::App* sub) {
    sub->add_flag("--json", options.json, "Print one JSON object instead of text.");
    return sub;
  };
  json_flag(cmd->add_subcommand("stats",
                                "Hits, misses by reason, writes, evictions, size and "
                                "compile time saved, across every process."))
      ->callback([&] { options.action = "stats"; });
  CLI::App* ls = json_flag(cmd->add_subcommand("ls", "List entries, most recently used first."));
  add_count_option(ls, "-n,--limit", options.limit, 1, "Show at most N entries (default: all).");
  ls->callback([&] { options.action = "ls"; });
  CLI::App* show = json_flag(cmd->add_subcommand("show", "Show one entry and its key components."));
  show->add_option("key", options.key, "The key, or a unique prefix of it (as `ls` prints).")
      ->required();
  show->callback([&] { options.action = "show"; });
  CLI::App* explain = json_flag(cmd->add_subcommand(
      "explain",
      "For the latest misses, the nearest entries of the same function or IR and "
      "the key components that differ."));
  add_count_option(explain, "-n,--limit", options.limit, 1,
                   "Explain the N latest misses (default 10).")
      ->type_name("N");
  explain->callback([&] { options.action = "explain"; });
  CLI::App* gc = json_flag(cmd->add_subcommand(
      "gc",
      "Evict entries unused for longer than --older-than, then least-recently-used "
      "entries past --max-size (default: the configured cap)."));
  // Values that are no size or age are usage errors (exit 2), as for every other flag.
  gc->add_option("--max-size", options.max_size, "e.g. 512M, 2G, or bytes.")
      ->type_name("SIZE")
      ->check(CLI::Validator(
          [](std::string& text) -> std::string {
            if (cache::parse_byte_size(text)) return "";
            return "expected a size in bytes or with a unit, e.g. 512M or 2G, got " +
                   shown_value(text);
          },
          "", ""));
  gc->add_option("--older-than", options.older_than, "e.g. 12h, 30d, 2w, or seconds.")
      ->type_name("AGE")
      ->check(CLI::Validator(
          [](std::string& text) -> std::string {
            if (cache::parse_duration(text)) return "";
            return "expected an age in seconds or with a unit, e.g. 12h, 30d or 2w, got '" + text +
                   "'";
          },
          "", ""));
  gc->callback([&] { options.action = "gc"; });
  json_flag(cmd->add_subcommand("clear", "Remove every entry and reset the statistics."))
      ->callback([&] { options.action = "clear"; });
  return cmd;
}

int run_cache(const CacheOptions& options) {
  if (options.action == "stats") return run_stats(options);
  if (options.action == "ls") return run_ls(options);
  if (options.action == "show") return run_show(options);
  if (options.action == "explain") return run_explain(options);
  if (options.action == "gc") return run_gc(options);
  if (options.action == "clear") return run_clear(options);
  return kExitUsage;
}

}  // namespace weft::cli
