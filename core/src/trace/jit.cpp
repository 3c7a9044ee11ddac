#include "weft/trace/jit.h"

#include "trace/array_impl.h"
#include "trace/effect_tokens.h"
#include "weft/compile/pipeline.h"
#include "weft/error.h"
#include "weft/ir/text.h"
#include "weft/telemetry/host_span.h"
#include "weft/trace/trace.h"

namespace weft {

std::string Lowered::as_text() const {
  return print_graph(graph_);
}

std::shared_ptr<Executable> Lowered::compile() const {
  Device& d = device_ ? *device_ : default_device();
  return d.compile(graph_);
}

namespace detail {
namespace {

// A default function name from the jit call site: "jit_demo_cpp_42".
std::string default_name(const std::source_location& loc) {
  std::string file = loc.file_name();
  if (auto slash = file.find_last_of('/'); slash != std::string::npos)
    file = file.substr(slash + 1);
  std::string name = "jit_";
  for (char c : file) name += (std::isalnum(static_cast<unsigned char>(c)) ? c : '_');
  return name + "_" + std::to_string(loc.line());
}

std::string leaf_signature(const Array& a, std::size_t index, const std::source_location& caller) {
  if (!a.valid())
    throw InvalidArgumentError("jit: argument leaf " + std::to_string(index) +
                               " is an empty Array");
  const ArrayImpl& impl = *a.impl();
  check_not_escaped(impl, caller);
  std::string s(dtype_name(impl.dtype));
  s += shape_to_string(impl.shape);
  if (impl.kind == ArrayImpl::Kind::Concrete) s += "@" + impl.buffer->device().name();
  return s;
}

}  // namespace

JitCore::JitCore(JitOptions options, std::source_location location)
    : options_(std::move(options)), location_(location) {
  name_ = options_.name.empty() ? default_name(location_) : options_.name;
  std::string file = location_.file_name();
  if (auto slash = file.find_last_of('/'); slash != std::string::npos) file.erase(0, slash + 1);
  call_site_ = {name_, file + ":" + std::to_string(location_.line())};
}

Device* JitCore::pick_device(const std::vector<Array>& leaves) const {
  if (options_.device) return options_.device;
  for (const Array& a : leaves)
    if (a.is_concrete()) return &a.impl()->buffer->device();
  return &default_device();
}

JitCore::Traced JitCore::trace(const std::vector<Array>& leaves, const TraceFn& fn) {
  telemetry::HostSpan span(telemetry::SpanKind::compile_phase, "trace",
                           {{"function", name_}, {"location", call_site_.location}});
  TraceScope scope(name_, location_);
  std::vector<Array> tracers;
  tracers.reserve(leaves.size());
  for (const Array& a : leaves) tracers.push_back(scope.add_parameter({a.dtype(), a.shape()}));
  std::vector<Array> results;
  std::shared_ptr<void> proto = fn(tracers, results);
  Graph& g = scope.state()->graph;
  for (const Array& r : results) g.outputs.push_back(scope.stage_output(r, location_));
  ++trace_count_;
  // Compilers see the lowered form: effects ordered by tokens (a pure function is unchanged).
  // The device's compile runs the pipeline's later passes.
  Lowering lowered = weft::lower(g.canonicalized(), {.last = Pass::EffectTokens});
  return Traced{std::move(lowered.graph), scope.state()->captured, std::move(proto),
                std::move(lowered.tokens)};
}

std::shared_ptr<JitCore::Entry> JitCore::entry_for(const std::vector<Array>& leaves,
                                                   const std::string& sig, const TraceFn& fn,
                                                   const std::source_location& caller) {
  std::string key = sig + "|";
  for (std::size_t i = 0; i < leaves.size(); ++i) key += leaf_signature(leaves[i], i, caller) + ";";
  std::lock_guard lock(mutex_);
  if (auto it = cache_.find(key); it != cache_.end()) return it->second;
  Traced traced = trace(leaves, fn);
  auto entry = std::make_shared<Entry>();
  entry->device = pick_device(leaves);
  entry->executable = entry->device->compile(traced.graph);
  ++compile_count_;
  entry->graph = std::move(traced.graph);
  entry->tokens = std::move(traced.tokens);
  entry->captured = std::move(traced.captured);
  entry->result_proto = std::move(traced.proto);
  cache_.emplace(std::move(key), entry);
  return entry;
}

Lowered JitCore::lower(const std::vector<Array>& leaves, const TraceFn& fn) {
  std::lock_guard lock(mutex_);
  Traced traced = trace(leaves, fn);
  return Lowered(std::move(traced.graph), std::move(traced.captured), pick_device(leaves));
}

std::vector<Array> JitCore::execute(const Entry& entry, const std::vector<Array>& leaves) {
  Device& device = *entry.device;
  std::vector<std::shared_ptr<Buffer>> inputs;
  inputs.reserve(leaves.size() + entry.captured.size());
  auto add_input = [&](const Array& a, const std::string& what) {
    const ArrayImpl& impl = *a.impl();
    if (impl.kind == ArrayImpl::Kind::Concrete) {
      if (&impl.buffer->device() != &device)
        throw InvalidArgumentError("jit '" + name_ + "': " + what + " lives on " +
                                   impl.buffer->device().name() + " but the function runs on " +
                                   device.name() + "; move it with device_put first");
      inputs.push_back(impl.buffer);
    } else {
      inputs.push_back(device_put(a, device).impl()->buffer);
    }
  };
  for (std::size_t i = 0; i < leaves.size(); ++i)
    add_input(leaves[i], "argument leaf " + std::to_string(i));
  for (std::size_t i = 0; i < entry.captured.size(); ++i)
    add_input(entry.captured[i], "a captured array");
  // The device runtime labels the dispatch's telemetry with the function and where it was made.
  telemetry::ScopedCallSite site(&call_site_);
  auto buffers = run_with_effect_tokens(*entry.executable, device, entry.tokens, std::move(inputs));
  std::vector<Array> outputs;
  outputs.reserve(buffers.size());
  for (std::size_t i = 0; i < buffers.size(); ++i) {
    const Node& n = entry.graph.node(entry.graph.outputs[i]);
    outputs.push_back(make_concrete(std::move(buffers[i]), n.dtype, n.shape));
  }
  return outputs;
}

}  // namespace detail
}  // namespace weft
