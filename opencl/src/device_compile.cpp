// OpenCLDevice::compile: the in-process executable cache, then the persistent cache, then code
// generation and an OpenCL build. Cache trouble never fails a compile (see docs/cache.md).
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <mutex>
#include <string>

#include "cache_writer.h"
#include "codegen_fingerprint.h"
#include "plan_serialization.h"
#include "runtime/fork_guard.h"
#include "tiering/tier_policy.h"
#include "weft/cache/process_cache.h"
#include "weft/error.h"
#include "weft/interp/cost.h"
#include "weft/ir/text.h"
#include "weft/log.h"
#include "weft/opencl/codegen.h"
#include "weft/opencl/device.h"
#include "weft/opencl/executable.h"
#include "weft/opencl/tiering.h"
#include "weft/telemetry/telemetry.h"

namespace weft::opencl {

namespace {

constexpr std::string_view kComponent = "cache";
constexpr std::string_view kTieringComponent = "tiering";

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// Everything besides the graph and the device identity that decides the generated program:
// the code generator's fingerprint (a hash of its sources, made by the build), the OpenCL
// build options and the device facts codegen reads
// (they can differ between machines whose devices share a name, e.g. PoCL's CPU core count).
std::string codegen_options(const DeviceCaps& caps) {
  return std::string("codegen=") + WEFT_CODEGEN_FINGERPRINT + " cl=[" + kProgramBuildOptions +
         "] fp64=" + (caps.fp64 ? "1" : "0") +
         " max_work_group=" + std::to_string(caps.max_work_group_size) +
         " local_mem=" + std::to_string(caps.local_mem_bytes) +
         " compute_units=" + std::to_string(caps.compute_units) +
         " gpu=" + (caps.is_gpu ? "1" : "0") +
         " float_vector=" + std::to_string(caps.native_float_vector_width) +
         " math=" + (caps.builtin_math ? "builtin" : "weft") +
         " deterministic_scatter=" + (caps.deterministic_scatter ? "1" : "0") +
         " int64_atomics=" + (caps.int64_atomics ? "1" : "0");
}

std::int64_t nanoseconds(double seconds) {
  return static_cast<std::int64_t>(seconds * 1e9);
}

// The compile span and its phases (laid end to end from the compile's start, in the order they
// run: plan, codegen, the cache lookup (its own span), build).
void record_compile(OpenCLExecutable& executable, const Graph& graph, telemetry::Id id,
                    std::int64_t start_ns) {
  const CompiledInfo& info = executable.info();
  const telemetry::Id program = executable.telemetry_program(print_graph(graph)).id;
  const telemetry::Track& track = telemetry::this_thread_track();
  telemetry::Span span;
  span.id = id;
  span.kind = telemetry::SpanKind::compile;
  span.track = track;
  span.name = graph.name;
  span.start_ns = start_ns;
  span.end_ns = telemetry::now_ns();
  span.args = {{"device", executable.device().name()},
               {"cache", info.cache_status},
               {"key", info.cache_key},
               {"program", std::to_string(program)},
               {"kernels", std::to_string(info.kernels.size())}};
  telemetry::emit(std::move(span));
  std::int64_t at = start_ns;
  auto phase = [&](const char* name, double seconds) {
    telemetry::Span p;
    p.id = telemetry::next_id();
    p.parent = id;
    p.kind = telemetry::SpanKind::compile_phase;
    p.track = track;
    p.name = name;
    p.start_ns = at;
    p.end_ns = at + nanoseconds(seconds);
    at = p.end_ns;
    telemetry::emit(std::move(p));
  };
  phase("plan", info.compile_time.plan);
  phase("codegen", info.compile_time.codegen);
  at += nanoseconds(info.compile_time.cache_lookup);
  phase("build", info.compile_time.build);
}

void record_lookup(const std::string& function, const std::string& device, telemetry::Id compile,
                   const std::string& key, std::int64_t start_ns, std::int64_t end_ns,
                   std::string_view status, std::string_view reason) {
  telemetry::Span span;
  span.id = telemetry::next_id();
  span.parent = compile;
  span.kind = telemetry::SpanKind::cache_lookup;
  span.track = telemetry::this_thread_track();
  span.name = function;
  span.start_ns = start_ns;
  span.end_ns = end_ns;
  span.args = {{"key", key},
               {"status", std::string(status)},
               {"reason", std::string(reason)},
               {"device", device}};
  telemetry::emit(std::move(span));
}

// The cache_hit_rate counter: hits over lookups in this process so far (every device's, as the
// cache is the process's), counted whether or not anything records. Lookups are once per
// compile, so a lock costs nothing; holding it while emitting queues the samples in order.
void count_lookup(bool hit) {
  static std::mutex mutex;
  static std::uint64_t lookups = 0, hits = 0;
  std::lock_guard lock(mutex);
  ++lookups;
  if (hit) ++hits;
  if (telemetry::enabled())
    telemetry::emit_counter("cache_hit_rate", "", telemetry::now_ns(),
                            static_cast<double>(hits) / static_cast<double>(lookups));
}

std::string milliseconds(double seconds) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f ms", seconds * 1e3);
  return text;
}

// The kernels the driver compiles: one per definition in the source. Kernels whose code another
// already has run as that one (KernelSummary lists them all) and cost the build nothing; a
// molecular-dynamics step lists 195 kernels and defines 40.
std::size_t compiled_kernels(std::string_view source) {
  std::size_t count = 0;
  for (std::size_t at = source.find("__kernel"); at != std::string_view::npos;
       at = source.find("__kernel", at + 1))
    ++count;
  return count;
}

}  // namespace

cache::CacheKeyComponents OpenCLDevice::cache_components(const Graph& graph) const {
  cache::CacheKeyComponents components;
  {
    // The function's name only labels the code, so it stays out of the key.
    Graph unnamed = graph;
    unnamed.name = "main";
    components.ir_text = print_graph(unnamed);
  }
  components.build_options = codegen_options(caps());
  components.platform_name = info_.platform_name;
  components.platform_version = info_.platform_version;
  components.device_name = info_.device_name;
  components.driver_version = info_.driver_version;
  components.opencl_c_version = info_.opencl_c_version;
  components.user_hook = cache::ProcessCache::instance().settings().user_hook;
  components.function_name = graph.name;
  return components;
}

std::shared_ptr<Executable> OpenCLDevice::compile(const Graph& graph) {
  detail::refuse_if_forked(*this);
  std::string text = print_graph(graph);
  // Executables hold their graph's host functions, so equal text with other functions is
  // another executable (the program and its cache entry are still shared).
  for (const auto& callback : graph.callbacks) {
    char id[32];
    std::snprintf(id, sizeof id, "\n#callback %p", static_cast<const void*>(callback.get()));
    text += id;
  }
  if (std::shared_ptr<Executable> found = executables_.find(text)) return found;
  const bool recording = telemetry::enabled();
  const std::int64_t start_ns = recording ? telemetry::now_ns() : 0;
  const telemetry::Id compile_id = recording ? telemetry::next_id() : 0;
  // Compiled outside the lock, as in build_program.
  std::shared_ptr<OpenCLExecutable> executable = compile_with_cache(graph, compile_id);
  if (!executable) {
    executable = build_or_defer(graph, plan_program(graph, caps()));
    executable->set_compile_facts(graph.params.size(), graph.name);
    executable->set_cache_outcome("off", {});
  }
  executable->set_callbacks(graph.callbacks);
  if (recording) record_compile(*executable, graph, compile_id, start_ns);
  // An executable with callbacks is asked for again only by its holders (its key names them).
  return executables_.insert(std::move(text), std::move(executable), graph.callbacks.empty());
}

std::shared_ptr<OpenCLExecutable> OpenCLDevice::compile_with_cache(const Graph& graph,
                                                                   telemetry::Id compile_id) {
  cache::ProcessCache& process_cache = cache::ProcessCache::instance();
  std::shared_ptr<cache::ProgramStore> store = process_cache.store();
  if (!store) return nullptr;

  cache::CacheKeyComponents components = cache_components(graph);
  const std::string key = cache::compute_key(components);
  const std::string what = key + " (" + graph.name + " on " + info_.name + ")";
  // The plan always comes from the graph, hit or miss: codegen takes microseconds, and then no
  // stored byte can decide a buffer size or a launch.
  ProgramPlan plan = plan_program(graph, caps());

  const auto lookup_start = Clock::now();
  const std::int64_t lookup_start_ns = compile_id ? telemetry::now_ns() : 0;
  cache::LookupResult found = store->lookup(components);
  const double lookup_seconds = seconds_since(lookup_start);
  const std::int64_t lookup_end_ns = compile_id ? telemetry::now_ns() : 0;
  auto record = [&](std::string_view status, std::string_view reason) {
    count_lookup(status == "hit");
    if (compile_id)
      record_lookup(graph.name, info_.name, compile_id, key, lookup_start_ns, lookup_end_ns, status,
                    reason);
  };
  switch (found.status) {
    case cache::LookupStatus::error:
      process_cache.give_up(store.get(), found.detail);
      record("error", to_string(found.reason));
      break;
    case cache::LookupStatus::corrupt:
      log::warning(kComponent, found.detail + (store->options().writer
                                                   ? "; compiling again and rewriting it"
                                                   : "; compiling again (this process does not "
                                                     "write the cache, so a writer repairs it)"));
      record("corrupt", to_string(found.reason));
      break;
    case cache::LookupStatus::miss:
      log::debug(kComponent,
                 "lookup " + what + ": miss (" + std::string(to_string(found.reason)) + ")");
      record("miss", to_string(found.reason));
      break;
    case cache::LookupStatus::hit: {
      std::string problem;
      std::optional<ProgramPlan> stored = detail::parse_plan(found.metadata, &problem);
      try {
        if (!stored) throw Error("its launch plan does not parse: " + problem);
        // The binary was built from the stored plan's source; it fits this graph only if that
        // plan is the one codegen makes for it now.
        if (std::string difference = detail::plan_difference(*stored, plan); !difference.empty())
          throw Error("its launch plan is not the one weft generates for this graph (" +
                      difference + ")");
        const auto load_start = Clock::now();
        ClProgram program = build_program_from_binary(found.binary, plan.build_options);
        auto executable = std::make_shared<OpenCLExecutable>(*this, std::move(plan), program);
        const double load_seconds = seconds_since(load_start);
        executable->set_compile_facts(graph.params.size(), graph.name);
        executable->set_compile_time(lookup_seconds, load_seconds);
        executable->set_cache_outcome("hit", key);
        record("hit", to_string(cache::MissReason::none));
        log::debug(kComponent, "lookup " + what + ": hit, " + std::to_string(found.binary.size()) +
                                   " bytes, loaded in " + milliseconds(load_seconds) +
                                   " (compiling took " + milliseconds(found.compile_time_s) + ")");
        return executable;
      } catch (const OutOfMemoryError&) {
        throw;  // the device's problem, not the entry's
      } catch (const Error& e) {
        const bool deleted = store->reject(components);
        record("miss", to_string(cache::MissReason::rejected));
        log::warning(kComponent,
                     "cache entry " + what + " in " + store->path().string() +
                         " is unusable: " + e.what() +
                         (deleted ? "; deleted it, compiling again" : "; compiling again"));
      }
      break;
    }
  }

  auto executable = build_or_defer(graph, std::move(plan));
  executable->set_compile_facts(graph.params.size(), graph.name);
  executable->set_compile_time(lookup_seconds, std::nullopt);
  const bool cached = found.status != cache::LookupStatus::error;
  executable->set_cache_outcome(cached ? "miss" : "off", cached ? key : std::string());
  if (cached && store->options().writer) {
    auto write = std::make_unique<detail::CacheWrite>();
    write->store = store;
    write->components = std::move(components);
    write->key = key;
    write->metadata = detail::serialize_plan(executable->plan());
    // A deferred build fills in its program and adds its build time when it finishes.
    if (executable->built()) write->program = ClProgram::retain(executable->program());
    write->device = id_;
    write->device_label = label();
    write->build_seconds = executable->info().compile_seconds();
    executable->store_after_first_run(std::move(write));
  }
  return executable;
}

std::shared_ptr<OpenCLExecutable> OpenCLDevice::build_or_defer(const Graph& graph,
                                                               ProgramPlan plan) {
  const Tiering mode = tiering();
  if (mode == Tiering::off) return std::make_shared<OpenCLExecutable>(*this, std::move(plan));
  InterpretationEstimate estimate = estimate_interpretation(graph);
  const bool debug = log::enabled(kTieringComponent, log::Level::debug);
  if (!estimate.possible) {
    if (debug)
      log::debug(kTieringComponent, graph.name + " on " + info_.name +
                                        ": building now; the interpreter cannot run it (" +
                                        estimate.why_not + ")");
    return std::make_shared<OpenCLExecutable>(*this, std::move(plan));
  }
  // Fused kernels, but no more than the source defines: the constant per kernel was measured
  // per fused kernel, whose small helpers (a tail, a dot's packing) build with it.
  const std::size_t kernels = std::min(plan.info.kernels.size(), compiled_kernels(plan.source));
  auto policy = std::make_unique<detail::TierPolicy>(mode, std::move(estimate), kernels);
  // A first call the interpreter would take longer over than the build waits for it: build
  // now, as without tiering.
  const bool defer = mode == Tiering::interpreter ||
                     policy->expected_interpret_seconds() <= policy->expected_build_seconds();
  if (debug)
    log::debug(kTieringComponent,
               graph.name + " on " + info_.name + ": the interpreter would take about " +
                   milliseconds(policy->expected_interpret_seconds()) + " (" +
                   std::to_string(static_cast<std::int64_t>(policy->estimate().element_ops)) +
                   " element ops), the build about " +
                   milliseconds(policy->expected_build_seconds()) + " (" + std::to_string(kernels) +
                   " kernels): " + (defer ? "first call on the interpreter" : "building now"));
  if (!defer) return std::make_shared<OpenCLExecutable>(*this, std::move(plan));
  return std::make_shared<OpenCLExecutable>(*this, std::move(plan), graph, std::move(policy));
}

}  // namespace weft::opencl
