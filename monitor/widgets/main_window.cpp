#include "main_window.h"

#include <QAction>
#include <QApplication>
#include <QDockWidget>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QFileDialog>
#include <QFileInfo>
#include <QLabel>
#include <QMenuBar>
#include <QMessageBox>
#include <QMimeData>
#include <QSplitter>
#include <QStatusBar>
#include <QTabWidget>
#include <QToolBar>
#include <QVBoxLayout>
#include <filesystem>
#include <fstream>
#include <system_error>

#include "cache_view.h"
#include "details_pane.h"
#include "effect_legend.h"
#include "effect_order_view.h"
#include "filter_bar.h"
#include "live_connection.h"
#include "qt_text.h"
#include "range_totals_view.h"
#include "span_list_view.h"
#include "span_table_model.h"
#include "time_format.h"
#include "timeline_view.h"
#include "trace_document.h"
#include "trace_loading.h"
#include "weft/telemetry/trace_tools.h"

namespace weft::monitor {

MainWindow::MainWindow(QWidget* parent)
    : QMainWindow(parent),
      document_(new TraceDocument(this)),
      span_model_(new SpanTableModel(document_, this)),
      live_(new LiveConnection(document_, this)) {
  timeline_ = new TimelineView(document_, this);
  legend_ = new EffectLegend(document_, this);
  filter_bar_ = new FilterBar(document_, this);
  details_ = new DetailsPane(document_, this);
  span_list_ = new SpanListView(span_model_, this);
  effect_order_ = new EffectOrderView(document_, this);
  cache_view_ = new CacheView(document_, this);
  range_totals_ = new RangeTotalsView(document_, this);

  auto* timeline_box = new QWidget(this);
  auto* timeline_layout = new QVBoxLayout(timeline_box);
  timeline_layout->setContentsMargins(0, 0, 0, 0);
  timeline_layout->setSpacing(0);
  timeline_layout->addWidget(filter_bar_);
  timeline_layout->addWidget(legend_);
  timeline_layout->addWidget(timeline_, 1);

  tabs_ = new QTabWidget(this);
  tabs_->addTab(span_list_, tr("Spans"));
  tabs_->addTab(effect_order_, tr("Effect order"));
  tabs_->addTab(cache_view_, tr("Cache"));
  tabs_->addTab(range_totals_, tr("Range totals"));

  auto* splitter = new QSplitter(Qt::Vertical, this);
  splitter->addWidget(timeline_box);
  splitter->addWidget(tabs_);
  splitter->setStretchFactor(0, 3);
  splitter->setStretchFactor(1, 2);
  // At the default 1400x900 the lower pane gets about 350 pixels: ten table rows and the
  // cache view's explanation fit, the timeline keeps the rest (its rows scroll).
  splitter->setSizes({470, 380});
  setCentralWidget(splitter);

  auto* dock = new QDockWidget(tr("Details"), this);
  dock->setObjectName(QStringLiteral("details"));
  dock->setWidget(details_);
  dock->setFeatures(QDockWidget::DockWidgetMovable | QDockWidget::DockWidgetFloatable);
  addDockWidget(Qt::RightDockWidgetArea, dock);
  resizeDocks({dock}, {360}, Qt::Horizontal);

  status_ = new QLabel(this);
  view_status_ = new QLabel(this);
  statusBar()->addWidget(status_, 1);
  statusBar()->addPermanentWidget(view_status_);

  setAcceptDrops(true);
  buildMenus();

  connect(timeline_, &TimelineView::spanSelected, this,
          [this](qsizetype index) { select(index, false); });
  connect(span_list_, &SpanListView::spanActivated, this,
          [this](qsizetype index) { select(index, true); });
  connect(details_, &DetailsPane::spanLinkActivated, this,
          [this](qsizetype index) { select(index, true); });
  connect(effect_order_, &EffectOrderView::spanActivated, this,
          [this](qsizetype index) { select(index, true); });
  connect(cache_view_, &CacheView::spanActivated, this,
          [this](qsizetype index) { select(index, true); });
  connect(filter_bar_, &FilterBar::filterChanged, this, [this](const SpanFilter& filter) {
    timeline_->setFilter(filter);
    span_list_->setFilter(filter);
    updateStatus();
  });
  // A range picked on the timeline is totalled at once (Perfetto's area selection).
  connect(timeline_, &TimelineView::timeRangeSelected, range_totals_, &RangeTotalsView::setRange);
  connect(filter_bar_, &FilterBar::modeChanged, timeline_, &TimelineView::setFilterMode);
  connect(timeline_, &TimelineView::viewRangeChanged, this, [this](qint64 start, qint64 end) {
    filter_bar_->setViewRange(start, end);
    effect_order_->setViewRange(start, end);
    range_totals_->setViewRange(start, end);
    view_status_->setText(tr("view %1 – %2 (%3)")
                              .arg(to_qstring(format_time_point(start)),
                                   to_qstring(format_time_point(end)),
                                   to_qstring(format_duration(end - start))));
  });
  connect(document_, &TraceDocument::traceReset, this, [this] {
    updateTitle();
    updateStatus();
  });
  connect(document_, &TraceDocument::spansAppended, this, &MainWindow::updateStatus);
  connect(live_, &LiveConnection::message, this,
          [this](const QString& text) { statusBar()->showMessage(text, 8000); });
  updateTitle();
  updateStatus();
  resize(1400, 900);
}

MainWindow::~MainWindow() = default;

void MainWindow::buildMenus() {
  QMenu* file = menuBar()->addMenu(tr("&File"));
  QAction* open = file->addAction(tr("&Open trace…"), this, [this] {
    const QString path =
        QFileDialog::getOpenFileName(this, tr("Open a weft trace"), {},
                                     tr("weft traces (*.wefttrace *.sqlite *.db);;All files (*)"));
    if (!path.isEmpty()) openFileInteractively(path);
  });
  open->setShortcut(QKeySequence::Open);
  QAction* attach = file->addAction(tr("Attach &live"), this, [this] {
    const QString error = attachLive();
    if (!error.isEmpty()) QMessageBox::critical(this, tr("Cannot attach live"), error);
  });
  attach->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_L));
  QAction* detach = file->addAction(tr("&Stop listening"), this, [this] { live_->stop(); });
  detach->setEnabled(false);
  connect(live_, &LiveConnection::stopped, detach, [detach] { detach->setEnabled(false); });
  connect(document_, &TraceDocument::traceReset, detach,
          [this, detach] { detach->setEnabled(live_->isActive()); });
  QAction* export_json = file->addAction(tr("&Export Perfetto JSON…"), this, [this] {
    const QString path = QFileDialog::getSaveFileName(
        this, tr("Export for Perfetto (ui.perfetto.dev) or chrome://tracing"), {},
        tr("Chrome trace JSON (*.json);;All files (*)"));
    if (path.isEmpty()) return;
    const QString error = exportPerfettoJson(path);
    if (!error.isEmpty())
      QMessageBox::critical(this, tr("Cannot export"), error);
    else
      statusBar()->showMessage(tr("Wrote %1: open it at https://ui.perfetto.dev").arg(path), 8000);
  });
  export_json->setObjectName(QStringLiteral("export perfetto json"));
  export_json->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_E));
  file->addSeparator();
  file->addAction(tr("&Quit"), QKeySequence::Quit, qApp, &QApplication::quit);

  QMenu* view = menuBar()->addMenu(tr("&View"));
  view->addAction(tr("&Fit whole trace\tF"), this, [this] { timeline_->fitAll(); });
  view->addAction(tr("Zoom &in\tW"), this,
                  [this] { timeline_->zoomBy(1.25, timeline_->window().width_px / 2.0); });
  view->addAction(tr("Zoom &out\tS"), this,
                  [this] { timeline_->zoomBy(0.8, timeline_->window().width_px / 2.0); });
  QAction* follow = view->addAction(tr("Follow the &newest time (live)"));
  follow->setCheckable(true);
  follow->setToolTip(tr("Keep the newest spans of a live trace in view (End in the timeline)"));
  connect(follow, &QAction::toggled, timeline_, &TimelineView::setFollowLatest);
  connect(timeline_, &TimelineView::followLatestChanged, follow, &QAction::setChecked);

  QMenu* help = menuBar()->addMenu(tr("&Help"));
  help->addAction(tr("&Timeline controls"), this, [this] {
    QMessageBox::information(
        this, tr("Timeline controls"),
        tr("Wheel: zoom at the cursor (over the row names: scroll rows)\n"
           "Shift+wheel: pan · Alt+wheel: scroll rows\n"
           "Drag: pan · Drag on the ruler or Shift+drag: zoom to a time range\n"
           "Click: select a span (its token arrows are highlighted) · Double-click: zoom to it\n"
           "F: fit · W/S or +/-: zoom · A/D or arrows: pan · Home/End: start/end (End follows "
           "a live trace) · Esc: clear the selection"));
  });
  help->addAction(tr("&About weft-monitor"), this, [this] {
    QMessageBox::about(this, tr("About weft-monitor"),
                       tr("weft-monitor %1: timelines, effect order and cache behaviour of weft "
                          "programs, recorded (WEFT_TRACE=file) or live (WEFT_MONITOR=1).")
                           .arg(QStringLiteral(WEFT_VERSION)));
  });

  QToolBar* tools = addToolBar(tr("Main"));
  tools->setObjectName(QStringLiteral("main toolbar"));
  tools->addAction(open);
  tools->addAction(attach);
  tools->addAction(tr("Fit"), this, [this] { timeline_->fitAll(); });
  tools->addAction(follow);
}

QString MainWindow::openFile(const QString& path) {
  LoadedTrace loaded = load_trace_file(path.toStdString());
  if (!loaded.trace) return to_qstring(loaded.error);
  live_->stop();
  showTrace(std::move(*loaded.trace), path);
  return {};
}

void MainWindow::openFileInteractively(const QString& path) {
  QApplication::setOverrideCursor(Qt::WaitCursor);
  const QString error = openFile(path);
  QApplication::restoreOverrideCursor();
  if (!error.isEmpty()) QMessageBox::critical(this, tr("Cannot open the trace"), error);
}

void MainWindow::showTrace(telemetry::Trace trace, const QString& source) {
  document_->setTrace(std::move(trace), source);
}

QString MainWindow::exportPerfettoJson(const QString& path) {
  std::error_code same_error;
  if (!document_->isLive() &&
      std::filesystem::equivalent(path.toStdString(), document_->source().toStdString(),
                                  same_error))
    return tr("%1 is the trace file itself: exporting there would destroy the trace; choose "
              "another path (run.json)")
        .arg(path);
  std::ofstream out(path.toStdString(), std::ios::binary | std::ios::trunc);
  if (!out)
    return tr("Cannot write %1: check that its directory exists and that you may write there")
        .arg(path);
  try {
    telemetry::write_chrome_trace(document_->trace(), out);
  } catch (const std::exception& e) {
    return tr("Exporting to %1 failed: %2").arg(path, to_qstring(e.what()));
  }
  out.close();
  if (!out) return tr("Writing %1 failed (is the disk full?)").arg(path);
  return {};
}

QString MainWindow::attachLive(const std::filesystem::path& socket) {
  return live_->start(socket);
}

void MainWindow::select(qsizetype index, bool reveal) {
  timeline_->selectSpan(index, reveal);
  details_->showSpan(index);
  span_list_->selectSpan(index);
  effect_order_->setSelectedSpan(index);
}

void MainWindow::updateTitle() {
  const QString source = document_->source();
  setWindowTitle(source.isEmpty()
                     ? tr("weft-monitor")
                     : tr("%1 – weft-monitor")
                           .arg(document_->isLive() ? source : QFileInfo(source).fileName()));
}

void MainWindow::updateStatus() {
  const auto& trace = document_->trace();
  QString text = tr("%1 spans on %2 rows, %3 token edges")
                     .arg(document_->spans().size())
                     .arg(document_->timeline().rows().size())
                     .arg(document_->edges().size());
  if (auto command = trace.meta.find("command");
      command != trace.meta.end() && !command->second.empty())
    text += tr(" · %1").arg(to_qstring(command->second));
  if (auto started = trace.meta.find("started"); started != trace.meta.end())
    text += tr(" · recorded %1").arg(to_qstring(started->second));
  if (timeline_->filterMask().active())
    text += tr(" · filter matches %1").arg(timeline_->filterMask().total_matching());
  status_->setText(text);
}

void MainWindow::dragEnterEvent(QDragEnterEvent* event) {
  if (event->mimeData()->hasUrls() && !event->mimeData()->urls().isEmpty() &&
      event->mimeData()->urls().front().isLocalFile())
    event->acceptProposedAction();
}

void MainWindow::dropEvent(QDropEvent* event) {
  const QList<QUrl> urls = event->mimeData()->urls();
  if (urls.isEmpty() || !urls.front().isLocalFile()) return;
  event->acceptProposedAction();
  openFileInteractively(urls.front().toLocalFile());
}

}  // namespace weft::monitor
