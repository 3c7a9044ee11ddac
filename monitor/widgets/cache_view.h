// Did my compilations hit the cache? Lookups over time (stacked bars per status), counts per
// status, the lookups themselves, the cache database's entries, and why a selected miss
// missed (the text `weft cache explain` prints).
#pragma once

#include <QWidget>
#include <filesystem>

#include "cache_database.h"

class QChartView;
class QLabel;
class QPlainTextEdit;
class QTabWidget;
class QTableView;

namespace weft::monitor {

class CacheEntriesModel;
class CacheLookupModel;
class TraceDocument;

class CacheView : public QWidget {
  Q_OBJECT

 public:
  static constexpr int kBuckets = 12;  // labels fit a chart half the pane wide

  CacheView(const TraceDocument* document, QWidget* parent = nullptr);

  // Opens another cache directory (the user's pick); the trace's own otherwise.
  void setCacheDirectory(const std::filesystem::path& directory, const QString& origin);
  CacheLookupModel* lookups() const { return lookups_; }
  CacheEntriesModel* entries() const { return entries_; }
  const CacheDatabase& database() const { return database_; }
  QString countsText() const;
  QString databaseText() const;
  QString explanationText() const;
  QTableView* lookupTable() const { return lookup_table_; }
  QPlainTextEdit* explanation() const { return explanation_; }
  // Explains the lookup in `row` of lookups() (what selecting it in the table does).
  void explainLookup(int row);

 Q_SIGNALS:
  void spanActivated(qsizetype index);

 private:
  void openTraceCache();
  void reloadEntries();
  void updateChart();

  const TraceDocument* document_;
  CacheLookupModel* lookups_;
  CacheEntriesModel* entries_;
  CacheDatabase database_;
  QLabel* database_label_;
  QLabel* counts_label_;
  QChartView* chart_;
  QTableView* lookup_table_;
  QTableView* entry_table_;
  QPlainTextEdit* explanation_;
  QTabWidget* overview_;  // the chart, the database's entries
};

}  // namespace weft::monitor
