// The trace's cache lookups as a table (time, function, status, reason, device, key); a miss
// selected here is explained against the cache database.
#pragma once

#include <QAbstractTableModel>
#include <vector>

#include "cache_lookups.h"

namespace weft::monitor {

class TraceDocument;

class CacheLookupModel : public QAbstractTableModel {
  Q_OBJECT

 public:
  enum Column {
    TimeColumn,
    FunctionColumn,
    StatusColumn,
    ReasonColumn,
    DeviceColumn,
    KeyColumn,
    ColumnCount
  };
  enum Role {
    SpanIndexRole = Qt::UserRole + 1,
    KeyRole,     // the lookup's cache key
    StatusRole,  // "hit", "miss", ...
  };

  explicit CacheLookupModel(const TraceDocument* document, QObject* parent = nullptr);

  const std::vector<std::uint32_t>& lookups() const { return lookups_; }
  CacheLookupHistogram histogram(int bucket_count) const;

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation,
                      int role = Qt::DisplayRole) const override;

 signals:
  void lookupsChanged();

 private:
  void reload();

  const TraceDocument* document_;
  std::vector<std::uint32_t> lookups_;
};

}  // namespace weft::monitor
