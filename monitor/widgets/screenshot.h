// `weft-monitor --screenshot`: the main window with a trace, fitted, rendered to a PNG without
// a display (the offscreen platform).
#pragma once

#include <QSize>
#include <QString>

namespace weft::monitor {

inline constexpr QSize kScreenshotSize{1400, 900};  // the window's default size

// Returns the error message (empty on success): the trace's TraceError, why the PNG could
// not be written, or a refusal when `png_path` is the trace file itself (by device and inode).
// `tab` picks the lower pane's tab (0 spans, 1 effect order, 2 cache, 3 range totals of the
// whole trace).
QString render_screenshot(const QString& trace_path, const QString& png_path,
                          QSize size = kScreenshotSize, int tab = 0);

}  // namespace weft::monitor
