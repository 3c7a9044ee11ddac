#include "filter_bar.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QStringList>
#include <QVBoxLayout>

#include "qt_text.h"
#include "time_format.h"
#include "trace_document.h"

namespace weft::monitor {

FilterBar::FilterBar(const TraceDocument* document, QWidget* parent)
    : QWidget(parent), document_(document) {
  auto* rows = new QVBoxLayout(this);
  rows->setContentsMargins(4, 2, 4, 2);
  rows->setSpacing(1);
  auto* layout = new QHBoxLayout;
  layout->setContentsMargins(0, 0, 0, 0);
  rows->addLayout(layout);
  hint_ = new QLabel(this);
  hint_->setStyleSheet(QStringLiteral("color: #b02020"));
  hint_->setVisible(false);
  rows->addWidget(hint_);
  name_ = new QLineEdit(this);
  name_->setPlaceholderText(tr("Search names"));
  name_->setClearButtonEnabled(true);
  name_->setMinimumWidth(160);
  device_ = new QComboBox(this);
  effect_ = new QComboBox(this);
  // Device names can be long ("pthread-skylake-avx512 ..."): the combos keep a modest width
  // (their lists show the whole names) so the bar fits the default window.
  for (QComboBox* combo : {device_, effect_}) {
    combo->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    combo->setMinimumContentsLength(12);
  }
  from_ = new QLineEdit(this);
  to_ = new QLineEdit(this);
  for (QLineEdit* edit : {from_, to_}) {
    edit->setMaximumWidth(100);
    edit->setClearButtonEnabled(true);
    edit->setToolTip(
        tr("A time since the trace started, with its unit: 4.700012s, 1.5ms, 250us, 300ns"));
  }
  from_->setPlaceholderText(tr("from"));
  to_->setPlaceholderText(tr("to"));
  auto* use_view = new QPushButton(tr("Use view"), this);
  use_view->setToolTip(tr("Filter to the time range the timeline shows now"));
  mode_ = new QComboBox(this);
  mode_->addItem(tr("Dim others"));
  mode_->addItem(tr("Hide others"));
  auto* clear = new QPushButton(tr("Clear"), this);

  layout->addWidget(name_);
  layout->addWidget(device_);
  layout->addWidget(effect_);
  layout->addWidget(new QLabel(tr("Time"), this));
  layout->addWidget(from_);
  layout->addWidget(to_);
  layout->addWidget(use_view);
  layout->addWidget(mode_);
  layout->addWidget(clear);

  connect(name_, &QLineEdit::textChanged, this, &FilterBar::update);
  connect(from_, &QLineEdit::textChanged, this, &FilterBar::update);
  connect(to_, &QLineEdit::textChanged, this, &FilterBar::update);
  connect(device_, &QComboBox::currentIndexChanged, this, &FilterBar::update);
  connect(effect_, &QComboBox::currentIndexChanged, this, &FilterBar::update);
  connect(mode_, &QComboBox::currentIndexChanged, this, [this] { Q_EMIT modeChanged(mode()); });
  connect(use_view, &QPushButton::clicked, this, [this] {
    from_->setText(to_qstring(format_time_point(view_start_ns_)).remove(QLatin1Char(' ')));
    to_->setText(to_qstring(format_time_point(view_end_ns_)).remove(QLatin1Char(' ')));
  });
  connect(clear, &QPushButton::clicked, this, [this] {
    name_->clear();
    from_->clear();
    to_->clear();
    device_->setCurrentIndex(0);
    effect_->setCurrentIndex(0);
  });
  connect(document_, &TraceDocument::traceReset, this, &FilterBar::refreshChoices);
  connect(document_, &TraceDocument::spansAppended, this, [this] {
    if (device_->count() - 1 != static_cast<int>(document_->devices().size()) ||
        effect_->count() - 1 != static_cast<int>(document_->effects().size()))
      refreshChoices();
  });
  refreshChoices();
}

QString FilterBar::hint() const {
  return hint_->text();
}

TimelineView::FilterMode FilterBar::mode() const {
  return mode_->currentIndex() == 1 ? TimelineView::FilterMode::hide
                                    : TimelineView::FilterMode::dim;
}

void FilterBar::setViewRange(std::int64_t start_ns, std::int64_t end_ns) {
  view_start_ns_ = std::max<std::int64_t>(0, start_ns);
  view_end_ns_ = std::max<std::int64_t>(0, end_ns);
}

void FilterBar::fill(QComboBox* combo, const QString& any, const std::vector<std::string>& names) {
  const QString current = combo->currentIndex() > 0 ? combo->currentData().toString() : QString();
  const QSignalBlocker blocker(combo);
  combo->clear();
  combo->addItem(any);
  for (const std::string& name : names) combo->addItem(display_name(name), to_qstring(name));
  const int keep = current.isEmpty() ? 0 : combo->findData(current);
  combo->setCurrentIndex(keep < 0 ? 0 : keep);
}

void FilterBar::refreshChoices() {
  fill(device_, tr("All devices"), document_->devices());
  fill(effect_, tr("All effects"), document_->effects());
  update();
}

void FilterBar::update() {
  SpanFilter filter;
  filter.name = name_->text().toStdString();
  if (device_->currentIndex() > 0) filter.device = device_->currentData().toString().toStdString();
  if (effect_->currentIndex() > 0) filter.effect = effect_->currentData().toString().toStdString();
  QStringList problems;
  auto read_time = [&problems](QLineEdit* edit, std::optional<std::int64_t>& into) {
    const QString text = edit->text().trimmed();
    if (text.isEmpty()) {
      edit->setStyleSheet({});
      return;
    }
    const TimeInput input = parse_time_input(text.toStdString());
    into = input.ns;
    edit->setStyleSheet(into ? QString() : QStringLiteral("QLineEdit { background: #f8d0d0; }"));
    if (!into) problems << to_qstring(input.problem);
  };
  read_time(from_, filter.from_ns);
  read_time(to_, filter.to_ns);
  // A time that is not one filters nothing; the hint under the bar says why.
  hint_->setText(problems.isEmpty()
                     ? QString()
                     : tr("Time filter ignored: %1").arg(problems.join(QStringLiteral("; "))));
  hint_->setVisible(!problems.isEmpty());
  if (filter == filter_) return;
  filter_ = filter;
  Q_EMIT filterChanged(filter_);
}

}  // namespace weft::monitor
