#include "report.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "common.h"

namespace weft::bench {

double milliseconds(std::chrono::steady_clock::duration d) {
  return std::chrono::duration<double, std::milli>(d).count();
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const std::size_t mid = values.size() / 2;
  if (values.empty()) return 0;
  return values.size() % 2 ? values[mid] : (values[mid - 1] + values[mid]) / 2;
}

std::string ms(double value) {
  return format(value, 1) + " ms";
}

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string load_average() {
  std::istringstream in(read_file("/proc/loadavg"));
  std::string one, five, fifteen;
  in >> one >> five >> fifteen;
  return one + " " + five + " " + fifteen;
}

void print_table(const std::vector<std::string>& head,
                 const std::vector<std::vector<std::string>>& rows) {
  std::vector<std::size_t> width(head.size());
  for (std::size_t i = 0; i < head.size(); ++i) width[i] = head[i].size();
  for (const auto& row : rows)
    for (std::size_t i = 0; i < row.size(); ++i) width[i] = std::max(width[i], row[i].size());
  auto line = [&](const std::vector<std::string>& cells) {
    std::string text = "|";
    for (std::size_t i = 0; i < cells.size(); ++i)
      text += " " + cells[i] + std::string(width[i] - cells[i].size(), ' ') + " |";
    std::printf("%s\n", text.c_str());
  };
  line(head);
  std::vector<std::string> rule;
  for (std::size_t w : width) rule.push_back(std::string(w, '-'));
  line(rule);
  for (const auto& row : rows) line(row);
}

}  // namespace weft::bench
