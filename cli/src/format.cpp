#include "format.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace weft::cli {

Table::Table(std::vector<std::string> headers, std::vector<Align> align)
    : headers_(std::move(headers)), align_(std::move(align)) {
  align_.resize(headers_.size(), Align::Left);
}

void Table::add_row(std::vector<std::string> cells) {
  cells.resize(headers_.size());
  rows_.push_back(std::move(cells));
}

std::string Table::render(const std::string& indent, bool with_header) const {
  std::vector<std::size_t> width(headers_.size());
  for (std::size_t c = 0; c < headers_.size(); ++c) {
    width[c] = with_header ? headers_[c].size() : 0;
    for (const auto& row : rows_) width[c] = std::max(width[c], row[c].size());
  }
  auto line = [&](const std::vector<std::string>& cells) {
    std::string out = indent;
    for (std::size_t c = 0; c < cells.size(); ++c) {
      const std::string pad(width[c] - cells[c].size(), ' ');
      const bool last = c + 1 == cells.size();
      if (align_[c] == Align::Right)
        out += pad + cells[c];
      else
        out += cells[c] + (last ? "" : pad);
      if (!last) out += "  ";
    }
    return out + "\n";
  };
  std::string out;
  if (with_header) {
    std::vector<std::string> rule;
    for (std::size_t w : width) rule.emplace_back(w, '-');
    out = line(headers_) + line(rule);
  }
  for (const auto& row : rows_) out += line(row);
  return out;
}

std::string format_seconds(double seconds) {
  char buf[32];
  // Three significant digits in the largest unit that keeps the value at least 1.
  const char* unit = "s";
  if (seconds < 1e-3) {
    seconds *= 1e6;
    unit = "us";
  } else if (seconds < 1.0) {
    seconds *= 1e3;
    unit = "ms";
  }
  const int decimals = seconds < 10 ? 2 : seconds < 100 ? 1 : 0;
  std::snprintf(buf, sizeof buf, "%.*f %s", decimals, seconds, unit);
  return buf;
}

std::string format_bytes(std::uint64_t bytes) {
  static const char* const kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double value = static_cast<double>(bytes);
  int unit = 0;
  while (value >= 1024 && unit < 4) {
    value /= 1024;
    ++unit;
  }
  char buf[32];
  if (unit == 0)
    std::snprintf(buf, sizeof buf, "%llu B", static_cast<unsigned long long>(bytes));
  else
    std::snprintf(buf, sizeof buf, "%.1f %s", value, kUnits[unit]);
  return buf;
}

std::string format_error(double error) {
  if (std::isinf(error)) return "inf";
  if (error == 0) return "0";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2g", error);
  return buf;
}

std::string join(const std::vector<std::string>& parts, const std::string& separator) {
  std::string out;
  for (std::size_t i = 0; i < parts.size(); ++i) out += (i ? separator : "") + parts[i];
  return out;
}

std::string type_string(DType dtype, const Shape& shape) {
  return std::string(dtype_name(dtype)) + shape_to_string(shape);
}

std::string json_text(const nlohmann::json& value) {
  return value.dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
}

Table kernel_table(const CompiledInfo& info) {
  using A = Table::Align;
  Table table({"#", "kernel", "kind", "launches", "elements", "fused ops", "ends because"},
              {A::Right, A::Left, A::Left, A::Right, A::Right, A::Left, A::Left});
  for (std::size_t i = 0; i < info.kernels.size(); ++i) {
    const KernelSummary& k = info.kernels[i];
    table.add_row({std::to_string(i), k.name, k.kind, std::to_string(k.launches),
                   std::to_string(k.elements), join(k.fused_ops, " "), k.why_buffer});
  }
  return table;
}

nlohmann::json kernels_json(const CompiledInfo& info) {
  nlohmann::json kernels = nlohmann::json::array();
  for (const KernelSummary& k : info.kernels)
    kernels.push_back({{"name", k.name},
                       {"kind", k.kind},
                       {"launches", k.launches},
                       {"elements", k.elements},
                       {"fused_ops", k.fused_ops},
                       {"why_buffer", k.why_buffer}});
  return kernels;
}

}  // namespace weft::cli
