#include "details_pane.h"

#include "span_details.h"
#include "trace_document.h"

namespace weft::monitor {

DetailsPane::DetailsPane(const TraceDocument* document, QWidget* parent)
    : QTextBrowser(parent), document_(document) {
  setOpenLinks(false);
  setMinimumWidth(280);
  connect(this, &QTextBrowser::anchorClicked, this, [this](const QUrl& url) {
    const long long index = span_index_from_link(url.toString());
    if (index >= 0) Q_EMIT spanLinkActivated(static_cast<qsizetype>(index));
  });
  connect(document_, &TraceDocument::traceReset, this, [this] { showSpan(-1); });
  showSpan(-1);
}

void DetailsPane::showSpan(qsizetype index) {
  if (index < 0) {
    setHtml(
        tr("<p style='color:#777'>Click a span in the timeline or the span list to see its "
           "details: a kernel's fused ops and OpenCL C source, a callback's shapes, status "
           "and token neighbours, a compile's cache status and phases.</p>"));
    return;
  }
  setHtml(describe_span_html(*document_, static_cast<std::size_t>(index)));
}

}  // namespace weft::monitor
