// The trace file's tables (docs/telemetry.md describes them for other tools).
#pragma once

#include <filesystem>

namespace weft::telemetry::detail {

inline constexpr const char* kFormatName = "weft-trace";

inline constexpr const char* kTraceSchema = R"sql(
CREATE TABLE weft_trace(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE tracks(id INTEGER PRIMARY KEY, kind TEXT NOT NULL, name TEXT NOT NULL,
                    device TEXT NOT NULL);
CREATE TABLE spans(id INTEGER PRIMARY KEY, parent INTEGER NOT NULL, kind TEXT NOT NULL,
                   track INTEGER NOT NULL, name TEXT NOT NULL, effect TEXT NOT NULL,
                   seq INTEGER NOT NULL, start_ns INTEGER NOT NULL, end_ns INTEGER NOT NULL,
                   args TEXT NOT NULL);
CREATE TABLE edges(source INTEGER NOT NULL, target INTEGER NOT NULL, effect TEXT NOT NULL);
CREATE TABLE programs(id INTEGER PRIMARY KEY, function TEXT NOT NULL, device TEXT NOT NULL,
                      cache_key TEXT NOT NULL, cache_status TEXT NOT NULL, ir TEXT NOT NULL,
                      source TEXT NOT NULL, kernels TEXT NOT NULL);
CREATE TABLE counters(name TEXT NOT NULL, device TEXT NOT NULL, time_ns INTEGER NOT NULL,
                      value REAL NOT NULL);
)sql";

// Whether `path` is an SQLite database with the weft_trace table (never throws).
bool is_weft_trace(const std::filesystem::path& path);

}  // namespace weft::telemetry::detail
