// The parameter names of a .weft file as written (`%x` in `func @f(%x: f32[3])`). The parsed
// Graph numbers parameters canonically and keeps no names, so the CLI reads them from the
// text itself to let users say `--input x=x.npy` and to label inputs in its output.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace weft::cli {

// Names without the '%', in parameter order. Call only on text that parse_graph accepted;
// returns an empty vector if the signature cannot be scanned anyway.
std::vector<std::string> parameter_names(std::string_view text);

}  // namespace weft::cli
