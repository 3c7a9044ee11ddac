// bench_monitor_scale [--name-chars N] [--tracks N] [--live-tracks N]
//
// What the monitor's work costs as a trace grows wide rather than long: rendering the window
// (as `weft-monitor --screenshot` does) for one span with an N-character name (default 30 M)
// and for N tracks of one span each (default 100,000), and taking in N tracks live (default
// 20,000, arriving in 100 batches the way LiveConnection appends them) with every view
// listening. Each figure is printed beside the same work at a 100th of the size: the layout
// work only grows with what is visible, so the ratio stays far below 100.
#include <QApplication>
#include <QElapsedTimer>
#include <QTemporaryDir>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "main_window.h"
#include "screenshot.h"
#include "synthetic_trace.h"
#include "trace_document.h"

namespace {

using namespace weft::monitor;
using namespace weft::monitor::testing;

double seconds(const QElapsedTimer& timer) {
  return static_cast<double>(timer.nsecsElapsed()) / 1e9;
}

// Renders `trace` like --screenshot; returns the seconds it took (the trace file written first,
// untimed).
double time_screenshot(const TraceBuilder& trace, const QString& directory) {
  const QString path = directory + QStringLiteral("/scale.wefttrace");
  trace.write(path.toStdString());
  QElapsedTimer timer;
  timer.start();
  const QString error = render_screenshot(path, directory + QStringLiteral("/scale.png"));
  if (!error.isEmpty()) {
    std::fprintf(stderr, "bench_monitor_scale: %s\n", qPrintable(error));
    std::exit(1);
  }
  return seconds(timer);
}

double long_name(std::size_t chars, const QString& directory) {
  TraceBuilder trace;
  trace.add(SpanKind::dispatch, host_track("main"), std::string(chars, 'n'), 0, 1000000);
  return time_screenshot(trace, directory);
}

double many_tracks(std::size_t tracks, const QString& directory) {
  TraceBuilder trace;
  for (std::size_t t = 0; t < tracks; ++t)
    trace.add(SpanKind::dispatch, host_track("thread " + std::to_string(t)), "f",
              static_cast<std::int64_t>(t) * 1000, static_cast<std::int64_t>(t) * 1000 + 800);
  return time_screenshot(trace, directory);
}

double live_tracks(std::size_t tracks) {
  MainWindow window;
  window.resize(1400, 900);
  window.show();
  window.document()->startLive(QStringLiteral("bench"));
  constexpr std::size_t kBatches = 100;
  QElapsedTimer timer;
  timer.start();
  weft::telemetry::Id id = 1;
  for (std::size_t batch = 0; batch < kBatches; ++batch) {
    std::vector<Span> spans;
    for (std::size_t t = batch * tracks / kBatches; t < (batch + 1) * tracks / kBatches; ++t) {
      Span span;
      span.id = id++;
      span.kind = SpanKind::dispatch;
      span.track = host_track("thread " + std::to_string(t));
      span.name = "f";
      span.start_ns = static_cast<std::int64_t>(t) * 1000;
      span.end_ns = span.start_ns + 800;
      spans.push_back(std::move(span));
    }
    window.document()->append(std::move(spans), {}, {});
    QApplication::processEvents();
  }
  return seconds(timer);
}

void report(const char* what, double small_s, double large_s) {
  std::printf("%-34s %8.3f s  (a 100th of it: %.3f s; ratio %.1f for 100x the size)\n", what,
              large_s, small_s, large_s / std::max(small_s, 1e-6));
}

}  // namespace

int main(int argc, char** argv) {
  std::size_t name_chars = 30'000'000, tracks = 100'000, live = 20'000;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::size_t value = std::strtoull(argv[i + 1], nullptr, 10);
    if (std::strcmp(argv[i], "--name-chars") == 0)
      name_chars = value;
    else if (std::strcmp(argv[i], "--tracks") == 0)
      tracks = value;
    else if (std::strcmp(argv[i], "--live-tracks") == 0)
      live = value;
  }
  if (argc % 2 == 0 || name_chars < 100 || tracks < 100 || live < 100) {
    std::fprintf(stderr,
                 "usage: bench_monitor_scale [--name-chars N] [--tracks N] [--live-tracks N] "
                 "(each at least 100)\n");
    return 2;
  }
  if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
  QApplication app(argc, argv);
  QTemporaryDir scratch;
  if (!scratch.isValid()) {
    std::fprintf(stderr, "bench_monitor_scale: cannot create a temporary directory\n");
    return 1;
  }
  const QString directory = scratch.path();
  // Sequenced: the smaller run first (function arguments have no evaluation order).
  const double name_small = long_name(name_chars / 100, directory);
  report(("screenshot, " + std::to_string(name_chars) + "-char name").c_str(), name_small,
         long_name(name_chars, directory));
  const double tracks_small = many_tracks(tracks / 100, directory);
  report(("screenshot, " + std::to_string(tracks) + " tracks").c_str(), tracks_small,
         many_tracks(tracks, directory));
  const double live_small = live_tracks(live / 100);
  report(("live, " + std::to_string(live) + " tracks").c_str(), live_small, live_tracks(live));
  return 0;
}
