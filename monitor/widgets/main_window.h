// The monitor's window: the timeline on top (with the legend and the filter bar), the span
// list, effect order and cache views in tabs below, the selected span's details on the right.
// Every view shares one TraceDocument and one selection.
#pragma once

#include <QMainWindow>
#include <filesystem>

#include "weft/telemetry/trace_file.h"

class QLabel;
class QTabWidget;

namespace weft::monitor {

class CacheView;
class DetailsPane;
class EffectLegend;
class EffectOrderView;
class FilterBar;
class LiveConnection;
class RangeTotalsView;
class SpanListView;
class SpanTableModel;
class TimelineView;
class TraceDocument;

class MainWindow : public QMainWindow {
  Q_OBJECT

 public:
  explicit MainWindow(QWidget* parent = nullptr);
  ~MainWindow() override;

  // Opens a trace file; returns the error message (empty on success). Interactive callers
  // show it in a dialog (openFileInteractively).
  QString openFile(const QString& path);
  void openFileInteractively(const QString& path);
  // Shows an already read trace.
  void showTrace(telemetry::Trace trace, const QString& source);
  // Writes the trace shown (a file's or live) as Chrome trace-event JSON for Perfetto and
  // chrome://tracing, as `weft trace export` does; returns the error message (empty on
  // success). Never writes over the trace file itself.
  QString exportPerfettoJson(const QString& path);
  // Listens for live programs; returns the error message (empty on success).
  QString attachLive(const std::filesystem::path& socket = {});

  TraceDocument* document() const { return document_; }
  TimelineView* timeline() const { return timeline_; }
  DetailsPane* details() const { return details_; }
  SpanListView* spanList() const { return span_list_; }
  EffectOrderView* effectOrder() const { return effect_order_; }
  CacheView* cacheView() const { return cache_view_; }
  RangeTotalsView* rangeTotals() const { return range_totals_; }
  FilterBar* filterBar() const { return filter_bar_; }
  QTabWidget* tabs() const { return tabs_; }

 protected:
  void dragEnterEvent(QDragEnterEvent* event) override;
  void dropEvent(QDropEvent* event) override;

 private:
  void buildMenus();
  void select(qsizetype index, bool reveal);
  void updateTitle();
  void updateStatus();

  TraceDocument* document_;
  SpanTableModel* span_model_;
  TimelineView* timeline_;
  EffectLegend* legend_;
  FilterBar* filter_bar_;
  DetailsPane* details_;
  SpanListView* span_list_;
  EffectOrderView* effect_order_;
  CacheView* cache_view_;
  RangeTotalsView* range_totals_;
  QTabWidget* tabs_;
  LiveConnection* live_;
  QLabel* status_;
  QLabel* view_status_;
};

}  // namespace weft::monitor
