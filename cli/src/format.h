// Output formatting shared by the subcommands: aligned tables, durations, sizes, and the
// kernel summaries of a compiled executable as text or JSON.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "weft/backend.h"

namespace weft::cli {

// A plain-text table whose columns are padded to their widest cell.
class Table {
 public:
  enum class Align { Left, Right };
  explicit Table(std::vector<std::string> headers, std::vector<Align> align = {});
  void add_row(std::vector<std::string> cells);
  // One line per row, each prefixed by `indent`; the header, when shown, is underlined.
  std::string render(const std::string& indent = "  ", bool with_header = true) const;

 private:
  std::vector<std::string> headers_;
  std::vector<Align> align_;
  std::vector<std::vector<std::string>> rows_;
};

std::string format_seconds(double seconds);     // "850 us", "12.3 ms", "1.52 s"
std::string format_bytes(std::uint64_t bytes);  // "512 B", "64.0 KiB", "15.6 GiB"
std::string format_error(double error);         // "3.2e-07", "0", "inf"
std::string join(const std::vector<std::string>& parts, const std::string& separator);
std::string type_string(DType dtype, const Shape& shape);  // "f32[6,8]"

// `value` as indented JSON text for stdout. Strings holding bytes that are not UTF-8 (a Latin-1
// file name, a path, a printed line) show U+FFFD in their place, instead of failing the whole
// report with nlohmann's type_error 316.
std::string json_text(const nlohmann::json& value);

// The kernels of a compiled function: index, name, kind, elements written, fused ops.
Table kernel_table(const CompiledInfo& info);
nlohmann::json kernels_json(const CompiledInfo& info);

}  // namespace weft::cli
