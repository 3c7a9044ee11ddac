// Every span of the trace as a table (start, duration, kind, name, row, device, effect), the
// flat list beside the timeline. Qt::UserRole gives sortable raw values; SpanIndexRole the
// span's index in the document.
#pragma once

#include <QAbstractTableModel>

namespace weft::monitor {

class TraceDocument;

class SpanTableModel : public QAbstractTableModel {
  Q_OBJECT

 public:
  enum Column {
    StartColumn,
    DurationColumn,
    KindColumn,
    NameColumn,
    TrackColumn,
    DeviceColumn,
    EffectColumn,
    ColumnCount
  };
  enum Role {
    SortRole = Qt::UserRole,
    SpanIndexRole,
  };

  explicit SpanTableModel(const TraceDocument* document, QObject* parent = nullptr);

  const TraceDocument* document() const { return document_; }

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation,
                      int role = Qt::DisplayRole) const override;

 private:
  const TraceDocument* document_;
  int rows_ = 0;  // what the view has been told
};

}  // namespace weft::monitor
