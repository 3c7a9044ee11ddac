// Headers most of weft_core's sources include, parsed once per build (core/CMakeLists.txt) rather
// than once per source: a tenth to a third of each file's compile time, paid four times by CI's
// builds. Sources still include what they use.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <unordered_map>
#include <vector>

#include "weft/error.h"
#include "weft/ir/op_attrs.h"
#include "weft/ops.h"
#include "weft/trace/trace.h"
