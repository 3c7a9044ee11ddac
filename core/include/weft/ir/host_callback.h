// What a host_call node calls: a C++ callable on host arrays. The graph keeps these in its
// callback table (Graph::callbacks) and nodes name them by slot, so a graph's text, and the
// cache keys made from it, never contain an address; an executable keeps the table alive.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "weft/host_array.h"
#include "weft/ir/shape_rules.h"

namespace weft {

// A transformation a callback was staged under (host_callback's `transforms` in JAX): vmap
// adds ("batch", {"batch_dims": ...}), one entry per argument, nullopt for one that is not
// batched.
struct CallbackTransform {
  std::string name;
  std::vector<std::optional<int>> batch_dims;
  // "('batch', {'batch_dims': (0, None)})", as JAX's host_callback prints it.
  std::string describe() const;
};
// "[('batch', {'batch_dims': (0, 0)})]".
std::string describe_transforms(const std::vector<CallbackTransform>& transforms);

// Where a callback runs from: the device that sent its arguments ("cpu:0"), or "host" in the
// reference interpreter and for eager calls made without a device; and the transformations it
// was staged under, innermost first.
struct HostCallbackContext {
  std::string device;
  std::vector<CallbackTransform> transforms = {};
};

struct HostCallback {
  using Function = std::function<std::vector<HostArray>(std::vector<HostArray>& args,
                                                        const HostCallbackContext&)>;

  std::string api;     // "io_callback", "pure_callback", "hcb.call", "hcb.id_tap", ...
  std::string origin;  // the user's line that staged it: "demo.cpp:12 (main)"
  std::vector<TensorType> result_types;
  Function function;
  std::vector<CallbackTransform> transforms;  // passed to the function in its context

  // "io_callback at demo.cpp:12 (main)", for messages.
  std::string describe() const { return api + " at " + origin; }
};

// Calls `callback` on `args` and checks what it returns against `expected` (the node's array
// results). Throws CallbackException: the callback's own exception (its message kept as the
// original message) or a result of the wrong count, shape or dtype, naming the callback and
// the device.
// Whether this thread is inside a host callback's function right now.
bool inside_host_callback();

std::vector<HostArray> invoke_host_callback(const HostCallback& callback,
                                            std::vector<HostArray> args,
                                            const HostCallbackContext& context,
                                            const std::vector<TensorType>& expected);

}  // namespace weft
