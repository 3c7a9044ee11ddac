#include "screenshot.h"

#include <QApplication>
#include <QImage>
#include <QPixmap>
#include <QTabWidget>

#include "main_window.h"
#include "qt_text.h"
#include "timeline_view.h"
#include "trace_loading.h"

namespace weft::monitor {

QString render_screenshot(const QString& trace_path, const QString& png_path, QSize size, int tab) {
  LoadedTrace loaded = load_trace_file(trace_path.toStdString());
  if (!loaded.trace) return to_qstring(loaded.error);
  MainWindow window;
  window.showTrace(std::move(*loaded.trace), trace_path);
  if (tab >= 0 && tab < window.tabs()->count()) window.tabs()->setCurrentIndex(tab);
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
