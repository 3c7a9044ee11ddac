// Attaching live: listens on the monitor socket and, every 50 ms, moves what connected
// programs sent into the document (one append per poll, however many programs).
#pragma once

#include <QObject>
#include <QString>
#include <filesystem>
#include <memory>

namespace weft::telemetry {
class LiveListener;
}

namespace weft::monitor {

class LiveStreamMerger;
class TraceDocument;

class LiveConnection : public QObject {
  Q_OBJECT

 public:
  static constexpr int kPollIntervalMs = 50;

  explicit LiveConnection(TraceDocument* document, QObject* parent = nullptr);
  ~LiveConnection() override;

  // Starts listening on `socket` (empty: the default path) and empties the document. Returns
  // an error message, empty on success.
  QString start(const std::filesystem::path& socket = {});
  void stop();
  bool isActive() const { return listener_ != nullptr; }
  QString socketPath() const;
  // Reads what arrived now (the timer does this every kPollIntervalMs).
  void poll();

 Q_SIGNALS:
  // Connections opening and closing, malformed records, a failing socket.
  void message(const QString& text);
  void stopped();

 private:
  TraceDocument* document_;
  std::unique_ptr<telemetry::LiveListener> listener_;
  std::unique_ptr<LiveStreamMerger> merger_;
  int timer_ = 0;

  void timerEvent(QTimerEvent* event) override;
};

}  // namespace weft::monitor
