// The headers nearly every test file includes, precompiled once for all of them
// (tests/CMakeLists.txt): parsing gtest, nlohmann::json and weft's public headers was a fifth to a
// third of a test file's compile time, paid in three of CI's builds. Test files still
// include what they use; this only makes those includes cheap. weft/weft.h registers the OpenCL
// backend: a test that must run without it stays off this header (tests/CMakeLists.txt).
#pragma once

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "weft/error.h"
#include "weft/interp/interpreter.h"
#include "weft/ir/text.h"
#include "weft/opencl/device.h"
#include "weft/opencl/executable.h"
#include "weft/opencl/register.h"
#include "weft/ops.h"
#include "weft/transforms/grad.h"
#include "weft/transforms/jvp.h"
#include "weft/transforms/vmap.h"
#include "weft/weft.h"
