#include "live_connection.h"

#include <QTimerEvent>

#include "live_stream_merger.h"
#include "qt_text.h"
#include "trace_document.h"
#include "weft/telemetry/live.h"

namespace weft::monitor {

LiveConnection::LiveConnection(TraceDocument* document, QObject* parent)
    : QObject(parent), document_(document) {}

LiveConnection::~LiveConnection() = default;

QString LiveConnection::start(const std::filesystem::path& socket) {
  stop();
  try {
    listener_ = std::make_unique<telemetry::LiveListener>(
        socket.empty() ? telemetry::monitor_socket_path() : socket);
  } catch (const std::exception& e) {
    return to_qstring(e.what());
  }
  const std::int64_t session_start = telemetry::now_ns();
  merger_ = std::make_unique<LiveStreamMerger>(session_start);
  document_->startLive(tr("live on %1").arg(socketPath()));
  timer_ = startTimer(kPollIntervalMs);
  Q_EMIT message(tr("Listening on %1: run programs with WEFT_MONITOR=1").arg(socketPath()));
  return {};
}

void LiveConnection::stop() {
  if (!listener_) return;
  poll();  // what arrived before the stop still counts
  killTimer(timer_);
  timer_ = 0;
  listener_.reset();
  merger_.reset();
  Q_EMIT stopped();
}

QString LiveConnection::socketPath() const {
  return listener_ ? to_qstring(listener_->path().string()) : QString();
}

void LiveConnection::timerEvent(QTimerEvent* event) {
  if (event->timerId() == timer_) poll();
}

void LiveConnection::poll() {
  if (!listener_) return;
  std::vector<telemetry::LiveBatch> batches;
  try {
    batches = listener_->poll();
  } catch (const std::exception& e) {
    Q_EMIT message(tr("The live connection failed and stopped: %1").arg(to_qstring(e.what())));
    killTimer(timer_);
    timer_ = 0;
    listener_.reset();
    Q_EMIT stopped();
    return;
  }
  if (batches.empty()) return;
  const std::int64_t arrival = telemetry::now_ns();
  std::vector<telemetry::Span> spans;
  std::vector<telemetry::Edge> edges;
  std::vector<telemetry::Program> programs;
  std::vector<std::uint32_t> processes;  // each span's program: its rows group under it
  std::vector<telemetry::Counter> counters;
  for (telemetry::LiveBatch& batch : batches) {
    LiveStreamMerger::Merged merged = merger_->merge(std::move(batch), arrival);
    for (const std::string& text : merged.messages) Q_EMIT message(to_qstring(text));
    document_->setProcessName(merged.process, merged.process_name);
    processes.insert(processes.end(), merged.spans.size(), merged.process);
    std::move(merged.spans.begin(), merged.spans.end(), std::back_inserter(spans));
    std::move(merged.edges.begin(), merged.edges.end(), std::back_inserter(edges));
    std::move(merged.programs.begin(), merged.programs.end(), std::back_inserter(programs));
    std::move(merged.counters.begin(), merged.counters.end(), std::back_inserter(counters));
  }
  document_->appendCounters(std::move(counters));
  if (!spans.empty() || !edges.empty() || !programs.empty())
    document_->append(std::move(spans), std::move(edges), std::move(programs), processes);
}

}  // namespace weft::monitor
