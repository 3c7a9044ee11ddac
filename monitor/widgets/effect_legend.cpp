#include "effect_legend.h"

#include "qt_text.h"
#include "span_palette.h"
#include "trace_document.h"

namespace weft::monitor {

namespace {

QString swatch(const QColor& color, const QString& name) {
  return QStringLiteral("<span style='color:%1'>&#9632;</span>&nbsp;%2&nbsp;&nbsp; ")
      .arg(color.name(), name.toHtmlEscaped());
}

}  // namespace

EffectLegend::EffectLegend(const TraceDocument* document, QWidget* parent)
    : QLabel(parent), document_(document) {
  setTextFormat(Qt::RichText);
  setWordWrap(true);
  setContentsMargins(6, 2, 6, 2);
  connect(document_, &TraceDocument::traceReset, this, [this] {
    kinds_.reset();
    noteKinds(0);
    rebuild();
  });
  connect(document_, &TraceDocument::spansAppended, this, [this](qsizetype first, qsizetype) {
    noteKinds(static_cast<std::size_t>(first));
    if (document_->effects() != shown_effects_ || kinds_ != shown_kinds_) rebuild();
  });
  noteKinds(0);
  rebuild();
}

void EffectLegend::noteKinds(std::size_t first) {
  const auto& spans = document_->spans();
  for (std::size_t i = first; i < spans.size() && !kinds_.all(); ++i)
    kinds_.set(static_cast<std::size_t>(spans[i].kind));
}

void EffectLegend::rebuild() {
  shown_effects_ = document_->effects();
  shown_kinds_ = kinds_;
  QString html;
  if (!shown_effects_.empty()) {
    html += tr("<b>Token arrows by effect:</b> ");
    for (const std::string& effect : shown_effects_)
      html += swatch(effect_color(effect), display_name(effect));
    html += QStringLiteral("&nbsp;&nbsp;&nbsp;");
  }
  if (kinds_.any()) {
    html += tr("<b>Spans:</b> ");
    for (int kind = 0; kind < telemetry::kSpanKindCount; ++kind) {
      if (!kinds_.test(static_cast<std::size_t>(kind))) continue;
      const auto span_kind = static_cast<telemetry::SpanKind>(kind);
      html += swatch(kind_color(span_kind), to_qstring(telemetry::to_string(span_kind)));
    }
  }
  setText(html);
  setVisible(!html.isEmpty());
}

}  // namespace weft::monitor
