// The timeline's rows as a list model: one per host thread, device queue, runtime thread,
// callback thread and cache writer, in display order.
#pragma once

#include <QAbstractListModel>

namespace weft::monitor {

class TraceDocument;

class TrackModel : public QAbstractListModel {
  Q_OBJECT

 public:
  enum Role {
    KindRole = Qt::UserRole + 1,  // the track kind's name ("queue")
    DeviceRole,
    SpanCountRole,
    LaneCountRole,
  };

  explicit TrackModel(const TraceDocument* document, QObject* parent = nullptr);

  int rowCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QHash<int, QByteArray> roleNames() const override;

 private:
  const TraceDocument* document_;
};

}  // namespace weft::monitor
