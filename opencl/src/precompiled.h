// Headers most of weft_opencl's sources include, parsed once per build (opencl/CMakeLists.txt)
// rather than once per source. Sources still include what they use.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "codegen/cl_types.h"
#include "codegen/kernel_context.h"
#include "codegen/lowerings/families.h"
#include "weft/error.h"
#include "weft/ir/op_attrs.h"
#include "weft/log.h"
#include "weft/opencl/device.h"
