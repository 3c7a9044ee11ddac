#include "command_line.h"

#include <QCommandLineParser>
#include <cstdio>

namespace weft::monitor {

MonitorOptions parse_command_line(const QStringList& arguments) {
  MonitorOptions options;
  QCommandLineParser parser;
  parser.setApplicationDescription(
      QStringLiteral("weft-monitor: look at what weft programs did. Opens a trace recorded with "
                     "WEFT_TRACE=FILE, or (--live) shows programs run with WEFT_MONITOR=1 as "
                     "they run."));
  const QCommandLineOption help = parser.addHelpOption();
  const QCommandLineOption version = parser.addVersionOption();
  const QCommandLineOption live(QStringList{QStringLiteral("l"), QStringLiteral("live")},
                                QStringLiteral("Listen for programs run with WEFT_MONITOR=1."));
  const QCommandLineOption socket(
      QStringLiteral("socket"),
      QStringLiteral("The live socket (default: $XDG_RUNTIME_DIR/weft/monitor.sock, or "
                     "WEFT_MONITOR_SOCKET)."),
      QStringLiteral("path"));
  const QCommandLineOption screenshot(
      QStringLiteral("screenshot"),
      QStringLiteral("Render the window with TRACE (1400x900, fitted) to a PNG and exit; no "
                     "display needed."),
      QStringLiteral("out.png"));
  const QCommandLineOption tab(
      QStringLiteral("tab"),
      QStringLiteral("With --screenshot: the lower pane's tab to show (spans, effects, cache or "
                     "totals, the whole trace's range totals; default spans)."),
      QStringLiteral("name"));
  parser.addOption(tab);
  parser.addOption(live);
  parser.addOption(socket);
  parser.addOption(screenshot);
  parser.addPositionalArgument(QStringLiteral("trace"),
                               QStringLiteral("A trace file (.wefttrace) to open."),
                               QStringLiteral("[TRACE]"));
  if (!parser.parse(arguments)) {
    options.error = parser.errorText();
    options.exit_code = 2;
    return options;
  }
  if (parser.isSet(help)) {
    std::fputs(qPrintable(parser.helpText()), stdout);
    options.exit_now = true;
    return options;
  }
  if (parser.isSet(version)) {
    std::printf("weft-monitor %s\n", WEFT_VERSION);
    options.exit_now = true;
    return options;
  }
  const QStringList positional = parser.positionalArguments();
  if (positional.size() > 1) {
    options.error = QStringLiteral("one trace at a time, got %1 files").arg(positional.size());
    options.exit_code = 2;
    return options;
  }
  if (!positional.isEmpty()) options.trace = positional.front();
  options.live = parser.isSet(live);
  options.socket = parser.value(socket);
  options.screenshot = parser.value(screenshot);
  if (parser.isSet(tab)) {
    const QStringList names{QStringLiteral("spans"), QStringLiteral("effects"),
                            QStringLiteral("cache"), QStringLiteral("totals")};
    options.tab = static_cast<int>(names.indexOf(parser.value(tab)));
    if (options.tab < 0)
      options.error = QStringLiteral("--tab takes spans, effects, cache or totals, not \"%1\"")
                          .arg(parser.value(tab));
    else if (!parser.isSet(screenshot))
      options.error = QStringLiteral("--tab goes with --screenshot");
  }
  if (!options.error.isEmpty()) {
  } else if (parser.isSet(screenshot)) {
    if (options.screenshot.isEmpty())
      options.error = QStringLiteral("--screenshot needs a PNG path");
    else if (options.trace.isEmpty())
      options.error = QStringLiteral("--screenshot needs a TRACE file to render");
    else if (options.live)
      options.error =
          QStringLiteral("--screenshot renders a trace file; it cannot be combined with --live");
  } else if (options.live && !options.trace.isEmpty()) {
    options.error = QStringLiteral("open a TRACE or listen --live, not both");
  }
  if (!options.error.isEmpty()) options.exit_code = 2;
  return options;
}

}  // namespace weft::monitor
