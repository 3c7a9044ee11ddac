#include "span_palette.h"

#include <array>
#include <cstdint>

namespace weft::monitor {

QColor kind_color(telemetry::SpanKind kind) {
  using telemetry::SpanKind;
  switch (kind) {
    case SpanKind::dispatch:
      return QColor(0x4c, 0x72, 0xb0);
    case SpanKind::kernel:
      return QColor(0x55, 0xa8, 0x68);
    case SpanKind::transfer:
      return QColor(0xdd, 0x84, 0x52);
    case SpanKind::loop_iteration:
      return QColor(0x81, 0x72, 0xb3);
    case SpanKind::predicate_read:
      return QColor(0xb0, 0x7a, 0xa1);
    case SpanKind::callback:
      return QColor(0xda, 0xa5, 0x20);
    case SpanKind::compile:
      return QColor(0x93, 0x78, 0x60);
    case SpanKind::compile_phase:
      return QColor(0xc4, 0xa4, 0x84);
    case SpanKind::cache_lookup:
      return QColor(0x64, 0xb5, 0xcd);
    case SpanKind::cache_store:
      return QColor(0x3a, 0x92, 0x9a);
    case SpanKind::barrier_wait:
      return QColor(0xc4, 0x4e, 0x52);
    case SpanKind::array_wait:
      return QColor(0xe3, 0x7b, 0x7f);
  }
  return QColor(0x80, 0x80, 0x80);
}

QColor effect_color(std::string_view effect) {
  // Distinct, saturated hues that stay readable as thin arrows over the span colours.
  static constexpr std::array<QRgb, 10> kPalette = {0xd62728, 0x1f77b4, 0x9467bd, 0x2ca02c,
                                                    0xff7f0e, 0xe377c2, 0x17becf, 0x8c564b,
                                                    0xbcbd22, 0x393b79};
  std::uint32_t hash = 2166136261u;  // FNV-1a: stable across runs, unlike std::hash
  for (char c : effect) {
    hash ^= static_cast<unsigned char>(c);
    hash *= 16777619u;
  }
  return QColor::fromRgb(kPalette[hash % kPalette.size()]);
}

QColor text_color_on(const QColor& background) {
  const double luminance =
      0.299 * background.redF() + 0.587 * background.greenF() + 0.114 * background.blueF();
  return luminance > 0.55 ? QColor(Qt::black) : QColor(Qt::white);
}

}  // namespace weft::monitor
