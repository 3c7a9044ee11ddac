#include "synthetic_trace.h"

#include <algorithm>
#include <random>

#include "weft/telemetry/telemetry.h"
#include "weft/telemetry/trace_file.h"

namespace weft::monitor::testing {

namespace {

constexpr std::int64_t kUs = 1000;
constexpr std::int64_t kMs = 1000 * kUs;

// Spans are given relative to the recording start; the sink stores times relative to its
// creation, so the absolute host times are placed just after that.
std::vector<Span> absolute(const std::vector<Span>& spans, std::int64_t origin) {
  std::vector<Span> result = spans;
  for (Span& span : result) {
    span.start_ns += origin;
    span.end_ns += origin;
  }
  return result;
}

}  // namespace

Track host_track(const std::string& name) {
  return Track{TrackKind::host_thread, name, ""};
}

Track queue_track(const std::string& device) {
  return Track{TrackKind::queue, device + " queue", device};
}

Track callback_track(const std::string& device, int thread) {
  return Track{TrackKind::callback,
               "callbacks " + device + " level 0 (thread " + std::to_string(thread) + ")", device};
}

Track runtime_track(const std::string& device, int thread) {
  return Track{TrackKind::runtime, "runtime " + device + " (thread " + std::to_string(thread) + ")",
               device};
}

Track cache_writer_track() {
  return Track{TrackKind::cache_writer, "cache writer (thread 9)", ""};
}

Id TraceBuilder::add(SpanKind kind, const Track& track, const std::string& name,
                     std::int64_t start_ns, std::int64_t end_ns, telemetry::Args args, Id parent) {
  Span span;
  span.id = spans_.size() + 1;
  span.parent = parent;
  span.kind = kind;
  span.track = track;
  span.name = name;
  span.start_ns = start_ns;
  span.end_ns = end_ns;
  span.args = std::move(args);
  spans_.push_back(std::move(span));
  return spans_.back().id;
}

Id TraceBuilder::add_callback(const Track& track, const std::string& name,
                              const std::string& effect, bool ordered, std::int64_t seq,
                              const std::string& thread, std::int64_t start_ns, std::int64_t end_ns,
                              Id parent, const std::string& status) {
  const Id id = add(SpanKind::callback, track, name, start_ns, end_ns,
                    {{"thread", thread},
                     {"ordered", ordered ? "true" : "false"},
                     {"device", track.device},
                     {"shapes", "f32[3], f32[]"},
                     {"status", status},
                     {"receive_wait_ns", "1500"}},
                    parent);
  spans_.back().effect = effect;
  spans_.back().seq = seq;
  return id;
}

void TraceBuilder::edge(Id from, Id to, const std::string& effect) {
  edges_.push_back({from, to, effect});
}

void TraceBuilder::program(telemetry::Program program) {
  programs_.push_back(std::move(program));
}

void TraceBuilder::write(const std::filesystem::path& path) const {
  telemetry::TraceFileSink sink(path, "synthetic test trace");
  const std::int64_t origin = telemetry::now_ns();
  const std::vector<Span> spans = absolute(spans_, origin);
  sink.write(spans, edges_, programs_);
  sink.flush();
}

TraceBuilder demo_trace(DemoIds* ids_out) {
  DemoIds ids;
  TraceBuilder b;
  const Track main = host_track("main (thread 1)");
  const Track worker = host_track("worker (thread 2)");
  const Track q0 = queue_track("cpu:0"), q1 = queue_track("cpu:1");
  const Track c0 = callback_track("cpu:0", 5), c1 = callback_track("cpu:1", 6);
  const Track r0 = runtime_track("cpu:0", 4);
  ids.missed_key = "0123456789abcdef0123456789abcdef";
  ids.hit_key = "fedcba9876543210fedcba9876543210";

  b.program(
      {1,
       "mlp",
       "cpu:0",
       ids.missed_key,
       "miss",
       "%0 = dot(%a, %b)\n%1 = add(%0, %c)\n%2 = relu(%1)\n",
       "__kernel void mlp_k0(__global const float* a, __global float* out) {\n"
       "  out[get_global_id(0)] = fmax(a[get_global_id(0)], 0.0f);\n}\n",
       {{"mlp_k0", "elementwise", {"dot", "add", "relu"}}, {"mlp_k1", "reduce", {"reduce_sum"}}}});
  b.program({2,
             "softmax",
             "cpu:1",
             ids.hit_key,
             "hit",
             "%0 = exp(%x)\n",
             "__kernel void softmax_k0(__global float* x) {}\n",
             {{"softmax_k0", "elementwise", {"exp", "div"}}}});

  // Compiles: mlp misses the cache on main, softmax hits it on worker.
  ids.compile_mlp =
      b.add(SpanKind::compile, main, "mlp", 0, 5 * kMs,
            {{"device", "cpu:0"}, {"cache", "miss"}, {"key", ids.missed_key}, {"program", "1"}});
  const std::int64_t phases[][2] = {{0, 1 * kMs},
                                    {1 * kMs, 1500 * kUs},
                                    {1500 * kUs, 2500 * kUs},
                                    {2500 * kUs, 2600 * kUs},
                                    {2600 * kUs, 5 * kMs}};
  const char* phase_names[] = {"trace", "plan", "codegen", "cache lookup", "build"};
  for (int p = 0; p < 5; ++p)
    b.add(SpanKind::compile_phase, main, phase_names[p], phases[p][0], phases[p][1], {},
          ids.compile_mlp);
  ids.lookup_miss = b.add(
      SpanKind::cache_lookup, main, "mlp", 2500 * kUs, 2600 * kUs,
      {{"key", ids.missed_key}, {"status", "miss"}, {"reason", "not_found"}, {"device", "cpu:0"}});
  const Id compile_softmax =
      b.add(SpanKind::compile, worker, "softmax", 500 * kUs, 1500 * kUs,
            {{"device", "cpu:1"}, {"cache", "hit"}, {"key", ids.hit_key}, {"program", "2"}});
  ids.lookup_hit =
      b.add(SpanKind::cache_lookup, worker, "softmax", 600 * kUs, 700 * kUs,
            {{"key", ids.hit_key}, {"status", "hit"}, {"reason", "none"}, {"device", "cpu:1"}},
            compile_softmax);

  // Dispatches with their kernels, transfers and print callbacks.
  std::vector<Id> worker_by_program_order;
  for (int i = 0; i < kDemoDispatches; ++i) {
    const std::int64_t t = 6 * kMs + i * 400 * kUs;
    const Id d_main = b.add(SpanKind::dispatch, main, "mlp", t, t + 60 * kUs,
                            {{"device", "cpu:0"}, {"location", "demo.cpp:42"}, {"program", "1"}});
    if (i == 0) ids.first_mlp_dispatch = d_main;
    b.add(SpanKind::transfer, q0, "upload", t + 10 * kUs, t + 20 * kUs,
          {{"bytes", "4096"}, {"device", "cpu:0"}}, d_main);
    const Id k0 = b.add(SpanKind::kernel, q0, "mlp_k0", t + 30 * kUs, t + 90 * kUs,
                        {{"device", "cpu:0"},
                         {"program", "1"},
                         {"fused_ops", "dot,add,relu"},
                         {"global_size", "1024"},
                         {"local_size", "64"},
                         {"queue_wait_ns", "12000"},
                         {"submit_wait_ns", "3000"}},
                        d_main);
    if (i == 0) ids.first_mlp_kernel = k0;
    b.add(SpanKind::kernel, q0, "mlp_k1", t + 95 * kUs, t + 130 * kUs,
          {{"device", "cpu:0"},
           {"program", "1"},
           {"fused_ops", "reduce_sum"},
           {"global_size", "64"},
           {"local_size", "64"},
           {"queue_wait_ns", "2000"},
           {"submit_wait_ns", "1000"}},
          d_main);
    ids.main_prints.push_back(b.add_callback(c0, "debug_print", "print", true, 2 * i + 1,
                                             "main (thread 1)", t + 140 * kUs, t + 170 * kUs,
                                             d_main));
    ids.logs.push_back(b.add_callback(c0, "log_metrics", "log", false, 2 * i + 2, "main (thread 1)",
                                      // The 3rd and 4th logs ran in swapped order (allowed).
                                      t + (i == 2   ? 600
                                           : i == 3 ? 175
                                                    : 180) *
                                              kUs,
                                      t + (i == 2   ? 620
                                           : i == 3 ? 178
                                                    : 200) *
                                              kUs,
                                      d_main));

    const std::int64_t u = t + 100 * kUs;
    const Id d_worker = b.add(SpanKind::dispatch, worker, "softmax", u, u + 50 * kUs,
                              {{"device", "cpu:1"}, {"location", "demo.cpp:57"}, {"program", "2"}});
    b.add(SpanKind::kernel, q1, "softmax_k0", u + 20 * kUs, u + 80 * kUs,
          {{"device", "cpu:1"},
           {"program", "2"},
           {"fused_ops", "exp,div"},
           {"global_size", "256"},
           {"local_size", "32"},
           {"queue_wait_ns", "5000"},
           {"submit_wait_ns", "2000"}},
          d_worker);
    // The worker's 4th and 5th prints (i = 3, 4) ran in swapped order: a bug to flag.
    const std::int64_t start = u + 100 * kUs +
                               (i == 3   ? 400 * kUs
                                : i == 4 ? -400 * kUs + 300 * kUs
                                         : 0);
    const bool fails = i == 6;
    const Id cb =
        b.add_callback(c1, "debug_print", "print", true, i + 1, "worker (thread 2)", start,
                       start + 25 * kUs, d_worker, fails ? "failed: callback raised boom" : "ok");
    if (fails) ids.failed_callback = cb;
    ids.worker_prints.push_back(cb);
  }
  for (std::size_t i = 1; i < ids.main_prints.size(); ++i)
    b.edge(ids.main_prints[i - 1], ids.main_prints[i], "print");
  for (std::size_t i = 1; i < ids.worker_prints.size(); ++i)
    b.edge(ids.worker_prints[i - 1], ids.worker_prints[i], "print");

  for (int i = 0; i < 4; ++i)
    b.add(SpanKind::loop_iteration, r0, "iteration", 9 * kMs + i * 100 * kUs,
          9 * kMs + i * 100 * kUs + 80 * kUs, {{"index", std::to_string(i)}});
  b.add(SpanKind::cache_store, cache_writer_track(), "mlp", 6 * kMs, 6500 * kUs,
        {{"key", ids.missed_key}, {"status", "written"}, {"bytes", "20480"}});
  b.add(SpanKind::barrier_wait, main, "effects_barrier", 10 * kMs, 10500 * kUs);
  b.add(SpanKind::array_wait, worker, "to_host", 10 * kMs, 10200 * kUs);
  if (ids_out) *ids_out = ids;
  return b;
}

void write_large_trace(const std::filesystem::path& path, std::size_t span_count) {
  telemetry::TraceFileSink sink(path, "synthetic large trace");
  const std::int64_t origin = telemetry::now_ns();
  std::mt19937_64 random(42);
  std::vector<Track> hosts, queues, callbacks, runtimes;
  for (int i = 0; i < 8; ++i)
    hosts.push_back(
        host_track("host " + std::to_string(i) + " (thread " + std::to_string(i + 1) + ")"));
  for (int i = 0; i < 4; ++i) {
    const std::string device = "gpu:" + std::to_string(i);
    queues.push_back(queue_track(device));
    callbacks.push_back(callback_track(device, 20 + i));
  }
  runtimes.push_back(runtime_track("gpu:0", 30));
  runtimes.push_back(runtime_track("gpu:1", 31));

  // Each step: one dispatch, two kernels, one callback (with an edge to the previous callback
  // of its stream) and, every 8th step, a loop iteration: about 4.1 spans.
  std::vector<Span> chunk;
  std::vector<telemetry::Edge> edges;
  constexpr std::size_t kChunk = 50000;
  std::vector<std::int64_t> host_time(hosts.size(), 0), queue_time(queues.size(), 0),
      callback_time(callbacks.size(), 0), runtime_time(runtimes.size(), 0);
  std::vector<Id> last_callback(hosts.size(), 0);
  std::vector<std::int64_t> seq(hosts.size(), 0);
  Id next = 1;
  std::size_t made = 0;
  std::uniform_int_distribution<int> jitter(0, 2000);
  auto push = [&](SpanKind kind, const Track& track, std::string name, std::int64_t start,
                  std::int64_t end, telemetry::Args args, Id parent) {
    Span span;
    span.id = next++;
    span.parent = parent;
    span.kind = kind;
    span.track = track;
    span.name = std::move(name);
    span.start_ns = origin + start;
    span.end_ns = origin + end;
    span.args = std::move(args);
    chunk.push_back(std::move(span));
    ++made;
    return chunk.back().id;
  };
  std::size_t step = 0;
  while (made < span_count) {
    const std::size_t h = step % hosts.size();
    const std::size_t q = step % queues.size();
    const std::int64_t t = host_time[h] + 1000 + jitter(random);
    const Id dispatch = push(SpanKind::dispatch, hosts[h], "step_" + std::to_string(h), t, t + 3000,
                             {{"device", queues[q].device}, {"location", "model.cpp:10"}}, 0);
    host_time[h] = t + 3000;
    std::int64_t k = std::max(queue_time[q], t + 1000);
    for (int kernel = 0; kernel < 2 && made < span_count; ++kernel) {
      const std::int64_t length = 2000 + jitter(random) * 4;
      push(SpanKind::kernel, queues[q], kernel == 0 ? "fused_matmul_add" : "reduce_max", k,
           k + length, {{"device", queues[q].device}, {"queue_wait_ns", "1000"}}, dispatch);
      k += length + 200;
    }
    queue_time[q] = k;
    if (made < span_count) {
      const std::int64_t c = std::max(callback_time[q], k + 500);
      const Id callback =
          push(SpanKind::callback, callbacks[q], "debug_print", c, c + 1500,
               {{"thread", hosts[h].name}, {"ordered", "true"}, {"status", "ok"}}, dispatch);
      chunk.back().effect = "print";
      chunk.back().seq = ++seq[h];
      callback_time[q] = c + 1500;
      if (last_callback[h] != 0) edges.push_back({last_callback[h], callback, "print"});
      last_callback[h] = callback;
    }
    if (step % 8 == 0 && made < span_count) {
      const std::size_t r = step / 8 % runtimes.size();
      const std::int64_t s = std::max(runtime_time[r], t);
      push(SpanKind::loop_iteration, runtimes[r], "iteration", s, s + 4000,
           {{"index", std::to_string(step / 8)}}, dispatch);
      runtime_time[r] = s + 4000;
    }
    ++step;
    if (chunk.size() >= kChunk) {
      sink.write(chunk, edges, {});
      chunk.clear();
      edges.clear();
    }
  }
  sink.write(chunk, edges, {});
  sink.flush();
}

}  // namespace weft::monitor::testing
