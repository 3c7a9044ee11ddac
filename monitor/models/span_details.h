// What the details pane says about one span, as HTML: a kernel's fused ops, OpenCL C source and
// waits; a callback's shapes, status and token neighbours; a compile's key, cache status and
// phases; a dispatch's location. Links "span:N" name other spans (N: index in the document).
#pragma once

#include <QString>
#include <cstddef>

namespace weft::monitor {

class TraceDocument;

QString describe_span_html(const TraceDocument& document, std::size_t span_index);

// The span index a "span:N" link names, or -1.
long long span_index_from_link(const QString& link);

}  // namespace weft::monitor
