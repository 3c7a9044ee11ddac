// weft-monitor: the desktop viewer of weft traces (see command_line.h for the arguments).
#include <QApplication>
#include <QMessageBox>
#include <QTimer>
#include <cstdio>

#include "command_line.h"
#include "main_window.h"
#include "screenshot.h"

int main(int argc, char** argv) {
  using namespace weft::monitor;
  MonitorOptions options;
  {
    // --help, --version and usage errors need no display: parse before any window system.
    QCoreApplication parsing(argc, argv);
    QCoreApplication::setApplicationName(QStringLiteral("weft-monitor"));
    QCoreApplication::setApplicationVersion(QStringLiteral(WEFT_VERSION));
    options = parse_command_line(QCoreApplication::arguments());
  }
  if (options.exit_now) return options.exit_code;
  if (!options.error.isEmpty()) {
    std::fprintf(stderr, "weft-monitor: error: %s\nRun weft-monitor --help for the usage.\n",
                 qPrintable(options.error));
    return options.exit_code;
  }
  // Rendering a screenshot needs no display; the platform is fixed when QApplication starts.
  if (!options.screenshot.isEmpty() && qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM"))
    qputenv("QT_QPA_PLATFORM", "offscreen");
  QApplication app(argc, argv);
  QApplication::setApplicationName(QStringLiteral("weft-monitor"));
  QApplication::setApplicationVersion(QStringLiteral(WEFT_VERSION));
  if (!options.screenshot.isEmpty()) {
    const QString error =
        render_screenshot(options.trace, options.screenshot, kScreenshotSize, options.tab);
    if (!error.isEmpty()) {
      std::fprintf(stderr, "%s\n", qPrintable(error));
      return 1;
    }
    return 0;
  }

  MainWindow window;
  window.show();
  // Opened once the event loop runs, so an error dialog has a window to sit on.
  QTimer::singleShot(0, &window, [&window, options] {
    if (!options.trace.isEmpty()) window.openFileInteractively(options.trace);
    if (options.live) {
      const QString error = window.attachLive(options.socket.toStdString());
      if (!error.isEmpty())
        QMessageBox::critical(&window, QObject::tr("Cannot attach live"), error);
    }
  });
  return QApplication::exec();
}
