// What a screenshot shows, measured: distinct colours, and the horizontal bands of "span"
// pixels (saturated colours, as the timeline paints spans) that rows of the timeline make.
#pragma once

#include <QImage>
#include <QRect>

namespace weft::monitor::testing {

struct ImageSummary {
  int distinct_colors = 0;
  int span_bands = 0;   // runs of >= 3 pixel lines holding span-coloured pixels
  int span_pixels = 0;  // saturated pixels in the region
};

// `region`: where to look for bands (the whole image when empty).
ImageSummary summarize_image(const QImage& image, QRect region = {});

}  // namespace weft::monitor::testing
