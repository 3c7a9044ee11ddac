#include "weft/hcb.h"

#include <mutex>

#include "trace/array_impl.h"
#include "weft/debug.h"
#include "weft/ir/op_attrs.h"
#include "weft/print_format.h"

namespace weft::hcb {

namespace {

constexpr const char* kEffect = "host_callback";

// Stages one host_call with the host_callback effect, ordered.
std::vector<Array> host_callback(const char* api, HostCallback::Function function,
                                 std::vector<ShapeDtype> results, std::vector<Array> args,
                                 const std::source_location& loc) {
  auto callback = std::make_shared<HostCallback>();
  callback->api = api;
  callback->origin = detail::describe_location(loc);
  for (const ShapeDtype& r : results) callback->result_types.push_back({r.dtype, r.shape});
  callback->function = std::move(function);
  Attrs attrs;
  attrs.set(HostCallAttrs::kEffect, std::string(kEffect));
  attrs.set(HostEffectAttrs::kOrdered, std::int64_t{1});
  return detail::bind_host(OpKind::HostCall, std::move(args), std::move(attrs),
                           callback->result_types, callback, api, loc);
}

std::mutex& stream_mutex() {
  static std::mutex* mutex = new std::mutex();
  return *mutex;
}

}  // namespace

Array call(const std::function<HostArray(const HostArray&, const std::string&)>& fn,
           const Array& arg, OneResult result_shape, CallOptions options) {
  (void)options;  // the function's signature says whether it takes the device
  return host_callback(
             "hcb.call",
             [fn](std::vector<HostArray>& args, const HostCallbackContext& context) {
               return std::vector<HostArray>{fn(args.at(0), context.device)};
             },
             {result_shape.shape}, {arg}, result_shape.where)
      .at(0);
}

std::vector<Array> id_tap(
    const std::function<void(const std::vector<HostArray>&, const HostCallbackContext&)>& fn,
    const std::vector<Array>& args, TapOptions options, std::source_location loc) {
  host_callback(
      "hcb.id_tap",
      [fn](std::vector<HostArray>& values, const HostCallbackContext& context) {
        fn(values, context);
        return std::vector<HostArray>{};
      },
      {}, args, loc);
  if (options.result) return {*options.result};
  return args;
}

std::vector<Array> id_tap(
    const std::function<void(const std::vector<HostArray>&, const std::string&)>& fn,
    const std::vector<Array>& args, TapOptions options, std::source_location loc) {
  return id_tap(std::function<void(const std::vector<HostArray>&, const HostCallbackContext&)>(
                    [fn](const std::vector<HostArray>& values, const HostCallbackContext& context) {
                      fn(values, context.device);
                    }),
                args, std::move(options), loc);
}

std::vector<Array> id_print(const std::vector<Array>& args, IdPrintOptions options,
                            std::source_location loc) {
  std::ostream* stream = options.output_stream;
  const std::string what = options.what;
  const bool with_device = options.tap_with_device;
  host_callback(
      "hcb.id_print",
      [stream, what, with_device](std::vector<HostArray>& values,
                                  const HostCallbackContext& context) {
        // host_callback's order: transforms first, then the device, then what.
        std::string text = context.transforms.empty()
                               ? std::string()
                               : "transforms: " + describe_transforms(context.transforms) + " ";
        if (with_device) text += "device: " + context.device + " ";
        if (!what.empty()) text += "what: " + what + " : ";
        if (values.size() == 1) {
          text += format_for_print(values[0]);
        } else {
          text += "(";
          for (std::size_t k = 0; k < values.size(); ++k)
            text += (k ? ", " : "") + format_for_print(values[k]);
          text += ")";
        }
        if (stream) {
          std::lock_guard lock(stream_mutex());
          *stream << text << '\n';
          stream->flush();
        } else {
          write_debug_print(text);
        }
        return std::vector<HostArray>{};
      },
      {}, args, loc);
  if (options.result) return {*options.result};
  return args;
}

Array id_print(const Array& arg, IdPrintOptions options, std::source_location loc) {
  return id_print(std::vector<Array>{arg}, std::move(options), loc).at(0);
}

void barrier_wait() {
  effects_barrier();
}

}  // namespace weft::hcb
