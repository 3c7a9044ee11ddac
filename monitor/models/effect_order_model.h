// One effect stream as a table: position, the callback at that position in program order, the
// one in execution order, and a note. Rows where they differ are highlighted: red for an
// ordered effect (a bug), grey for an unordered one (allowed).
#pragma once

#include <QAbstractTableModel>
#include <vector>

#include "effect_order.h"

namespace weft::monitor {

class TraceDocument;

class EffectOrderModel : public QAbstractTableModel {
  Q_OBJECT

 public:
  enum Column { PositionColumn, ProgramOrderColumn, ExecutionOrderColumn, NoteColumn, ColumnCount };
  enum Role {
    SpanIndexRole = Qt::UserRole + 1,  // the program/execution column's span
    DiffersRole,
  };

  explicit EffectOrderModel(const TraceDocument* document, QObject* parent = nullptr);

  // Recomputes the streams for `scope` (after a new trace, live growth or a new selection).
  void analyze(const EffectOrderScope& scope = {});
  const std::vector<EffectStream>& streams() const { return streams_; }
  void setCurrentStream(int stream);
  int currentStream() const { return current_; }

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation,
                      int role = Qt::DisplayRole) const override;

 signals:
  void streamsChanged();

 private:
  QString describe(std::uint32_t span) const;

  const TraceDocument* document_;
  std::vector<EffectStream> streams_;
  int current_ = -1;
};

}  // namespace weft::monitor
