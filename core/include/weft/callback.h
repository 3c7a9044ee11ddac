// Effects users write: printing from traced code, calling host functions, and waiting for
// effects. They work inside jit, inside control flow and eagerly (an eager call runs as a
// one-op program, so it keeps its place among the effects dispatched before it).
//
//   weft::debug_print("x = {} y = {}", x, y);                    // unordered
//   weft::debug_print("step {}", i, weft::DebugPrintOptions{.ordered = true});
//   Array y = weft::io_callback(read_sensor, weft::ShapeDtype{DType::F32, {3}}, x);
//   Array z = weft::pure_callback(host_eig, weft::ShapeDtype{DType::F32, {4}}, m);
//   weft::effects_barrier();  // every effect dispatched so far has run
//
// Ordered effects of one kind run in program order per user thread, across devices too;
// unordered ones may run in any order. Callbacks receive HostArrays (one per argument) and
// return a HostArray, a std::vector<HostArray> or nothing; the result shapes are declared up
// front, and a callback returning others fails its computation with CallbackException.
#pragma once

#include <functional>
#include <source_location>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "weft/array.h"
#include "weft/ir/host_callback.h"

namespace weft {

struct DebugPrintOptions {
  bool ordered = false;
};

struct CallbackOptions {
  bool ordered = false;
};

// A result's dtype and shape, as declared to io_callback, pure_callback and hcb::call.
struct ShapeDtype {
  DType dtype = DType::F32;
  Shape shape;
  static ShapeDtype like(const Array& a) { return {a.dtype(), a.shape()}; }
};

enum class EffectsBarrierScope {
  AllThreads,  // every effect dispatched by any thread (inside a callback: ThisThread)
  ThisThread,  // the effects this thread dispatched
};

// How deep callbacks may nest: a callback at this depth (the 100th callback running inside
// the ones that dispatched it) cannot dispatch work that has callbacks; that dispatch raises
// CallbackNestingError. Recursion through a callback is capped because every level keeps a
// receiver thread of its own.
inline constexpr int kMaxCallbackNesting = 100;

// Blocks until the effects dispatched so far (on every device) have run and their callbacks
// returned. Raises the first CallbackException among them that no barrier raised before.
void effects_barrier(EffectsBarrierScope scope = EffectsBarrierScope::AllThreads);

// A format string and the line that wrote it (for errors).
struct FormatString {
  std::string_view text;
  std::source_location where;
  template <typename S>
  requires std::is_convertible_v<const S&, std::string_view> FormatString(
      const S& s, std::source_location loc = std::source_location::current())
      : text(s), where(loc) {}
};

namespace detail {

// Stages a host op (see weft/ir/effects.h) into the current trace, or runs it eagerly as a
// one-op program on the arrays' device; returns its array results.
std::vector<Array> bind_host(OpKind op, std::vector<Array> operands, Attrs attrs,
                             std::vector<TensorType> results,
                             std::shared_ptr<const HostCallback> callback, const std::string& api,
                             const std::source_location& loc);

void print_impl(const FormatString& format, std::vector<Array> args,
                const DebugPrintOptions& options);

inline void collect_print_arg(std::vector<Array>& args, DebugPrintOptions&, const Array& a) {
  args.push_back(a);
}
inline void collect_print_arg(std::vector<Array>&, DebugPrintOptions& options,
                              const DebugPrintOptions& o) {
  options = o;
}
template <typename T>
requires std::is_arithmetic_v<T>
void collect_print_arg(std::vector<Array>& args, DebugPrintOptions&, T value) {
  if constexpr (std::is_floating_point_v<T>) {
    args.push_back(Array::scalar(static_cast<double>(value), DType::F32));
  } else if constexpr (std::is_same_v<T, bool>) {
    args.push_back(Array::scalar_int(value ? 1 : 0, DType::Bool));
  } else {
    args.push_back(Array::scalar_int(static_cast<std::int64_t>(value), DType::I32));
  }
}

// What a callback's function returns, as the host arrays it stands for.
template <typename Call>
std::vector<HostArray> results_of(Call&& call) {
  using R = std::invoke_result_t<Call>;
  if constexpr (std::is_void_v<R>) {
    std::forward<Call>(call)();
    return {};
  } else if constexpr (std::is_convertible_v<R, HostArray>) {
    return {HostArray(std::forward<Call>(call)())};
  } else {
    return std::vector<HostArray>(std::forward<Call>(call)());
  }
}

template <std::size_t I>
using HostArg = const HostArray&;

// Adapts a user function taking one HostArray per argument (and, optionally, the device name
// after them) and returning a HostArray, a std::vector<HostArray> or nothing.
template <std::size_t N, typename F>
HostCallback::Function adapt(F fn) {
  return [fn = std::move(fn)](std::vector<HostArray>& args,
                              const HostCallbackContext& context) -> std::vector<HostArray> {
    return [&]<std::size_t... I>(std::index_sequence<I...>) {
      if constexpr (std::is_invocable_v<const F&, HostArg<I>..., const std::string&>) {
        return results_of(
            [&] { return fn(static_cast<const HostArray&>(args[I])..., context.device); });
      } else {
        static_assert(std::is_invocable_v<const F&, HostArg<I>...>,
                      "a callback takes one const HostArray& per argument (and optionally the "
                      "device name, a const std::string&, after them)");
        return results_of([&] { return fn(static_cast<const HostArray&>(args[I])...); });
      }
    }
    (std::make_index_sequence<N>{});
  };
}

std::vector<Array> callback_impl(const char* api, HostCallback::Function function,
                                 std::vector<ShapeDtype> results, std::vector<Array> args,
                                 bool effect, bool ordered, const std::source_location& loc);

inline void collect_callback_arg(std::vector<Array>& args, CallbackOptions&, const Array& a) {
  args.push_back(a);
}
inline void collect_callback_arg(std::vector<Array>&, CallbackOptions& options,
                                 const CallbackOptions& o) {
  options = o;
}

template <typename... Args>
inline constexpr std::size_t kArrayArgs =
    (std::size_t{0} + ... + (std::is_same_v<std::decay_t<Args>, CallbackOptions> ? 0 : 1));

}  // namespace detail

// One declared result, and the line that asked for it (for errors).
struct OneResult {
  ShapeDtype shape;
  std::source_location where;
  OneResult(ShapeDtype s, std::source_location loc = std::source_location::current())
      : shape(std::move(s)), where(loc) {}
};
// Several declared results (possibly none).
struct Results {
  std::vector<ShapeDtype> shapes;
  std::source_location where;
  Results(std::vector<ShapeDtype> s, std::source_location loc = std::source_location::current())
      : shapes(std::move(s)), where(loc) {}
};

// Calls `fn` on the host with the arrays' values; its effect "io_callback" is never removed
// and, with {.ordered = true} last among the arguments, keeps program order.
template <typename F, typename... Args>
Array io_callback(F fn, OneResult result, const Args&... args) {
  std::vector<Array> arrays;
  CallbackOptions options;
  (detail::collect_callback_arg(arrays, options, args), ...);
  return detail::callback_impl(
             "io_callback", detail::adapt<detail::kArrayArgs<Args...>>(std::move(fn)),
             {result.shape}, std::move(arrays), true, options.ordered, result.where)
      .at(0);
}
template <typename F, typename... Args>
std::vector<Array> io_callback(F fn, Results results, const Args&... args) {
  std::vector<Array> arrays;
  CallbackOptions options;
  (detail::collect_callback_arg(arrays, options, args), ...);
  return detail::callback_impl(
      "io_callback", detail::adapt<detail::kArrayArgs<Args...>>(std::move(fn)),
      std::move(results.shapes), std::move(arrays), true, options.ordered, results.where);
}

// Calls a pure host function: no effect, so it may be removed when its result is unused, and
// runs wherever its result is needed.
template <typename F, typename... Args>
Array pure_callback(F fn, OneResult result, const Args&... args) {
  std::vector<Array> arrays{args...};
  return detail::callback_impl("pure_callback", detail::adapt<sizeof...(Args)>(std::move(fn)),
                               {result.shape}, std::move(arrays), false, false, result.where)
      .at(0);
}
template <typename F, typename... Args>
std::vector<Array> pure_callback(F fn, Results results, const Args&... args) {
  std::vector<Array> arrays{args...};
  return detail::callback_impl("pure_callback", detail::adapt<sizeof...(Args)>(std::move(fn)),
                               std::move(results.shapes), std::move(arrays), false, false,
                               results.where);
}

// Prints from traced code once the values are computed: each "{}" is replaced by the next
// array's value ("{{" and "}}" for braces); a DebugPrintOptions may come last. A format whose
// placeholders do not match the arrays is an error when the call is traced.
template <typename... Args>
void debug_print(FormatString format, const Args&... args) {
  std::vector<Array> arrays;
  DebugPrintOptions options;
  (detail::collect_print_arg(arrays, options, args), ...);
  detail::print_impl(format, std::move(arrays), options);
}

}  // namespace weft
