// The details of the selected span (see span_details.h); links to other spans select them.
#pragma once

#include <QTextBrowser>

namespace weft::monitor {

class TraceDocument;

class DetailsPane : public QTextBrowser {
  Q_OBJECT

 public:
  explicit DetailsPane(const TraceDocument* document, QWidget* parent = nullptr);

  void showSpan(qsizetype index);

 Q_SIGNALS:
  void spanLinkActivated(qsizetype index);

 private:
  const TraceDocument* document_;
};

}  // namespace weft::monitor
