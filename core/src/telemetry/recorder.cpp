// The queue between recording threads and sinks, and the thread that empties it.
#include <pthread.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <condition_variable>
#include <cstdlib>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "weft/telemetry/counter_gauge.h"
#include "weft/telemetry/telemetry.h"

namespace weft::telemetry {

namespace detail {
std::atomic<bool> g_enabled{false};
}

namespace {

using namespace std::chrono_literals;

struct Batch {
  std::vector<Span> spans;
  std::vector<Edge> edges;
  std::vector<Program> programs;
  std::vector<Counter> counters;
  // Per counter (name and device) in `counters`, the index of its latest sample: a counter
  // sample coalesces with it. Few counters exist (a handful per device), so a scan finds it.
  std::vector<std::size_t> latest_counters;
  bool empty() const {
    return spans.empty() && edges.empty() && programs.empty() && counters.empty();
  }
  std::size_t size() const {
    return spans.size() + edges.size() + programs.size() + counters.size();
  }

  // Merges a sample of `name` on `device` taken at `time_ns` into the latest queued one when
  // that is less than kCounterCoalesceNs older; otherwise returns false.
  bool coalesce(std::string_view name, std::string_view device, std::int64_t time_ns,
                double value) {
    for (std::size_t& index : latest_counters) {
      Counter& latest = counters[index];
      if (latest.name != name || latest.device != device) continue;
      if (time_ns - latest.time_ns < kCounterCoalesceNs) {
        latest.value = value;
        return true;
      }
      index = counters.size();  // the sample about to be appended becomes the latest
      return false;
    }
    latest_counters.push_back(counters.size());
    return false;
  }
};

std::vector<Span>& records(Batch& batch, const Span&) {
  return batch.spans;
}
std::vector<Edge>& records(Batch& batch, const Edge&) {
  return batch.edges;
}
std::vector<Program>& records(Batch& batch, const Program&) {
  return batch.programs;
}

// Wakes the delivery thread early once this many records wait (it wakes every 50 ms anyway).
constexpr std::size_t kWakeAt = 4096;
// At kMaxQueuedRecords (tens of MB, about half a second of the busiest recording) the emitting
// thread delivers.
constexpr std::size_t kBacklogLimit = kMaxQueuedRecords;

class Recorder {
 public:
  template <typename Record>
  void push(Record&& record) {
    bool backlog = false;
    {
      std::lock_guard lock(queue_mutex_);
      records(queue_, record).push_back(std::move(record));
      const std::size_t size = queue_.size();
      if (size == kWakeAt) wake_.notify_one();
      backlog = size >= kBacklogLimit;
    }
    if (backlog) deliver_all();
  }

  // Queues a counter sample, coalesced (see Batch::coalesce). `read` gives the value, read
  // under the queue's lock (see detail::emit_level), as is the time when `time_ns` is nullopt.
  // Never delivers on this thread: samples are often emitted under the caller's own lock (the
  // buffer pool's, the callback queue's), and coalescing bounds them (one per counter per
  // kCounterCoalesceNs); the spans of the same threads make a backlog deliver.
  template <typename Read>
  void push_counter(std::string_view name, std::string_view device,
                    std::optional<std::int64_t> sampled_ns, Read read) {
    std::lock_guard lock(queue_mutex_);
    const std::int64_t time_ns = sampled_ns ? *sampled_ns : now_ns();
    const double value = read();
    if (queue_.coalesce(name, device, time_ns, value)) return;
    queue_.counters.push_back({std::string(name), std::string(device), time_ns, value});
    if (queue_.size() == kWakeAt) wake_.notify_one();
  }

  void push_all(std::vector<Span>&& spans) {
    bool backlog = false;
    {
      std::lock_guard lock(queue_mutex_);
      const std::size_t before = queue_.size();
      if (queue_.spans.empty()) {
        queue_.spans = std::move(spans);
      } else {
        queue_.spans.insert(queue_.spans.end(), std::make_move_iterator(spans.begin()),
                            std::make_move_iterator(spans.end()));
      }
      const std::size_t size = queue_.size();
      if (before < kWakeAt && size >= kWakeAt) wake_.notify_one();
      backlog = size >= kBacklogLimit;
    }
    if (backlog) deliver_all();
  }

  std::size_t queued() {
    std::lock_guard lock(queue_mutex_);
    return queue_.size();
  }

  void add(std::shared_ptr<Sink> sink) {
    {
      std::lock_guard lock(deliver_mutex_);
      sinks_.push_back(std::move(sink));
      detail::g_enabled.store(true, std::memory_order_relaxed);
    }
    std::lock_guard lock(queue_mutex_);
    if (!thread_.joinable() && !stopping_) {
      thread_ = std::thread([this] { loop(); });
      // The thread must end before the process's static objects go (the sinks' libraries).
      static const bool registered = (std::atexit([] { instance().stop(); }), true);
      (void)registered;
    }
  }

  void remove(const std::shared_ptr<Sink>& sink) {
    deliver_all();
    std::lock_guard lock(deliver_mutex_);
    auto found = std::find(sinks_.begin(), sinks_.end(), sink);
    if (found == sinks_.end()) return;
    (*found)->flush();
    sinks_.erase(found);
    detail::g_enabled.store(!sinks_.empty(), std::memory_order_relaxed);
  }

  void add_collector(void (*collector)()) {
    std::lock_guard lock(deliver_mutex_);
    if (std::find(collectors_.begin(), collectors_.end(), collector) == collectors_.end())
      collectors_.push_back(collector);
  }

  void flush() {
    collect();
    deliver_all();
    std::lock_guard lock(deliver_mutex_);
    for (const auto& sink : sinks_) sink->flush();
  }

  void stop() {
    flush();
    std::thread thread;
    {
      std::lock_guard lock(queue_mutex_);
      stopping_ = true;
      thread = std::move(thread_);
      wake_.notify_all();
    }
    if (thread.joinable()) thread.join();
    deliver_all();
    std::lock_guard lock(deliver_mutex_);
    detail::g_enabled.store(false, std::memory_order_relaxed);
    for (const auto& sink : sinks_) sink->flush();
    sinks_.clear();  // closes files whose only owner is the recorder
  }

  static Recorder& instance() {
    // Never destroyed: threads may record while the process exits.
    static Recorder* recorder = new Recorder;
    return *recorder;
  }

 private:
  void loop() {
    // Recording is background work: on a busy machine the program's threads go first, and the
    // records wait in the queue (flush and exit deliver them on the caller's thread).
    sched_param param{};
    pthread_setschedparam(pthread_self(), SCHED_IDLE, &param);
    std::unique_lock lock(queue_mutex_);
    while (!stopping_) {
      wake_.wait_for(lock, 50ms, [&] { return stopping_ || queue_.size() >= kWakeAt; });
      lock.unlock();
      collect();
      deliver_all();
      lock.lock();
    }
  }

  void collect() {
    std::vector<void (*)()> collectors;
    {
      std::lock_guard lock(deliver_mutex_);
      collectors = collectors_;
    }
    for (auto collector : collectors) collector();
  }

  // Takes what is queued and hands it to the sinks; deliveries happen one at a time, in the
  // order they took their batches, so every thread's records stay in emission order.
  void deliver_all() {
    std::lock_guard deliver(deliver_mutex_);
    Batch batch;
    {
      std::lock_guard lock(queue_mutex_);
      std::swap(batch, queue_);
    }
    if (batch.empty()) return;
    for (const auto& sink : sinks_) {
      sink->write(batch.spans, batch.edges, batch.programs);
      if (!batch.counters.empty()) sink->write_counters(batch.counters);
    }
  }

  std::mutex queue_mutex_;  // queue_, thread_, stopping_
  Batch queue_;
  std::condition_variable wake_;
  std::thread thread_;
  bool stopping_ = false;
  std::mutex deliver_mutex_;  // sinks_, collectors_, and one delivery at a time
  std::vector<std::shared_ptr<Sink>> sinks_;
  std::vector<void (*)()> collectors_;
};

thread_local const CallSite* t_call_site = nullptr;

struct ThreadTrack {
  Track track;
  bool named = false;
};
thread_local ThreadTrack t_track;
std::atomic<int> g_thread_count{0};

bool is_main_thread() {
  return getpid() == static_cast<pid_t>(syscall(SYS_gettid));
}

}  // namespace

Id next_id() {
  static std::atomic<Id> next{1};
  return next.fetch_add(1, std::memory_order_relaxed);
}

void emit(Span span) {
  Recorder::instance().push(std::move(span));
}

void emit(Edge edge) {
  Recorder::instance().push(std::move(edge));
}

void emit(Program program) {
  Recorder::instance().push(std::move(program));
}

void emit_counter(std::string_view name, std::string_view device, std::int64_t time_ns,
                  double value) {
  Recorder::instance().push_counter(name, device, time_ns, [value] { return value; });
}

namespace detail {
void emit_level(const std::string& name, const std::string& device,
                const std::atomic<std::int64_t>& level) {
  Recorder::instance().push_counter(name, device, std::nullopt, [&] {
    return static_cast<double>(level.load(std::memory_order_relaxed));
  });
}
}  // namespace detail

void emit(std::vector<Span>&& spans) {
  if (!spans.empty()) Recorder::instance().push_all(std::move(spans));
}

const Track& this_thread_track() {
  ThreadTrack& t = t_track;
  if (!t.named) {
    const int number = ++g_thread_count;
    t.track.kind = TrackKind::host_thread;
    t.track.name = (is_main_thread() ? "main" : "thread") + std::string(" (thread ") +
                   std::to_string(number) + ")";
    t.named = true;
  }
  return t.track;
}

void set_thread_name(std::string name, TrackKind kind, std::string device) {
  ThreadTrack& t = t_track;
  const int number = ++g_thread_count;
  t.track.kind = kind;
  t.track.name = std::move(name) + " (thread " + std::to_string(number) + ")";
  t.track.device = std::move(device);
  t.named = true;
}

ScopedCallSite::ScopedCallSite(const CallSite* site) : previous_(t_call_site) {
  t_call_site = site;
}

ScopedCallSite::~ScopedCallSite() {
  t_call_site = previous_;
}

const CallSite* current_call_site() {
  return t_call_site;
}

void add_sink(std::shared_ptr<Sink> sink) {
  if (sink) Recorder::instance().add(std::move(sink));
}

void remove_sink(const std::shared_ptr<Sink>& sink) {
  Recorder::instance().remove(sink);
}

void flush() {
  Recorder::instance().flush();
}

std::size_t queued() {
  return Recorder::instance().queued();
}

void add_collector(void (*collector)()) {
  Recorder::instance().add_collector(collector);
}

}  // namespace weft::telemetry
