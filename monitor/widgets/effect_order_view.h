// Did my effects run in program order? One line per (dispatching thread, effect) stream with
// its verdict, and for the chosen stream its callbacks in program order beside execution
// order, differences highlighted. Scope: the whole trace, the timeline's window, or the
// selected dispatch.
#pragma once

#include <QWidget>
#include <cstdint>

#include "effect_order.h"

class QComboBox;
class QLabel;
class QListWidget;
class QTableView;
class QTimer;

namespace weft::monitor {

class EffectOrderModel;
class TraceDocument;

class EffectOrderView : public QWidget {
  Q_OBJECT

 public:
  enum Scope { WholeTrace, VisibleRange, SelectedDispatch };

  EffectOrderView(const TraceDocument* document, QWidget* parent = nullptr);

  EffectOrderModel* model() const { return model_; }
  QListWidget* streamList() const { return streams_; }
  void setScope(Scope scope);
  // The selected span (its dispatch is the scope's "selected dispatch").
  void setSelectedSpan(qsizetype index);
  void setViewRange(std::int64_t start_ns, std::int64_t end_ns);
  // Recomputes now (otherwise changes are gathered and recomputed shortly after).
  void refresh();

 Q_SIGNALS:
  void spanActivated(qsizetype index);

 private:
  void scheduleRefresh();
  void showStreams();
  void fitColumns();
  EffectOrderScope currentScope() const;

  const TraceDocument* document_;
  EffectOrderModel* model_;
  QComboBox* scope_;
  QLabel* scope_note_;
  QListWidget* streams_;
  QTableView* table_;
  QTimer* refresh_timer_;
  std::optional<telemetry::Id> selected_dispatch_;
  std::int64_t view_start_ns_ = 0;
  std::int64_t view_end_ns_ = 0;
};

}  // namespace weft::monitor
