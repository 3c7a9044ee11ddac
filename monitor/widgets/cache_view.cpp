#include "cache_view.h"

#include <QBarCategoryAxis>
#include <QBarSet>
#include <QChart>
#include <QChartView>
#include <QFileDialog>
#include <QFontDatabase>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSortFilterProxyModel>
#include <QSplitter>
#include <QStackedBarSeries>
#include <QTabWidget>
#include <QTableView>
#include <QVBoxLayout>
#include <QValueAxis>

#include "cache_entries_model.h"
#include "cache_lookup_model.h"
#include "qt_text.h"
#include "time_format.h"
#include "trace_document.h"

namespace weft::monitor {

namespace {

QColor status_color(const std::string& status) {
  if (status == "hit") return QColor(0x4c, 0xa8, 0x5c);
  if (status == "miss") return QColor(0xd9, 0x8c, 0x2b);
  if (status == "corrupt") return QColor(0xc0, 0x30, 0x30);
  if (status == "error") return QColor(0x80, 0x20, 0x60);
  return QColor(0x90, 0x90, 0x90);
}

QTableView* make_table(QAbstractItemModel* model, QWidget* parent) {
  auto* table = new QTableView(parent);
  table->setModel(model);
  table->setSelectionBehavior(QAbstractItemView::SelectRows);
  table->setSelectionMode(QAbstractItemView::SingleSelection);
  table->verticalHeader()->hide();
  table->horizontalHeader()->setStretchLastSection(true);
  table->setWordWrap(false);
  return table;
}

}  // namespace

CacheView::CacheView(const TraceDocument* document, QWidget* parent)
    : QWidget(parent),
      document_(document),
      lookups_(new CacheLookupModel(document, this)),
      entries_(new CacheEntriesModel(this)),
      database_label_(new QLabel(this)),
      counts_label_(new QLabel(this)),
      chart_(new QChartView(this)),
      explanation_(new QPlainTextEdit(this)) {
  database_label_->setWordWrap(true);
  database_label_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  auto* choose = new QPushButton(tr("Choose cache directory…"), this);
  auto* reload = new QPushButton(tr("Reload"), this);
  auto* header = new QHBoxLayout;
  header->addWidget(database_label_, 1);
  header->addWidget(choose);
  header->addWidget(reload);

  chart_->setRenderHint(QPainter::Antialiasing);
  chart_->setMinimumHeight(150);

  lookup_table_ = make_table(lookups_, this);
  // Rows as tall as the text: the table shows ten lookups in the default window.
  lookup_table_->verticalHeader()->setSectionResizeMode(QHeaderView::Fixed);
  lookup_table_->verticalHeader()->setDefaultSectionSize(fontMetrics().height() + 6);
  auto* sorted_entries = new QSortFilterProxyModel(this);
  sorted_entries->setSourceModel(entries_);
  sorted_entries->setSortRole(CacheEntriesModel::SortRole);
  entry_table_ = make_table(sorted_entries, this);
  entry_table_->verticalHeader()->setSectionResizeMode(QHeaderView::Fixed);
  entry_table_->verticalHeader()->setDefaultSectionSize(fontMetrics().height() + 6);
  entry_table_->setSortingEnabled(true);
  entry_table_->horizontalHeader()->setSortIndicator(-1, Qt::AscendingOrder);
  explanation_->setReadOnly(true);
  explanation_->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
  explanation_->setPlaceholderText(tr("Select a lookup to see why it missed."));

  // Laid out for the default window (1400x900, a pane about 350 pixels high): the lookups on
  // the left at full height; on the right why the selected one missed above the chart and
  // the database's entries (tabs), so none of them is squeezed to a row or two.
  auto* lookups_box = new QWidget(this);
  auto* lookups_layout = new QVBoxLayout(lookups_box);
  lookups_layout->setContentsMargins(0, 0, 0, 0);
  lookups_layout->setSpacing(2);
  lookups_layout->addWidget(counts_label_);
  lookups_layout->addWidget(lookup_table_, 1);
  auto* explanation_box = new QWidget(this);
  auto* explanation_layout = new QVBoxLayout(explanation_box);
  explanation_layout->setContentsMargins(0, 0, 0, 0);
  explanation_layout->setSpacing(2);
  explanation_layout->addWidget(
      new QLabel(tr("<b>Why it missed</b> (as <tt>weft cache explain</tt> says)"), this));
  explanation_layout->addWidget(explanation_, 1);
  overview_ = new QTabWidget(this);
  overview_->addTab(chart_, tr("Lookups over time"));
  overview_->addTab(entry_table_, tr("Entries in the cache database"));
  auto* right = new QSplitter(Qt::Vertical, this);
  right->addWidget(explanation_box);
  right->addWidget(overview_);
  right->setStretchFactor(0, 1);
  right->setStretchFactor(1, 1);
  auto* columns = new QSplitter(this);
  columns->addWidget(lookups_box);
  columns->addWidget(right);
  columns->setStretchFactor(0, 1);
  columns->setStretchFactor(1, 1);

  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(4, 4, 4, 4);
  layout->setSpacing(2);
  layout->addLayout(header);
  layout->addWidget(columns, 1);

  connect(choose, &QPushButton::clicked, this, [this] {
    const QString directory = QFileDialog::getExistingDirectory(
        this, tr("Cache directory"), to_qstring(database_.directory().string()));
    if (!directory.isEmpty()) setCacheDirectory(directory.toStdString(), tr("chosen by you"));
  });
  connect(reload, &QPushButton::clicked, this,
          [this] { setCacheDirectory(database_.directory(), tr("reloaded")); });
  connect(lookup_table_->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
          [this](const QModelIndex& current) {
            if (!current.isValid()) return;
            explainLookup(current.row());
            Q_EMIT spanActivated(static_cast<qsizetype>(
                current.data(CacheLookupModel::SpanIndexRole).toULongLong()));
          });
  connect(lookups_, &CacheLookupModel::lookupsChanged, this, &CacheView::updateChart);
  connect(document_, &TraceDocument::traceReset, this, &CacheView::openTraceCache);
  openTraceCache();
  updateChart();
}

void CacheView::openTraceCache() {
  std::string origin;
  const std::filesystem::path directory = resolve_cache_directory(document_->trace().meta, &origin);
  setCacheDirectory(directory, to_qstring(origin));
}

void CacheView::setCacheDirectory(const std::filesystem::path& directory, const QString& origin) {
  database_ = CacheDatabase::open(directory);
  QString text = tr("<b>Cache database:</b> %1 <span style='color:#666'>(%2)</span>")
                     .arg(to_qstring(database_.databasePath().string()).toHtmlEscaped(),
                          origin.toHtmlEscaped());
  if (!database_.isOpen())
    text += QStringLiteral("<br><span style='color:#b02020'>%1</span>")
                .arg(to_qstring(database_.error()).toHtmlEscaped());
  database_label_->setText(text);
  explanation_->clear();
  reloadEntries();
}

void CacheView::reloadEntries() {
  entries_->setEntries(database_.entries());
  entry_table_->resizeColumnsToContents();
  if (database_.isOpen() && !database_.error().empty())
    database_label_->setText(database_label_->text() +
                             QStringLiteral("<br><span style='color:#b02020'>%1</span>")
                                 .arg(to_qstring(database_.error()).toHtmlEscaped()));
}

QString CacheView::countsText() const {
  return counts_label_->text();
}

QString CacheView::databaseText() const {
  return database_label_->text();
}

QString CacheView::explanationText() const {
  return explanation_->toPlainText();
}

void CacheView::explainLookup(int row) {
  const QModelIndex index = lookups_->index(row, 0);
  if (!index.isValid()) return;
  const QString status = index.data(CacheLookupModel::StatusRole).toString();
  const std::string key = index.data(CacheLookupModel::KeyRole).toString().toStdString();
  if (status == QLatin1String("hit")) {
    explanation_->setPlainText(
        tr("A hit: the program came from the cache (key %1).").arg(to_qstring(key)));
    return;
  }
  explanation_->setPlainText(to_qstring(database_.explainMiss(key)));
}

void CacheView::updateChart() {
  const CacheLookupHistogram histogram = lookups_->histogram(kBuckets);
  QString counts = histogram.lookups == 1 ? tr("<b>1 cache lookup</b>")
                                          : tr("<b>%1 cache lookups</b>").arg(histogram.lookups);
  if (histogram.lookups == 0) {
    counts += tr(" in this trace (was the persistent cache on? WEFT_CACHE=0 turns it off)");
  } else {
    QStringList parts;
    for (const std::string& status : histogram.statuses) {
      auto found = histogram.totals.find(status);
      const std::size_t count = found == histogram.totals.end() ? 0 : found->second;
      parts << QStringLiteral("<span style='color:%1'>%2 %3</span>")
                   .arg(status_color(status).name())
                   .arg(count)
                   .arg(to_qstring(status));
    }
    counts += QStringLiteral(": ") + parts.join(QStringLiteral(", "));
  }
  counts_label_->setText(counts);

  auto* chart = new QChart;
  // The legend above the bars leaves the width to the bucket labels.
  chart->legend()->setAlignment(Qt::AlignTop);
  chart->setMargins(QMargins(2, 2, 2, 2));
  if (histogram.lookups > 0) {
    auto* series = new QStackedBarSeries;
    for (std::size_t s = 0; s < histogram.statuses.size(); ++s) {
      auto* set = new QBarSet(to_qstring(histogram.statuses[s]));
      set->setColor(status_color(histogram.statuses[s]));
      for (const auto& bucket : histogram.counts) *set << static_cast<double>(bucket[s]);
      series->append(set);
    }
    chart->addSeries(series);
    auto* axis_x = new QBarCategoryAxis;
    // Category names must differ; short numbers with the unit in the title stay readable.
    const BucketLabels labels = bucket_labels(histogram);
    QStringList categories;
    for (const std::string& label : labels.labels) categories << to_qstring(label);
    axis_x->append(categories);
    axis_x->setTitleText(
        tr("%1 since the trace start, buckets of %2")
            .arg(to_qstring(labels.unit), to_qstring(format_duration(histogram.bucket_ns))));
    QFont small = axis_x->labelsFont();
    small.setPointSizeF(small.pointSizeF() * 0.85);
    axis_x->setLabelsFont(small);
    axis_x->setTitleFont(small);
    chart->addAxis(axis_x, Qt::AlignBottom);
    series->attachAxis(axis_x);
    auto* axis_y = new QValueAxis;
    axis_y->setLabelFormat(QStringLiteral("%.0f"));
    chart->addAxis(axis_y, Qt::AlignLeft);
    series->attachAxis(axis_y);
    std::size_t tallest = 0;
    for (const auto& bucket : histogram.counts) {
      std::size_t sum = 0;
      for (std::size_t count : bucket) sum += count;
      tallest = std::max(tallest, sum);
    }
    axis_y->setRange(0, static_cast<double>(std::max<std::size_t>(tallest, 1)));
    axis_y->setTickCount(
        static_cast<int>(std::min<std::size_t>(std::max<std::size_t>(tallest, 1), 4)) + 1);
  }
  QChart* old = chart_->chart();
  chart_->setChart(chart);
  delete old;
}

}  // namespace weft::monitor
