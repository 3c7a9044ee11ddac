// jit: trace a function once per abstract signature, compile it, and reuse the executable.
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <source_location>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <vector>

#include "weft/array.h"
#include "weft/backend.h"
#include "weft/compile/tokens.h"
#include "weft/ir/graph.h"
#include "weft/telemetry/telemetry.h"
#include "weft/trace/tree.h"

namespace weft {

struct JitOptions {
  std::string name = {};     // shown in errors and in the IR text; defaults to the call site
  Device* device = nullptr;  // run here; default: the device of the arguments, else default
};

// The result of tracing without running: the lowered graph (effects ordered by tokens, see
// weft/compile/tokens.h) and its text form.
class Lowered {
 public:
  Lowered(Graph graph, std::vector<Array> captured, Device* device)
      : graph_(std::move(graph)), captured_(std::move(captured)), device_(device) {}
  const Graph& graph() const { return graph_; }
  // Arrays the function closed over: the trailing inputs after the arguments' leaves.
  const std::vector<Array>& captured() const { return captured_; }
  std::string as_text() const;
  // Builds for the device the call would have run on.
  std::shared_ptr<Executable> compile() const;

 private:
  Graph graph_;
  std::vector<Array> captured_;
  Device* device_;
};

namespace detail {

// The untyped half of jit: signature cache, tracing and execution.
class JitCore {
 public:
  JitCore(JitOptions options, std::source_location location);

  struct Entry {
    Graph graph;                  // lowered: tokens threaded (thread_effect_tokens)
    TokenSignature tokens;        // its runtime and output tokens
    std::vector<Array> captured;  // trailing inputs hoisted from closed-over arrays
    std::shared_ptr<Executable> executable;
    std::shared_ptr<void> result_proto;  // the traced result, for its container structure
    Device* device = nullptr;
  };
  using TraceFn = std::function<std::shared_ptr<void>(const std::vector<Array>& tracers,
                                                      std::vector<Array>& results)>;

  // Returns the entry for these leaves and static signature, tracing and compiling on a miss.
  // `caller`: the call's line, where a leaf that is an escaped tracer is reported.
  std::shared_ptr<Entry> entry_for(const std::vector<Array>& leaves, const std::string& sig,
                                   const TraceFn& trace, const std::source_location& caller);
  Lowered lower(const std::vector<Array>& leaves, const TraceFn& trace);
  std::vector<Array> execute(const Entry& entry, const std::vector<Array>& leaves);

  int trace_count() const { return trace_count_; }
  int compile_count() const { return compile_count_; }
  const std::string& name() const { return name_; }
  const std::source_location& location() const { return location_; }

 private:
  struct Traced {
    Graph graph;
    std::vector<Array> captured;
    std::shared_ptr<void> proto;
    TokenSignature tokens;
  };
  Traced trace(const std::vector<Array>& leaves, const TraceFn& fn);
  Device* pick_device(const std::vector<Array>& leaves) const;

  JitOptions options_;
  std::source_location location_;
  std::string name_;
  telemetry::CallSite call_site_;  // the function and where jit() made it, for telemetry
  std::mutex mutex_;
  std::unordered_map<std::string, std::shared_ptr<Entry>> cache_;
  int trace_count_ = 0;
  int compile_count_ = 0;
};

}  // namespace detail

bool tracing_active();  // true inside a function being traced on this thread

template <typename F>
class Jitted {
 public:
  Jitted(F f, JitOptions options, std::source_location location)
      : f_(std::move(f)), core_(std::make_shared<detail::JitCore>(std::move(options), location)) {}

  // Constrained, so std::function and overload resolution can ask whether a call would work.
  // Calls with one to four arguments record the caller's line, where an escaped tracer passed
  // as an argument is reported (a defaulted parameter cannot follow a parameter pack).
  template <typename A1>
  requires std::is_invocable_v<const F&, const A1&>
  auto operator()(const A1& a1,
                  std::source_location caller = std::source_location::current()) const {
    return call(caller, a1);
  }
  template <typename A1, typename A2>
  requires std::is_invocable_v<const F&, const A1&, const A2&>
  auto operator()(const A1& a1, const A2& a2,
                  std::source_location caller = std::source_location::current()) const {
    return call(caller, a1, a2);
  }
  template <typename A1, typename A2, typename A3>
  requires std::is_invocable_v<const F&, const A1&, const A2&, const A3&>
  auto operator()(const A1& a1, const A2& a2, const A3& a3,
                  std::source_location caller = std::source_location::current()) const {
    return call(caller, a1, a2, a3);
  }
  template <typename A1, typename A2, typename A3, typename A4>
  requires std::is_invocable_v<const F&, const A1&, const A2&, const A3&, const A4&>
  auto operator()(const A1& a1, const A2& a2, const A3& a3, const A4& a4,
                  std::source_location caller = std::source_location::current()) const {
    return call(caller, a1, a2, a3, a4);
  }
  // No argument, or more than four: an escaped tracer among them is reported at the line that
  // made this function with jit().
  template <typename... Args>
  requires std::is_invocable_v<const F&, const Args&...>
  auto operator()(const Args&... args) const { return call(core_->location(), args...); }

  template <typename... Args>
  requires std::is_invocable_v<const F&, const Args&...> Lowered lower(const Args&... args)
  const {
    using R = std::decay_t<std::invoke_result_t<const F&, const Args&...>>;
    std::vector<Array> leaves;
    std::string sig;
    (TreeTraits<Args>::flatten(args, leaves, sig), ...);
    return core_->lower(leaves, make_trace_fn<R>(args...));
  }

  int trace_count() const { return core_->trace_count(); }
  int compile_count() const { return core_->compile_count(); }

 private:
  template <typename... Args>
  auto call(const std::source_location& caller, const Args&... args) const {
    using R = std::decay_t<std::invoke_result_t<const F&, const Args&...>>;
    // Inside another trace, a jitted function is inlined into it (omnistaging).
    if (tracing_active()) return R(f_(args...));
    std::vector<Array> leaves;
    std::string sig;
    (TreeTraits<Args>::flatten(args, leaves, sig), ...);
    auto entry = core_->entry_for(leaves, sig, make_trace_fn<R>(args...), caller);
    std::vector<Array> outputs = core_->execute(*entry, leaves);
    std::size_t pos = 0;
    return TreeTraits<R>::rebuild(*static_cast<const R*>(entry->result_proto.get()), outputs, pos);
  }

  template <typename R, typename... Args>
  detail::JitCore::TraceFn make_trace_fn(const Args&... args) const {
    return [this, &args...](const std::vector<Array>& tracers, std::vector<Array>& results) {
      std::size_t pos = 0;
      std::tuple<Args...> traced{TreeTraits<Args>::rebuild(args, tracers, pos)...};
      auto result = std::make_shared<R>(std::apply(f_, traced));
      std::string ignored;
      TreeTraits<R>::flatten(*result, results, ignored);
      return std::shared_ptr<void>(result);
    };
  }

  F f_;
  std::shared_ptr<detail::JitCore> core_;
};

template <typename F>
Jitted<F> jit(F f, JitOptions options = {},
              std::source_location location = std::source_location::current()) {
  return Jitted<F>(std::move(f), std::move(options), location);
}

}  // namespace weft
