// weft-monitor's command line: [TRACE] [--live [--socket PATH]]
// [--screenshot OUT.png [--tab spans|effects|cache|totals]].
#pragma once

#include <QString>
#include <QStringList>

namespace weft::monitor {

struct MonitorOptions {
  QString trace;       // a trace file to open
  QString screenshot;  // render to this PNG and exit
  int tab = 0;  // the lower pane's tab in the screenshot: 0 spans, 1 effects, 2 cache, 3 totals
  bool live = false;      // listen for programs run with WEFT_MONITOR=1
  QString socket;         // the live socket (default: telemetry::monitor_socket_path())
  bool exit_now = false;  // --help or --version was answered
  int exit_code = 0;
  QString error;  // a usage error; exit_code is 2
};

// Parses `arguments` (argv[0] first). --help and --version print and set exit_now.
MonitorOptions parse_command_line(const QStringList& arguments);

}  // namespace weft::monitor
