// monitor_image_check PNG [MIN_BANDS] [MIN_COLORS]: exits 0 when the screenshot shows at least
// MIN_BANDS (3) horizontal bands of drawn spans and more than MIN_COLORS (16) colours; else
// says what it found and exits 1. The end-to-end screenshot test's checker.
#include <QImage>
#include <cstdio>
#include <cstdlib>

#include "support/image_analysis.h"

int main(int argc, char** argv) {
  if (argc < 2 || argc > 4) {
    std::fprintf(stderr, "usage: monitor_image_check PNG [MIN_BANDS] [MIN_COLORS]\n");
    return 2;
  }
  const int min_bands = argc > 2 ? std::atoi(argv[2]) : 3;
  const int min_colors = argc > 3 ? std::atoi(argv[3]) : 16;
  QImage image;
  if (!image.load(QString::fromLocal8Bit(argv[1]))) {
    std::fprintf(stderr, "monitor_image_check: cannot load %s as an image\n", argv[1]);
    return 1;
  }
  const auto summary = weft::monitor::testing::summarize_image(image);
  std::printf("%s: %dx%d, %d colours, %d span bands, %d span pixels\n", argv[1], image.width(),
              image.height(), summary.distinct_colors, summary.span_bands, summary.span_pixels);
  if (summary.span_bands < min_bands || summary.distinct_colors <= min_colors) {
    std::fprintf(stderr,
                 "monitor_image_check: expected at least %d span bands and more than %d colours\n",
                 min_bands, min_colors);
    return 1;
  }
  return 0;
}
