#include "cache_entries_model.h"

#include "qt_text.h"
#include "time_format.h"
#include "weft/cache/explain.h"

namespace weft::monitor {

QString format_bytes(std::uint64_t bytes) {
  static const char* const kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double value = static_cast<double>(bytes);
  int unit = 0;
  while (value >= 1024 && unit < 4) {
    value /= 1024;
    ++unit;
  }
  return unit == 0 ? QStringLiteral("%1 B").arg(bytes)
                   : QStringLiteral("%1 %2").arg(value, 0, 'f', 1).arg(QLatin1String(kUnits[unit]));
}

CacheEntriesModel::CacheEntriesModel(QObject* parent) : QAbstractTableModel(parent) {}

void CacheEntriesModel::setEntries(std::vector<cache::EntryInfo> entries) {
  beginResetModel();
  entries_ = std::move(entries);
  endResetModel();
}

int CacheEntriesModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(entries_.size());
}

int CacheEntriesModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : ColumnCount;
}

QVariant CacheEntriesModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || index.row() >= rowCount()) return {};
  const cache::EntryInfo& entry = entries_[static_cast<std::size_t>(index.row())];
  if (role == Qt::ToolTipRole && index.column() == KeyColumn) return to_qstring(entry.key);
  if (role != Qt::DisplayRole && role != SortRole) return {};
  const bool raw = role == SortRole;
  switch (index.column()) {
    case KeyColumn:
      return to_qstring(entry.key);
    case FunctionColumn:
      return to_qstring(entry.components.function_name);
    case DeviceColumn:
      return to_qstring(entry.components.device_name);
    case SizeColumn:
      if (raw) return static_cast<qulonglong>(entry.compressed_size);
      return QStringLiteral("%1 (%2 uncompressed)")
          .arg(format_bytes(entry.compressed_size), format_bytes(entry.uncompressed_size));
    case CompileTimeColumn:
      if (raw) return entry.compile_time_s;
      return to_qstring(format_duration(static_cast<std::int64_t>(entry.compile_time_s * 1e9)));
    case HitsColumn:
      return static_cast<qulonglong>(entry.hit_count);
    case LastUsedColumn:
      if (raw) return entry.last_used;
      return entry.last_used > 0 ? to_qstring(cache::format_local_time(entry.last_used))
                                 : tr("never");
    default:
      return {};
  }
}

QVariant CacheEntriesModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
  switch (section) {
    case KeyColumn:
      return tr("Key");
    case FunctionColumn:
      return tr("Function");
    case DeviceColumn:
      return tr("Device");
    case SizeColumn:
      return tr("Size");
    case CompileTimeColumn:
      return tr("Compile time");
    case HitsColumn:
      return tr("Hits");
    case LastUsedColumn:
      return tr("Last used");
    default:
      return {};
  }
}

}  // namespace weft::monitor
