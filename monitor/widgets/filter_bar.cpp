#include "filter_bar.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>

#include "qt_text.h"
#include "time_format.h"
#include "trace_document.h"

namespace weft::monitor {

FilterBar::FilterBar(const TraceDocument* document, QWidget* parent)
    : QWidget(parent), document_(document) {
  auto* layout = new QHBoxLayout(this);
  layout->setContentsMargins(4, 2, 4, 2);
  name_ = new QLineEdit(this);
  name_->setPlaceholderText(tr("Search names"));
  name_->setClearButtonEnabled(true);
  name_->setMinimumWidth(160);
  device_ = new QComboBox(this);
  effect_ = new QComboBox(this);
  device_->setSizeAdjustPolicy(QComboBox::AdjustToContents);
  effect_->setSizeAdjustPolicy(QComboBox::AdjustToContents);
  from_ = new QLineEdit(this);
  to_ = new QLineEdit(this);
  for (QLineEdit* edit : {from_, to_}) {
    edit->setMaximumWidth(110);
    edit->setClearButtonEnabled(true);
    edit->setToolTip(tr("A time since the trace started: 1.5ms, 250us, 2s, or ns without a unit"));
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
    from_->setText(to_qstring(format_duration(view_start_ns_)).remove(QLatin1Char(' ')));
    to_->setText(to_qstring(format_duration(view_end_ns_)).remove(QLatin1Char(' ')));
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
  auto read_time = [](QLineEdit* edit, std::optional<std::int64_t>& into) {
    const QString text = edit->text().trimmed();
    if (text.isEmpty()) {
      edit->setStyleSheet({});
      return;
    }
    into = parse_duration(text.toStdString());
    edit->setStyleSheet(into ? QString() : QStringLiteral("QLineEdit { background: #f8d0d0; }"));
  };
  read_time(from_, filter.from_ns);
  read_time(to_, filter.to_ns);
  if (filter == filter_) return;
  filter_ = filter;
  Q_EMIT filterChanged(filter_);
}

}  // namespace weft::monitor
