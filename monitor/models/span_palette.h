// Colours: one per span kind (so a queue's kernels and transfers read apart at a glance) and
// one per effect name, the same in every trace and every run (a hash of the name picks it).
#pragma once

#include <QColor>
#include <string_view>

#include "weft/telemetry/record.h"

namespace weft::monitor {

QColor kind_color(telemetry::SpanKind kind);
QColor effect_color(std::string_view effect);
// Black or white, whichever reads better on `background`.
QColor text_color_on(const QColor& background);

}  // namespace weft::monitor
