#include "image_analysis.h"

#include <QColor>
#include <QSet>

namespace weft::monitor::testing {

namespace {

// Span fills are saturated; text, grid lines, backgrounds and widgets are grey or white.
bool is_span_colored(QRgb pixel) {
  const QColor color = QColor::fromRgb(pixel);
  return color.hsvSaturationF() > 0.28f && color.valueF() > 0.3f;
}

}  // namespace

ImageSummary summarize_image(const QImage& source, QRect region) {
  ImageSummary summary;
  if (source.isNull()) return summary;
  const QImage image = source.convertToFormat(QImage::Format_RGB32);
  if (region.isEmpty()) region = image.rect();
  region = region.intersected(image.rect());
  QSet<QRgb> colors;
  for (int y = 0; y < image.height(); ++y) {
    const auto* line = reinterpret_cast<const QRgb*>(image.constScanLine(y));
    for (int x = 0; x < image.width(); ++x) colors.insert(line[x] & 0xffffff);
  }
  summary.distinct_colors = static_cast<int>(colors.size());
  int run = 0;
  for (int y = region.top(); y <= region.bottom() + 1; ++y) {
    int count = 0;
    if (y <= region.bottom()) {
      const auto* line = reinterpret_cast<const QRgb*>(image.constScanLine(y));
      for (int x = region.left(); x <= region.right(); ++x)
        if (is_span_colored(line[x])) ++count;
    }
    summary.span_pixels += count;
    // A line belongs to a band when a few span pixels are on it (not a lone legend glyph).
    if (count >= 4) {
      ++run;
    } else {
      if (run >= 3) ++summary.span_bands;
      run = 0;
    }
  }
  return summary;
}

}  // namespace weft::monitor::testing
