// The cache database's entries as a table: key, function, device, size, compile time, hits,
// last used.
#pragma once

#include <QAbstractTableModel>
#include <vector>

#include "weft/cache/store.h"

namespace weft::monitor {

class CacheEntriesModel : public QAbstractTableModel {
  Q_OBJECT

 public:
  enum Column {
    KeyColumn,
    FunctionColumn,
    DeviceColumn,
    SizeColumn,
    CompileTimeColumn,
    HitsColumn,
    LastUsedColumn,
    ColumnCount
  };
  static constexpr int SortRole = Qt::UserRole;

  explicit CacheEntriesModel(QObject* parent = nullptr);

  void setEntries(std::vector<cache::EntryInfo> entries);
  const std::vector<cache::EntryInfo>& entries() const { return entries_; }

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation,
                      int role = Qt::DisplayRole) const override;

 private:
  std::vector<cache::EntryInfo> entries_;
};

// "1.4 MiB" and the like.
QString format_bytes(std::uint64_t bytes);

}  // namespace weft::monitor
