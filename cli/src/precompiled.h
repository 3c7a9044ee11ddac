// Headers the CLI's sources share, parsed once per build (cli/CMakeLists.txt): CLI11 and
// nlohmann::json are header-only and made each command's file a 20-second compile.
#pragma once

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <limits>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "weft/error.h"
#include "weft/weft.h"
