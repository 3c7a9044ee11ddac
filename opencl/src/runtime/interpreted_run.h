// One call of a program on the reference interpreter instead of its kernels (tiered
// execution): its inputs are read from the device, the interpreter runs the graph on the
// calling thread (prints and effects in program order, after those its input tokens order it
// behind), and its outputs are uploaded as new buffers. Synchronous: it returns once the
// outputs are on the device.
#pragma once

#include <memory>
#include <span>
#include <vector>

#include "weft/backend.h"
#include "weft/ir/graph.h"

namespace weft::opencl {
class OpenCLDevice;
}

namespace weft::opencl::detail {

std::vector<std::shared_ptr<Buffer>> run_on_interpreter(
    OpenCLDevice& device, const Graph& graph, std::span<const std::shared_ptr<Buffer>> inputs);

}  // namespace weft::opencl::detail
