// bench_monitor_open [--spans N] [--trace PATH] [--png PATH]
//
// Writes a synthetic trace of N spans (default 1,000,000) with the real TraceFileSink, then
// times what opening it in weft-monitor costs: read_trace, building the models (document and
// timeline index, span table and filter proxy, tracks, effect order, cache lookups), and one
// offscreen render of the timeline at full zoom-out. Prints each figure and the total against
// the 3 s goal. --png keeps the render, --trace the trace file (a temporary one otherwise).
#include <QApplication>
#include <QElapsedTimer>
#include <QImage>
#include <QTemporaryDir>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "cache_lookup_model.h"
#include "effect_order_model.h"
#include "span_filter_proxy_model.h"
#include "span_table_model.h"
#include "synthetic_trace.h"
#include "timeline_view.h"
#include "trace_document.h"
#include "track_model.h"
#include "weft/telemetry/trace_file.h"

namespace {

constexpr double kGoalSeconds = 3.0;

double seconds(const QElapsedTimer& timer) {
  return static_cast<double>(timer.nsecsElapsed()) / 1e9;
}

}  // namespace

int main(int argc, char** argv) {
  std::size_t span_count = 1'000'000;
  std::string trace_path, png_path;
  for (int i = 1; i < argc; ++i) {
    const bool has_value = i + 1 < argc;
    if (std::strcmp(argv[i], "--spans") == 0 && has_value) {
      span_count = std::strtoull(argv[++i], nullptr, 10);
    } else if (std::strcmp(argv[i], "--trace") == 0 && has_value) {
      trace_path = argv[++i];
    } else if (std::strcmp(argv[i], "--png") == 0 && has_value) {
      png_path = argv[++i];
    } else {
      std::fprintf(stderr, "usage: bench_monitor_open [--spans N] [--trace PATH] [--png PATH]\n");
      return 2;
    }
  }
  if (span_count == 0) {
    std::fprintf(stderr, "bench_monitor_open: --spans needs a positive count\n");
    return 2;
  }
  if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
  QApplication app(argc, argv);
  QTemporaryDir scratch;
  if (trace_path.empty()) {
    if (!scratch.isValid()) {
      std::fprintf(stderr, "bench_monitor_open: cannot create a temporary directory\n");
      return 1;
    }
    trace_path = scratch.filePath(QStringLiteral("bench.wefttrace")).toStdString();
  }

  using namespace weft::monitor;
  try {
    QElapsedTimer timer;
    timer.start();
    testing::write_large_trace(trace_path, span_count);
    std::printf("wrote %zu spans to %s in %.2f s (not part of the goal)\n", span_count,
                trace_path.c_str(), seconds(timer));

    timer.restart();
    weft::telemetry::Trace trace = weft::telemetry::read_trace(trace_path);
    const double read_s = seconds(timer);
    std::printf("read_trace:                %7.3f s  (%zu spans, %zu edges)\n", read_s,
                trace.spans.size(), trace.edges.size());

    timer.restart();
    TraceDocument document;
    document.setTrace(std::move(trace), QString::fromStdString(trace_path));
    TrackModel tracks(&document);
    SpanTableModel spans(&document);
    SpanFilterProxyModel proxy;
    proxy.setSpanModel(&spans);
    const int listed = proxy.rowCount();  // builds the proxy's mapping
    CacheLookupModel lookups(&document);
    EffectOrderModel effects(&document);
    effects.analyze();
    const double models_s = seconds(timer);
    std::printf("models:                    %7.3f s  (%d rows, %d listed, %zu effect streams)\n",
                models_s, tracks.rowCount(), listed, effects.streams().size());

    timer.restart();
    TimelineView view(&document);
    view.resize(1600, 1000);
    view.show();
    QApplication::processEvents();
    view.fitAll();
    const QImage image = view.grab().toImage();
    const double render_s = seconds(timer);
    std::printf("first render (fitted):     %7.3f s  (%dx%d)\n", render_s, image.width(),
                image.height());

    timer.restart();
    view.zoomBy(1.5, 800);
    view.grab();
    std::printf("a later render (zoomed):   %7.3f s\n", seconds(timer));

    const double total = read_s + models_s + render_s;
    std::printf("open total:                %7.3f s  = %.2f x the %.0f s goal (%s)\n", total,
                total / kGoalSeconds, kGoalSeconds, total <= kGoalSeconds ? "met" : "missed");
    if (!png_path.empty() && !image.save(QString::fromStdString(png_path))) {
      std::fprintf(stderr, "bench_monitor_open: cannot write %s\n", png_path.c_str());
      return 1;
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_monitor_open: %s\n", e.what());
    return 1;
  }
  return 0;
}
