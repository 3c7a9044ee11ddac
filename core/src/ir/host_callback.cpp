#include "weft/ir/host_callback.h"

#include <exception>

#include "weft/error.h"

namespace weft {

namespace {

thread_local int t_callback_depth = 0;

struct CallbackDepth {
  CallbackDepth() { ++t_callback_depth; }
  ~CallbackDepth() { --t_callback_depth; }
};

std::string types_text(const std::vector<TensorType>& types) {
  std::string s = "(";
  for (std::size_t i = 0; i < types.size(); ++i) s += (i ? ", " : "") + type_to_string(types[i]);
  return s + ")";
}

}  // namespace

std::string CallbackTransform::describe() const {
  std::string dims = "(";
  for (std::size_t i = 0; i < batch_dims.size(); ++i)
    dims += (i ? ", " : "") + (batch_dims[i] ? std::to_string(*batch_dims[i]) : "None");
  if (batch_dims.size() == 1) dims += ",";  // a Python 1-tuple
  return "('" + name + "', {'batch_dims': " + dims + ")})";
}

std::string describe_transforms(const std::vector<CallbackTransform>& transforms) {
  std::string s = "[";
  for (std::size_t i = 0; i < transforms.size(); ++i)
    s += (i ? ", " : "") + transforms[i].describe();
  return s + "]";
}

bool inside_host_callback() {
  return t_callback_depth > 0;
}

std::vector<HostArray> invoke_host_callback(const HostCallback& callback,
                                            std::vector<HostArray> args,
                                            const HostCallbackContext& context,
                                            const std::vector<TensorType>& expected) {
  const std::string who = "weft: the " + callback.describe() + " (called from " +
                          (context.device.empty() ? std::string("host") : context.device) + ")";
  if (!callback.function)
    throw CallbackException(who + " has no function; pass a callable", "no function");
  std::vector<HostArray> results;
  try {
    CallbackDepth depth;
    if (callback.transforms.empty()) {
      results = callback.function(args, context);
    } else {
      HostCallbackContext with_transforms = context;
      with_transforms.transforms = callback.transforms;
      results = callback.function(args, with_transforms);
    }
  } catch (const CallbackNestingError&) {
    throw;  // every level would wrap it again: the outermost wait gets it as raised
  } catch (const std::exception& e) {
    throw CallbackException(who + " threw: " + e.what(), e.what());
  } catch (...) {
    throw CallbackException(who + " threw an exception that is not a std::exception",
                            "unknown exception");
  }
  const std::vector<TensorType>& want = expected;
  std::vector<TensorType> got;
  for (const HostArray& r : results) got.push_back({r.dtype(), r.shape()});
  if (got != want) {
    const std::string mismatch =
        "returned " + types_text(got) + " but was declared to return " + types_text(want);
    throw CallbackException(
        who + " " + mismatch + "; return arrays of the declared result shapes and dtypes",
        mismatch);
  }
  return results;
}

}  // namespace weft
