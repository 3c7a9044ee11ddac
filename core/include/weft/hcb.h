// The host_callback API of JAX (jax.experimental.host_callback), in C++. Every call here
// has the ordered effect "host_callback": taps and calls run in program order per thread.
//
//   Array y = hcb::call(host_eig, m, ShapeDtype{DType::F32, {4}});
//   Array x2 = hcb::id_tap([](const HostArray& v) { log(v); }, x);  // returns x
//   hcb::id_print(x, {.what = "x"});                                // prints "what: x : ..."
//   hcb::barrier_wait();                                            // all taps have run
//
// id_tap and id_print let the device go on once their arguments are copied out; call makes
// the computations that use its result wait for it. A callback that throws, or returns the
// wrong shape, raises CallbackException at the next wait on the computation's results or at
// the next barrier_wait; earlier and later taps still run.
#pragma once

#include <optional>
#include <ostream>
#include <source_location>
#include <string>
#include <vector>

#include "weft/callback.h"

namespace weft::hcb {

using weft::CallbackException;

struct CallOptions {
  bool call_with_device = false;  // pass the device name ("cpu:0") after the argument
};

struct TapOptions {
  std::optional<Array> result = std::nullopt;  // returned instead of the argument
  bool tap_with_device = false;                // pass the device name after the argument
};

struct IdPrintOptions {
  std::string what;                       // printed before the value: "what: <what> : <value>"
  std::ostream* output_stream = nullptr;  // default: the debug print stream (weft/debug.h)
  std::optional<Array> result = std::nullopt;
  bool tap_with_device = false;  // prefixes "device: cpu:0 "
};

// Calls `fn` on the host with the value of `arg` and returns its result, which must have the
// declared dtype and shape. fn: HostArray(const HostArray&), or with call_with_device
// HostArray(const HostArray&, const std::string& device).
Array call(const std::function<HostArray(const HostArray&, const std::string&)>& fn,
           const Array& arg, OneResult result_shape, CallOptions options);
template <typename F>
Array call(F fn, const Array& arg, OneResult result_shape, CallOptions options = {}) {
  if constexpr (std::is_invocable_v<const F&, const HostArray&, const std::string&>) {
    return call(std::function<HostArray(const HostArray&, const std::string&)>(std::move(fn)), arg,
                std::move(result_shape), options);
  } else {
    return call(std::function<HostArray(const HostArray&, const std::string&)>(
                    [fn = std::move(fn)](const HostArray& a, const std::string&) { return fn(a); }),
                arg, std::move(result_shape), CallOptions{.call_with_device = false});
  }
}

// Calls `fn` on the host with the values of `args` and returns `args` (or options.result).
// fn: void(const std::vector<HostArray>&), or with tap_with_device also the device name, or
// with the whole HostCallbackContext (device and `transforms`: under vmap the values are
// batched and transforms lists ("batch", {"batch_dims": ...}), as JAX's host_callback says).
std::vector<Array> id_tap(
    const std::function<void(const std::vector<HostArray>&, const HostCallbackContext&)>& fn,
    const std::vector<Array>& args, TapOptions options = {},
    std::source_location loc = std::source_location::current());
std::vector<Array> id_tap(
    const std::function<void(const std::vector<HostArray>&, const std::string&)>& fn,
    const std::vector<Array>& args, TapOptions options = {},
    std::source_location loc = std::source_location::current());
// One array: fn(const HostArray&), fn(const HostArray&, const std::string& device) or
// fn(const HostArray&, const HostCallbackContext&).
template <typename F>
Array id_tap(F fn, const Array& arg, TapOptions options = {},
             std::source_location loc = std::source_location::current()) {
  using Tap = std::function<void(const std::vector<HostArray>&, const HostCallbackContext&)>;
  Tap tap;
  if constexpr (std::is_invocable_v<const F&, const HostArray&, const HostCallbackContext&>) {
    tap = [fn = std::move(fn)](const std::vector<HostArray>& v, const HostCallbackContext& c) {
      fn(v.at(0), c);
    };
  } else if constexpr (std::is_invocable_v<const F&, const HostArray&, const std::string&>) {
    tap = [fn = std::move(fn)](const std::vector<HostArray>& v, const HostCallbackContext& c) {
      fn(v.at(0), c.device);
    };
  } else {
    tap = [fn = std::move(fn)](const std::vector<HostArray>& v, const HostCallbackContext&) {
      fn(v.at(0));
    };
    options.tap_with_device = false;
  }
  return id_tap(tap, std::vector<Array>{arg}, std::move(options), loc).at(0);
}

// Prints the values of `args` on the host: "what: <what> : (<a>, <b>)" (one value without the
// parentheses; no "what: ... : " without a what). Returns `args` (or options.result).
std::vector<Array> id_print(const std::vector<Array>& args, IdPrintOptions options = {},
                            std::source_location loc = std::source_location::current());
Array id_print(const Array& arg, IdPrintOptions options = {},
               std::source_location loc = std::source_location::current());

// Blocks until every callback dispatched so far has run (effects_barrier); raises the first
// CallbackException among them.
void barrier_wait();

}  // namespace weft::hcb
