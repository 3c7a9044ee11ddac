#include "runtime/interpreted_run.h"

#include <string>

#include "weft/error.h"
#include "weft/host_array.h"
#include "weft/interp/interpreter.h"
#include "weft/opencl/device.h"

namespace weft::opencl::detail {

std::vector<std::shared_ptr<Buffer>> run_on_interpreter(
    OpenCLDevice& device, const Graph& graph, std::span<const std::shared_ptr<Buffer>> inputs) {
  if (inputs.size() != graph.params.size())
    throw InvalidArgumentError("weft: the compiled function takes " +
                               std::to_string(graph.params.size()) + " inputs but was given " +
                               std::to_string(inputs.size()));
  std::vector<HostArray> values;
  values.reserve(inputs.size());
  std::vector<std::shared_ptr<Buffer>> tokens;
  for (std::size_t p = 0; p < inputs.size(); ++p) {
    const Node& param = graph.node(graph.params[p]);
    if (param.dtype == DType::Token) {
      // The effects before this call have run once its token is ready. A failure they recorded
      // is not this call's: it carries over to the tokens this call returns, as on the device.
      try {
        device.wait(*inputs[p]);
      } catch (const Error&) {
      }
      tokens.push_back(inputs[p]);
      values.emplace_back(DType::Token, Shape{});
      continue;
    }
    HostArray value(param.dtype, param.shape);
    if (inputs[p]->bytes() != value.nbytes())
      throw InvalidArgumentError(
          "weft: parameter " + std::to_string(p) + " holds " + std::to_string(inputs[p]->bytes()) +
          " bytes but the function was compiled for " + std::to_string(value.nbytes()) +
          "; its dtype or shape differs from the traced one");
    device.download(*inputs[p], value.raw(), value.nbytes());
    values.push_back(std::move(value));
  }
  std::vector<HostArray> results = interpret(graph, values);
  std::vector<std::shared_ptr<Buffer>> outputs;
  outputs.reserve(results.size());
  for (const HostArray& result : results) {
    if (result.dtype() == DType::Token)
      outputs.push_back(device.token_after(tokens));
    else
      outputs.push_back(device.upload(result.raw(), result.nbytes()));
  }
  return outputs;
}

}  // namespace weft::opencl::detail
