// The legend above the timeline: the colour of every effect's token arrows and of every span
// kind present in the trace.
#pragma once

#include <QLabel>
#include <bitset>
#include <string>
#include <vector>

#include "weft/telemetry/record.h"

namespace weft::monitor {

class TraceDocument;

class EffectLegend : public QLabel {
  Q_OBJECT

 public:
  explicit EffectLegend(const TraceDocument* document, QWidget* parent = nullptr);

 private:
  void rebuild();
  void noteKinds(std::size_t first);

  const TraceDocument* document_;
  std::vector<std::string> shown_effects_;
  std::bitset<telemetry::kSpanKindCount> kinds_;
  std::bitset<telemetry::kSpanKindCount> shown_kinds_;
};

}  // namespace weft::monitor
