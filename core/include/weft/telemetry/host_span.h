// A span of the calling thread's own work (a wait, a trace), recorded when the scope ends.
#pragma once

#include <string>
#include <utility>

#include "weft/telemetry/telemetry.h"

namespace weft::telemetry {

class HostSpan {
 public:
  // Records nothing unless telemetry is on now.
  HostSpan(SpanKind kind, std::string name, Args args = {}) {
    if (!enabled()) return;
    recording_ = true;
    span_.id = next_id();
    span_.kind = kind;
    span_.name = std::move(name);
    span_.args = std::move(args);
    span_.start_ns = now_ns();
  }
  ~HostSpan() {
    if (!recording_) return;
    span_.track = this_thread_track();
    span_.end_ns = now_ns();
    try {
      emit(std::move(span_));
    } catch (...) {
      // A destructor must not throw; one lost record is acceptable.
    }
  }
  HostSpan(const HostSpan&) = delete;
  HostSpan& operator=(const HostSpan&) = delete;

  bool recording() const { return recording_; }
  Id id() const { return span_.id; }
  void add_arg(std::string key, std::string value) {
    if (recording_) span_.args.emplace_back(std::move(key), std::move(value));
  }

 private:
  bool recording_ = false;
  Span span_;
};

}  // namespace weft::telemetry
