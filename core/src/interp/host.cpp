// Host ops in the interpreter: prints and callbacks run in program order, right where the
// interpreter reaches them; tokens carry nothing.
#include <string>

#include "value.h"
#include "weft/debug.h"
#include "weft/error.h"
#include "weft/ir/effects.h"
#include "weft/ir/host_callback.h"
#include "weft/ir/op_attrs.h"
#include "weft/print_format.h"

namespace weft::interp {

std::vector<Value> eval_host(const Node& node, Operands operands,
                             const std::vector<std::shared_ptr<const HostCallback>>& callbacks) {
  const bool token_in = !operands.empty() && operands[0]->dtype == DType::Token;
  const bool token_out = !node.results.empty() && node.results[0].dtype == DType::Token;
  std::vector<HostArray> args;
  for (std::size_t k = token_in ? 1 : 0; k < operands.size(); ++k)
    args.push_back(to_host(*operands[k]));
  std::vector<Value> results;
  if (token_out) results.push_back(make_value(DType::Token, {}));
  if (node.op == OpKind::DebugPrint) {
    std::vector<std::string> texts;
    for (const HostArray& a : args) texts.push_back(format_for_print(a));
    write_debug_print(apply_format(DebugPrintAttrs::read(node.attrs).format, texts));
    return results;
  }
  const std::int64_t slot = HostCallAttrs::callback(node.attrs);
  if (slot < 0 || static_cast<std::size_t>(slot) >= callbacks.size() || !callbacks[slot])
    throw InvalidArgumentError(
        "interpret: host_call at " + node.origin.describe() + " names callback slot " +
        std::to_string(slot) + " but the graph's callback table has " +
        std::to_string(callbacks.size()) +
        " entries; a graph read from text carries no host functions, so bind them in "
        "Graph::callbacks (tracing does) before running it");
  std::vector<TensorType> expected(node.results.begin() + (token_out ? 1 : 0), node.results.end());
  std::vector<HostArray> returned = invoke_host_callback(*callbacks[slot], std::move(args),
                                                         HostCallbackContext{"host"}, expected);
  for (const HostArray& r : returned) results.push_back(from_host(r));
  return results;
}

}  // namespace weft::interp
