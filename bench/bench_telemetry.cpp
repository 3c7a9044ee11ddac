// Telemetry's cost on the core dispatch path: a jitted x + 1 on 16 floats, called and waited
// for, with recording off (no sink: one relaxed atomic load per would-be record), on into a
// trace file (WEFT_TRACE's sink: the dispatch, kernel, transfer and wait spans of every call
// are queued, profiled and written to SQLite by the telemetry thread), and on into a sink that
// drops everything (the recording threads' share alone).
//
// Goal (issue 11): on, at most 10% over off. Rounds interleave the modes so machine load hits
// them alike; a sink is installed and removed (with its flush) outside the timed calls.
#include <unistd.h>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "common.h"
#include "weft/telemetry/telemetry.h"
#include "weft/telemetry/trace_file.h"
#include "weft/weft.h"

namespace {

using weft::Array;
using Clock = std::chrono::steady_clock;

constexpr int kCallsPerRound = 2000;
constexpr int kRounds = 15;

// Counts what it is given and keeps one round's spans to time the file writer on them alone.
class DroppingSink final : public weft::telemetry::Sink {
 public:
  void write(std::span<const weft::telemetry::Span> spans, std::span<const weft::telemetry::Edge>,
             std::span<const weft::telemetry::Program>) override {
    records_ += spans.size();
    if (keep_) kept_.insert(kept_.end(), spans.begin(), spans.end());
  }
  std::size_t records_ = 0;
  bool keep_ = false;
  std::vector<weft::telemetry::Span> kept_;
};

// The trace file writer's own cost per span (the telemetry thread's CPU time per record).
double writer_seconds_per_span(std::vector<weft::telemetry::Span> spans,
                               const std::filesystem::path& file) {
  constexpr int kRepeats = 20;
  auto sink = std::make_shared<weft::telemetry::TraceFileSink>(file, "bench_telemetry writer");
  weft::telemetry::Id next = 1;
  const auto start = Clock::now();
  for (int r = 0; r < kRepeats; ++r) {
    for (auto& span : spans) span.id = next++;
    sink->write(spans, {}, {});
  }
  sink->flush();
  return std::chrono::duration<double>(Clock::now() - start).count() /
         (static_cast<double>(spans.size()) * kRepeats);
}

auto add_one = weft::jit([](const Array& x) { return x + 1.0f; }, {.name = "add_one"});

// Seconds per call over one round.
double timed_round(const Array& x) {
  const auto start = Clock::now();
  for (int i = 0; i < kCallsPerRound; ++i) add_one(x).block_until_ready();
  return std::chrono::duration<double>(Clock::now() - start).count() / kCallsPerRound;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main() {
  using namespace weft;
  std::printf("device: %s\n", bench::device_line().c_str());
  const std::filesystem::path file =
      std::filesystem::temp_directory_path() /
      ("weft-bench-telemetry-" + std::to_string(getpid()) + ".wefttrace");
  const Array x = Array::from_vector<float>({16}, std::vector<float>(16, 1.0f));
  for (int i = 0; i < 200; ++i) add_one(x).block_until_ready();  // compile and warm up

  std::vector<double> off, to_file, dropped;
  std::size_t file_spans = 0;
  std::vector<telemetry::Span> one_round;
  for (int round = 0; round < kRounds; ++round) {
    off.push_back(timed_round(x));
    {
      auto sink = std::make_shared<telemetry::TraceFileSink>(file, "bench_telemetry");
      telemetry::add_sink(sink);
      to_file.push_back(timed_round(x));
      telemetry::remove_sink(sink);
    }
    {
      auto sink = std::make_shared<DroppingSink>();
      sink->keep_ = round == 0;
      telemetry::add_sink(sink);
      dropped.push_back(timed_round(x));
      telemetry::remove_sink(sink);
      file_spans = sink->records_;
      if (round == 0) one_round = std::move(sink->kept_);
    }
  }
  const telemetry::Trace trace = telemetry::read_trace(file);
  std::filesystem::remove(file);
  const double writer_per_span = writer_seconds_per_span(std::move(one_round), file);
  std::filesystem::remove(file);
  const double t_off = median(off), t_file = median(to_file), t_drop = median(dropped);
  std::printf("\ncalls per round %d, rounds %d (modes interleaved); spans per call %.1f\n",
              kCallsPerRound, kRounds, static_cast<double>(trace.spans.size()) / kCallsPerRound);
  std::printf("  recording off         %7.2f us/call\n", t_off * 1e6);
  std::printf("  recording to a file   %7.2f us/call  (%.3fx off)\n", t_file * 1e6, t_file / t_off);
  std::printf("  recording, dropped    %7.2f us/call  (%.3fx off; %zu spans a round)\n",
              t_drop * 1e6, t_drop / t_off, file_spans);
  std::printf("  trace file writer     %7.3f us/span of the telemetry thread's time\n",
              writer_per_span * 1e6);
  bench::print_summary({{"telemetry on (trace file), dispatch x+1 f32[16]",
                         bench::format(t_file * 1e6, 2) + " us/call",
                         bench::format(t_off * 1e6, 2) + " us/call (off)",
                         bench::format(t_file / t_off, 3) + "x on/off", "<= 1.10x",
                         bench::met(t_file / t_off <= 1.10)}});
  return 0;
}
