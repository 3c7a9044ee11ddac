#include "span_details.h"

#include <charconv>
#include <vector>

#include "effect_order.h"
#include "qt_text.h"
#include "span_filter.h"
#include "time_format.h"
#include "trace_document.h"

namespace weft::monitor {

namespace {

using telemetry::Span;
using telemetry::SpanKind;

QString escaped(std::string_view text) {
  return to_qstring(text).toHtmlEscaped();
}

// A name, at most kMaxShownNameBytes of it (traces may hold megabyte names).
QString escaped_name(std::string_view name) {
  return display_name(name).toHtmlEscaped();
}

QString time_point(std::int64_t ns) {
  return escaped(format_time_point(ns));
}

QString duration(std::int64_t ns) {
  return escaped(format_duration(ns));
}

// A row of the key/value table.
class Table {
 public:
  void add(const QString& key, const QString& value_html) {
    html_ += QStringLiteral("<tr><td style='color:#555;padding-right:12px'>%1</td><td>%2</td></tr>")
                 .arg(key.toHtmlEscaped(), value_html);
  }
  void add_text(const QString& key, std::string_view value) {
    add(key, display_text(value, kMaxShownValueBytes).toHtmlEscaped());
  }
  void add_arg(const QString& key, const Span& span, const char* arg) {
    if (const std::string* value = span.arg(arg)) add_text(key, *value);
  }
  void add_wait(const QString& key, const Span& span, const char* arg) {
    const std::string* value = span.arg(arg);
    if (!value) return;
    long long ns = 0;
    const auto [end, error] = std::from_chars(value->data(), value->data() + value->size(), ns);
    if (error == std::errc() && end == value->data() + value->size())
      add(key, duration(ns));
    else
      add_text(key, *value);
  }
  QString html() const {
    return html_.isEmpty() ? QString() : QStringLiteral("<table>%1</table>").arg(html_);
  }

 private:
  QString html_;
};

QString link_to(const TraceDocument& document, std::size_t index) {
  const Span& span = document.spans()[index];
  return QStringLiteral("<a href='span:%1'>%2</a> <span style='color:#777'>(%3, %4)</span>")
      .arg(index)
      .arg(escaped_name(span.name))
      .arg(escaped(telemetry::to_string(span.kind)))
      .arg(time_point(span.start_ns));
}

QString heading(const QString& text) {
  return QStringLiteral("<h4 style='margin-bottom:2px'>%1</h4>").arg(text.toHtmlEscaped());
}

QString preformatted(std::string_view text) {
  // pre-wrap: long source lines wrap in the pane instead of running off its edge.
  return QStringLiteral("<pre style='font-size:small; white-space:pre-wrap'>%1</pre>")
      .arg(escaped(text));
}

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> items;
  std::size_t begin = 0;
  while (begin <= text.size()) {
    std::size_t end = text.find(',', begin);
    if (end == std::string::npos) end = text.size();
    std::string item = text.substr(begin, end - begin);
    const std::size_t first = item.find_first_not_of(' ');
    const std::size_t last = item.find_last_not_of(' ');
    if (first != std::string::npos) items.push_back(item.substr(first, last - first + 1));
    begin = end + 1;
  }
  return items;
}

QString bullet_list(const std::vector<std::string>& items) {
  QString html = QStringLiteral("<ul style='margin-top:0'>");
  for (const std::string& item : items)
    html += QStringLiteral("<li>%1</li>").arg(escaped_name(item));
  return html + QStringLiteral("</ul>");
}

void describe_kernel(const TraceDocument& document, const Span& span, Table& table, QString& body) {
  table.add_wait(QObject::tr("Queue wait"), span, "queue_wait_ns");
  table.add_wait(QObject::tr("Submit wait"), span, "submit_wait_ns");
  table.add_arg(QObject::tr("Global size"), span, "global_size");
  table.add_arg(QObject::tr("Local size"), span, "local_size");
  table.add_arg(QObject::tr("Loop iteration"), span, "iteration");
  const telemetry::Program* program = document.programOf(span);
  std::vector<std::string> fused;
  if (const std::string* ops = span.arg("fused_ops")) fused = split_list(*ops);
  if (program) {
    for (const telemetry::Program::Kernel& kernel : program->kernels) {
      if (kernel.name != span.name) continue;
      if (fused.empty()) fused = kernel.fused_ops;
      table.add_text(QObject::tr("Kernel kind"), kernel.kind);
    }
    table.add_text(
        QObject::tr("Program"),
        program->function + " (cache " +
            (program->cache_status.empty() ? std::string("off") : program->cache_status) + ")");
  }
  body += heading(QObject::tr("Fused IR ops (%1)").arg(fused.size()));
  body += fused.empty() ? QObject::tr("<p>None recorded.</p>") : bullet_list(fused);
  if (program && !program->source.empty()) {
    body += heading(QObject::tr("OpenCL C source"));
    body += preformatted(program->source);
  } else {
    body += QObject::tr("<p>The trace holds no source for this kernel's program.</p>");
  }
}

void describe_callback(const TraceDocument& document, std::size_t index, const Span& span,
                       Table& table, QString& body) {
  table.add_text(QObject::tr("Effect"), span.effect);
  table.add_arg(QObject::tr("Ordered"), span, "ordered");
  table.add(QObject::tr("Program order"),
            to_qstring(format_program_position(span.seq)) +
                QObject::tr(" (dispatch.step on its thread; seq %1)").arg(span.seq));
  table.add_arg(QObject::tr("Dispatched by"), span, "thread");
  table.add_arg(QObject::tr("Argument shapes"), span, "shapes");
  table.add_wait(QObject::tr("Receive wait"), span, "receive_wait_ns");
  if (const std::string* status = span.arg("status")) {
    const bool ok = *status == "ok";
    table.add(QObject::tr("Status"), QStringLiteral("<span style='color:%1'>%2</span>")
                                         .arg(ok ? "#2a7a2a" : "#b02020", escaped_name(*status)));
  }
  auto list_edges = [&](const std::vector<std::size_t>& edges, bool predecessors) {
    QString html = QStringLiteral("<ul style='margin-top:0'>");
    for (std::size_t e : edges) {
      const ResolvedEdge& edge = document.edges()[e];
      html += QStringLiteral("<li>%1 <span style='color:#777'>[%2]</span></li>")
                  .arg(link_to(document, predecessors ? edge.from : edge.to),
                       escaped_name(edge.effect));
    }
    return html + QStringLiteral("</ul>");
  };
  const std::vector<std::size_t> into = document.edgesInto(index);
  const std::vector<std::size_t> out_of = document.edgesOutOf(index);
  body += heading(QObject::tr("Waited for the token of (%1)").arg(into.size()));
  body += into.empty() ? QObject::tr("<p>Nothing: it was first in its stream.</p>")
                       : list_edges(into, true);
  body += heading(QObject::tr("Handed its token to (%1)").arg(out_of.size()));
  body += out_of.empty() ? QObject::tr("<p>Nothing recorded.</p>") : list_edges(out_of, false);
}

void describe_compile(const TraceDocument& document, std::size_t index, const Span& span,
                      Table& table, QString& body) {
  table.add_arg(QObject::tr("Cache"), span, "cache");
  table.add_arg(QObject::tr("Key"), span, "key");
  table.add_arg(QObject::tr("Program"), span, "program");
  // Phases start within the compile; a file's spans are sorted by start, a live trace's not.
  const auto& spans = document.spans();
  std::vector<std::size_t> phases;
  const std::size_t first = document.isLive() ? 0 : index + 1;
  for (std::size_t i = first; i < spans.size(); ++i) {
    if (!document.isLive() && spans[i].start_ns > span.end_ns) break;
    if (spans[i].kind == SpanKind::compile_phase && spans[i].parent == span.id) phases.push_back(i);
  }
  body += heading(QObject::tr("Phases"));
  if (phases.empty()) {
    body += QObject::tr("<p>None recorded.</p>");
    return;
  }
  const double total = static_cast<double>(std::max<std::int64_t>(1, span.end_ns - span.start_ns));
  QString rows;
  std::int64_t covered = 0;
  for (std::size_t i : phases) {
    const std::int64_t length = spans[i].end_ns - spans[i].start_ns;
    covered += length;
    rows +=
        QStringLiteral("<tr><td>%1</td><td align='right'>%2</td><td align='right'>%3%</td></tr>")
            .arg(link_to(document, i), duration(length))
            .arg(100.0 * static_cast<double>(length) / total, 0, 'f', 1);
  }
  rows +=
      QStringLiteral("<tr><td style='color:#555'>%1</td><td align='right'>%2</td><td></td></tr>")
          .arg(QObject::tr("outside the phases"),
               duration(std::max<std::int64_t>(0, span.end_ns - span.start_ns - covered)));
  body += QStringLiteral("<table cellspacing='4'>%1</table>").arg(rows);
}

}  // namespace

long long span_index_from_link(const QString& link) {
  if (!link.startsWith(QLatin1String("span:"))) return -1;
  bool ok = false;
  const long long index = link.mid(5).toLongLong(&ok);
  return ok && index >= 0 ? index : -1;
}

QString describe_span_html(const TraceDocument& document, std::size_t index) {
  if (index >= document.spans().size()) return QObject::tr("<p>No span selected.</p>");
  const Span& span = document.spans()[index];
  QString html =
      QStringLiteral(
          "<h3 style='margin-bottom:2px'>%1</h3><p style='color:#555;margin-top:0'>%2 on %3</p>")
          .arg(escaped_name(span.name), escaped(telemetry::to_string(span.kind)),
               escaped_name(span.track.name));
  Table table;
  table.add(QObject::tr("Start"), time_point(span.start_ns));
  table.add(QObject::tr("End"), time_point(span.end_ns));
  table.add(QObject::tr("Duration"), duration(span.end_ns - span.start_ns));
  table.add_text(QObject::tr("Device"), span_device(span));
  QString body;
  switch (span.kind) {
    case SpanKind::kernel:
      describe_kernel(document, span, table, body);
      break;
    case SpanKind::callback:
      describe_callback(document, index, span, table, body);
      break;
    case SpanKind::compile:
      describe_compile(document, index, span, table, body);
      break;
    case SpanKind::dispatch: {
      table.add_arg(QObject::tr("Defined at"), span, "location");
      // Tiered execution: a call run on the reference interpreter while the kernels build.
      table.add_arg(QObject::tr("Ran on"), span, "ran_on");
      if (const telemetry::Program* program = document.programOf(span))
        table.add_text(QObject::tr("Program"),
                       program->function + " (" + std::to_string(program->kernels.size()) +
                           " kernels, cache " + program->cache_status + ")");
      break;
    }
    case SpanKind::cache_lookup:
      table.add_arg(QObject::tr("Status"), span, "status");
      table.add_arg(QObject::tr("Reason"), span, "reason");
      table.add_arg(QObject::tr("Key"), span, "key");
      break;
    case SpanKind::cache_store:
      table.add_arg(QObject::tr("Status"), span, "status");
      table.add_arg(QObject::tr("Key"), span, "key");
      table.add_arg(QObject::tr("Bytes"), span, "bytes");
      break;
    case SpanKind::transfer:
      table.add_arg(QObject::tr("Bytes"), span, "bytes");
      break;
    case SpanKind::loop_iteration:
    case SpanKind::predicate_read:
      table.add_arg(QObject::tr("Index"), span, "index");
      break;
    case SpanKind::compile_phase:
    case SpanKind::barrier_wait:
    case SpanKind::array_wait:
      break;
  }
  if (span.parent != 0) {
    const std::ptrdiff_t parent = document.indexOf(span.parent);
    if (parent >= 0)
      table.add(QObject::tr("Part of"), link_to(document, static_cast<std::size_t>(parent)));
  }
  html += table.html() + body;
  if (!span.args.empty()) {
    Table args;
    for (const auto& [key, value] : span.args) args.add_text(display_name(key), value);
    html += heading(QObject::tr("All arguments")) + args.html();
  }
  html += QStringLiteral("<p style='color:#999'>span id %1</p>").arg(span.id);
  return html;
}

}  // namespace weft::monitor
