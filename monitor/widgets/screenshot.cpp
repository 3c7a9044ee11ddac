#include "screenshot.h"

#include <QApplication>
#include <QImage>
#include <QPixmap>
#include <QTabWidget>
#include <filesystem>
#include <system_error>

#include "main_window.h"
#include "qt_text.h"
#include "range_totals_view.h"
#include "timeline_view.h"
#include "trace_document.h"
#include "trace_loading.h"

namespace weft::monitor {

QString render_screenshot(const QString& trace_path, const QString& png_path, QSize size, int tab) {
  // The same file under two names (the same path twice, a link): writing the PNG would
  // destroy the trace. Compared by device and inode, so no spelling of the path gets through.
  std::error_code error;
  if (std::filesystem::equivalent(png_path.toStdString(), trace_path.toStdString(), error))
    return QStringLiteral(
               "weft-monitor: the screenshot path %1 is the trace file %2 itself (the same "
               "device and inode): writing the PNG would destroy the trace; give another "
               "output path")
        .arg(png_path, trace_path);
  LoadedTrace loaded = load_trace_file(trace_path.toStdString());
  if (!loaded.trace) return to_qstring(loaded.error);
  MainWindow window;
  window.showTrace(std::move(*loaded.trace), trace_path);
  if (tab >= 0 && tab < window.tabs()->count()) window.tabs()->setCurrentIndex(tab);
  if (window.tabs()->currentWidget() == window.rangeTotals())
    window.rangeTotals()->setRange(window.document()->timeline().start_ns(),
                                   window.document()->timeline().end_ns());
  window.resize(size);
  window.show();
  // Lays out the docks and splitters at the final size before the timeline fits itself.
  QApplication::processEvents();
  window.timeline()->fitAll();
  QApplication::processEvents();
  const QImage image = window.grab().toImage();
  if (image.isNull()) return QStringLiteral("weft-monitor: rendering the window failed");
  if (!image.save(png_path, "PNG"))
    return QStringLiteral(
               "weft-monitor: cannot write the screenshot to %1 (does its directory "
               "exist, and may you write there?)")
        .arg(png_path);
  return {};
}

}  // namespace weft::monitor
