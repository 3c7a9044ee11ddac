// `weft trace export|summary FILE`: a recorded trace (WEFT_TRACE, --trace) as Chrome
// trace-event JSON for Perfetto, or as totals in the terminal. And --trace FILE, which records
// any command.
#include <sys/stat.h>

#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "format.h"
#include "weft/error.h"
#include "weft/telemetry/environment.h"
#include "weft/telemetry/terminal_text.h"
#include "weft/telemetry/trace_file.h"
#include "weft/telemetry/trace_tools.h"

namespace weft::cli {

namespace {

using nlohmann::json;
using telemetry::terminal_text;
using telemetry::TraceSummary;

double seconds(std::int64_t ns) {
  return static_cast<double>(ns) * 1e-9;
}

json rows_json(const std::vector<TraceSummary::Row>& rows) {
  json out = json::array();
  for (const TraceSummary::Row& r : rows)
    out.push_back({{"name", r.name},
                   {"device", r.device},
                   {"count", r.count},
                   {"total_s", seconds(r.total_ns)},
                   {"max_s", seconds(r.max_ns)},
                   {"wait_s", seconds(r.wait_ns)},
                   {"failed", r.failed},
                   {"ordered", r.ordered},
                   {"out_of_order", r.out_of_order}});
  return out;
}

std::string mean(const TraceSummary::Row& r) {
  return format_seconds(r.count ? seconds(r.total_ns) / static_cast<double>(r.count) : 0.0);
}

void print_rows(const char* title, const std::vector<TraceSummary::Row>& rows, const char* wait,
                std::size_t limit) {
  if (rows.empty()) return;
  std::cout << title << "\n";
  const bool with_wait = *wait != '\0';
  std::vector<std::string> headers = {"name", "device", "count", "total", "mean", "max"};
  std::vector<Table::Align> align = {Table::Align::Left,  Table::Align::Left,  Table::Align::Right,
                                     Table::Align::Right, Table::Align::Right, Table::Align::Right};
  if (with_wait) {
    headers.push_back(wait);
    align.push_back(Table::Align::Right);
  }
  Table table(headers, align);
  for (std::size_t i = 0; i < rows.size() && i < limit; ++i) {
    const TraceSummary::Row& r = rows[i];
    std::vector<std::string> cells = {terminal_text(r.name),
                                      terminal_text(r.device),
                                      std::to_string(r.count),
                                      format_seconds(seconds(r.total_ns)),
                                      mean(r),
                                      format_seconds(seconds(r.max_ns))};
    if (with_wait) cells.push_back(format_seconds(seconds(r.wait_ns)));
    table.add_row(std::move(cells));
  }
  std::cout << table.render();
  if (rows.size() > limit) std::cout << "  ... and " << rows.size() - limit << " more\n";
  std::cout << "\n";
}

int run_summary(const TraceOptions& o) {
  const telemetry::Trace trace = telemetry::read_trace(o.file);
  const TraceSummary s = telemetry::summarize(trace);
  if (o.json) {
    json effects = rows_json(s.effects);
    std::cout << json{{"file", o.file},
                      {"command", trace.meta.count("command") ? trace.meta.at("command") : ""},
                      {"duration_s", seconds(s.duration_ns)},
                      {"spans", s.spans},
                      {"edges", s.edges},
                      {"kernels", rows_json(s.kernels)},
                      {"effects", effects},
                      {"dispatches", rows_json(s.dispatches)},
                      {"interpreted_dispatches", s.interpreted_dispatches},
                      {"transfers", rows_json(s.transfers)},
                      {"compiles", s.compiles},
                      {"compile_s", seconds(s.compile_ns)},
                      {"cache_hits", s.cache_hits},
                      {"cache_misses", s.cache_misses},
                      {"miss_reasons", s.miss_reasons},
                      {"cache_stores", s.cache_stores},
                      {"barrier_wait_s", seconds(s.barrier_wait_ns)},
                      {"array_wait_s", seconds(s.array_wait_ns)}}
                     // Text from the file that is not UTF-8 (a Latin-1 file name in the command)
                     // becomes U+FFFD rather than an exception.
                     .dump(2, ' ', false, json::error_handler_t::replace)
              << "\n";
    return kExitOk;
  }
  // Every text from the file goes through terminal_text: a trace may hold escape sequences.
  std::cout << terminal_text(o.file) << ": " << s.spans << " spans, " << s.edges
            << " token edges over " << format_seconds(seconds(s.duration_ns));
  if (auto c = trace.meta.find("command"); c != trace.meta.end() && !c->second.empty())
    std::cout << " (" << terminal_text(c->second) << ")";
  std::cout << "\n\n";
  const std::size_t limit = o.limit > 0 ? static_cast<std::size_t>(o.limit) : 20;
  print_rows("Kernels (device time; wait = wall time while one was queued, not started)", s.kernels,
             "wait", limit);
  if (!s.effects.empty()) {
    std::cout
        << "Effects (callbacks and prints; wait = wall time while one was runnable, not started)\n";
    Table table(
        {"effect", "ordered", "count", "total", "mean", "max", "wait", "order"},
        {Table::Align::Left, Table::Align::Left, Table::Align::Right, Table::Align::Right,
         Table::Align::Right, Table::Align::Right, Table::Align::Right, Table::Align::Left});
    for (const TraceSummary::Row& r : s.effects) {
      std::string order = !r.ordered            ? "any (unordered)"
                          : r.out_of_order == 0 ? "program order"
                                                : std::to_string(r.out_of_order) + " OUT OF ORDER";
      if (r.failed) order += ", " + std::to_string(r.failed) + " failed";
      table.add_row({terminal_text(r.name), r.ordered ? "yes" : "no", std::to_string(r.count),
                     format_seconds(seconds(r.total_ns)), mean(r),
                     format_seconds(seconds(r.max_ns)), format_seconds(seconds(r.wait_ns)), order});
    }
    std::cout << table.render() << "\n";
  }
  print_rows("Dispatches (host time to enqueue)", s.dispatches, "", limit);
  if (s.interpreted_dispatches)
    std::cout << "Dispatches run on the reference interpreter while their kernels were not built "
                 "(tiered execution): "
              << s.interpreted_dispatches << "\n\n";
  print_rows("Transfers", s.transfers, "", limit);
  std::cout << "Compiles: " << s.compiles << " (" << format_seconds(seconds(s.compile_ns))
            << "); persistent cache: " << s.cache_hits << " hits, " << s.cache_misses << " misses";
  if (!s.miss_reasons.empty())
    std::cout << " (" << terminal_text(join(s.miss_reasons, ", ")) << ")";
  std::cout << ", " << s.cache_stores << " stored\n";
  std::cout << "Waits (wall time): effects barriers " << format_seconds(seconds(s.barrier_wait_ns))
            << ", array values " << format_seconds(seconds(s.array_wait_ns)) << "\n";
  return kExitOk;
}

// Whether `output` is the trace file itself under any name (a link, another path): writing it
// would truncate the recording before it is read.
bool same_file(const std::string& trace, const std::string& output) {
  struct stat a {
  }, b{};
  return ::stat(trace.c_str(), &a) == 0 && ::stat(output.c_str(), &b) == 0 &&
         a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

int run_export(const TraceOptions& o) {
  const std::string output = o.output.empty() ? "-" : o.output;
  if (output != "-" && same_file(o.file, output))
    throw InvalidArgumentError("weft trace export: the output " + output + " is the trace file " +
                               o.file +
                               " itself, which writing would destroy; give -o another "
                               "path (run.json)");
  const telemetry::Trace trace = telemetry::read_trace(o.file);
  if (output == "-") {
    telemetry::write_chrome_trace(trace, std::cout);
    return kExitOk;
  }
  std::ofstream out(output, std::ios::binary | std::ios::trunc);
  if (!out)
    throw InvalidArgumentError("weft trace export: cannot write " + output +
                               "; check that its directory exists and is writable");
  telemetry::write_chrome_trace(trace, out);
  out.close();
  if (!out) throw InvalidArgumentError("weft trace export: writing " + output + " failed");
  std::cerr << "wrote " << output << " (" << trace.spans.size() << " spans, " << trace.edges.size()
            << " token flows): open it at https://ui.perfetto.dev or chrome://tracing\n";
  return kExitOk;
}

}  // namespace

CLI::App* add_trace_command(CLI::App& app, TraceOptions& options) {
  CLI::App* cmd = app.add_subcommand(
      "trace", "Look at a recorded trace (WEFT_TRACE=FILE or --trace FILE records one).");
  cmd->require_subcommand(1);
  CLI::App* summary =
      cmd->add_subcommand("summary", "Totals per kernel, effect, dispatch and compile.");
  summary->add_option("file", options.file, "The trace file.")->required();
  summary->add_flag("--json", options.json, "Print one JSON object instead of tables.");
  summary->add_option("-n,--limit", options.limit, "Rows per table (default 20).")
      ->check(CLI::PositiveNumber);
  summary->callback([&] { options.action = "summary"; });
  CLI::App* exporter = cmd->add_subcommand(
      "export", "Write Chrome trace-event JSON (Perfetto, chrome://tracing) with token flows.");
  exporter->add_option("file", options.file, "The trace file.")->required();
  exporter->add_option("-o,--output", options.output, "Where to write the JSON (default: stdout).")
      ->type_name("FILE");
  exporter->callback([&] { options.action = "export"; });
  return cmd;
}

int run_trace(const TraceOptions& options) {
  if (options.action == "summary") return run_summary(options);
  return run_export(options);
}

void add_trace_flag(CLI::App& app, std::string& path) {
  app.add_option("--trace", path,
                 "Record what the command does into FILE (as WEFT_TRACE=FILE): open it with "
                 "weft-monitor FILE, `weft trace summary FILE` or `weft trace export FILE`.")
      ->type_name("FILE");
}

void start_trace(const std::string& path) {
  if (path.empty()) return;
  telemetry::record_to_file(path, telemetry::process_command_line());
}

}  // namespace weft::cli
