// Reporting helpers of the benchmarks that time whole processes: medians, millisecond text,
// the machine's load, and Markdown tables for bench/README.md.
#pragma once

#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

namespace weft::bench {

double milliseconds(std::chrono::steady_clock::duration d);
// The median of `values` (0 for none).
double median(std::vector<double> values);
// "12.3 ms"
std::string ms(double value);
// A whole text file ("" when it cannot be read).
std::string read_file(const std::filesystem::path& path);
// The 1, 5 and 15 minute load averages, "0.52 0.61 0.70": other work perturbs every figure.
std::string load_average();
// A Markdown table on stdout, columns padded to their widest cell.
void print_table(const std::vector<std::string>& head,
                 const std::vector<std::vector<std::string>>& rows);

}  // namespace weft::bench
