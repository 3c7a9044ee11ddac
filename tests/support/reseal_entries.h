// Recomputes the MAC of every entry in a cache database under a given key, as someone holding
// that key could. Tests use it to get damaged or edited entries past authentication, so the
// checks behind it (zstd, checksums, plan validation) stay tested. Needs cache/src on the
// include path and SQLite::SQLite3.
#pragma once

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

#include "entry_mac.h"

namespace weft::test {

inline void reseal_entries(const std::filesystem::path& db_path,
                           std::span<const std::uint8_t> secret) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(db_path.c_str(), &db), SQLITE_OK);
  struct Row {
    std::int64_t id;
    cache::detail::EntryMac mac;
  };
  std::vector<Row> rows;
  sqlite3_stmt* select = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(db,
                               "SELECT e.id, e.key, e.uncompressed_size, p.binary, p.metadata "
                               "FROM entries e JOIN payloads p ON p.id = e.id",
                               -1, &select, nullptr),
            SQLITE_OK)
      << sqlite3_errmsg(db);
  while (sqlite3_step(select) == SQLITE_ROW) {
    auto blob = [&](int column) {
      const auto* data = static_cast<const std::uint8_t*>(sqlite3_column_blob(select, column));
      return std::vector<std::uint8_t>(
          data, data + static_cast<std::size_t>(sqlite3_column_bytes(select, column)));
    };
    const std::string key = reinterpret_cast<const char*>(sqlite3_column_text(select, 1));
    rows.push_back({sqlite3_column_int64(select, 0),
                    cache::detail::entry_mac(
                        secret, key, static_cast<std::uint64_t>(sqlite3_column_int64(select, 2)),
                        blob(3), blob(4))});
  }
  sqlite3_finalize(select);
  for (const Row& row : rows) {
    sqlite3_stmt* update = nullptr;
    ASSERT_EQ(
        sqlite3_prepare_v2(db, "UPDATE entries SET mac = ? WHERE id = ?", -1, &update, nullptr),
        SQLITE_OK);
    sqlite3_bind_blob(update, 1, row.mac.data(), static_cast<int>(row.mac.size()),
                      SQLITE_TRANSIENT);
    sqlite3_bind_int64(update, 2, row.id);
    EXPECT_EQ(sqlite3_step(update), SQLITE_DONE) << sqlite3_errmsg(db);
    sqlite3_finalize(update);
  }
  sqlite3_close(db);
}

}  // namespace weft::test
