#include "codegen/shared_kernels.h"

#include <cstddef>
#include <optional>
#include <set>
#include <string_view>
#include <unordered_map>

namespace weft::opencl::detail {
namespace {

bool is_identifier_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

// One `__kernel` definition: [begin, end) of the text, and its function's name.
struct KernelSpan {
  std::size_t begin = 0, end = 0;
  std::string name;
};

// The definition starting at `begin` (a line starting "__kernel"), if its name and braces can
// be found: the name is the identifier after `void`, the body ends where its braces balance
// (comments skipped; generated kernels hold no string or character literals with braces).
std::optional<KernelSpan> kernel_at(std::string_view text, std::size_t begin) {
  const std::size_t open = text.find('{', begin);
  std::size_t v = text.find("void ", begin);
  while (v != std::string_view::npos && v < open && text[v - 1] != ' ' && text[v - 1] != '\n')
    v = text.find("void ", v + 1);
  if (v == std::string_view::npos || open == std::string_view::npos || v > open) return {};
  v += 5;
  std::size_t name_end = v;
  while (name_end < text.size() && is_identifier_char(text[name_end])) ++name_end;
  if (name_end == v) return {};
  int depth = 0;
  for (std::size_t i = open; i < text.size(); ++i) {
    if (text.compare(i, 2, "//") == 0) {
      i = text.find('\n', i);
      if (i == std::string_view::npos) return {};
    } else if (text.compare(i, 2, "/*") == 0) {
      i = text.find("*/", i + 2);
      if (i == std::string_view::npos) return {};
      ++i;
    } else if (text[i] == '{') {
      ++depth;
    } else if (text[i] == '}' && --depth == 0) {
      std::size_t end = i + 1;
      if (end < text.size() && text[end] == '\n') ++end;
      return KernelSpan{begin, end, std::string(text.substr(v, name_end - v))};
    }
  }
  return {};
}

// Whether `text` at `at` holds `name` as a whole identifier or as the start of one that goes on
// with '_' (the helpers a kernel's code emits before it are named after it: k2_argsort_key).
bool names_at(std::string_view text, std::size_t at, const std::string& name) {
  if (text.compare(at, name.size(), name) != 0) return false;
  if (at > 0 && is_identifier_char(text[at - 1])) return false;
  const std::size_t after = at + name.size();
  return after == text.size() || text[after] == '_' || !is_identifier_char(text[after]);
}

// A kernel's code with the helpers emitted before it, without comments or runs of blanks,
// and with the names derived from its own replaced: equal for kernels that compile alike.
std::string comparable(std::string_view chunk, const std::string& name) {
  std::string out;
  out.reserve(chunk.size());
  for (std::size_t i = 0; i < chunk.size();) {
    if (chunk[i] == '\n' || chunk[i] == ' ') {  // blank lines and indentation between items
      if (out.empty() || out.back() == '\n' || out.back() == ' ') {
        ++i;
        continue;
      }
      out += chunk[i++];
    } else if (chunk.compare(i, 2, "//") == 0) {
      const std::size_t eol = chunk.find('\n', i);
      i = eol == std::string_view::npos ? chunk.size() : eol;
    } else if (names_at(chunk, i, name)) {
      out += '\x01';
      i += name.size();
    } else {
      out += chunk[i++];
    }
  }
  return out;
}

// The lines of `chunk` that are whole-line comments: what a reader of the program keeps.
std::string comment_lines(std::string_view chunk) {
  std::string out;
  for (std::size_t i = 0; i < chunk.size();) {
    std::size_t eol = chunk.find('\n', i);
    eol = eol == std::string_view::npos ? chunk.size() : eol + 1;
    if (chunk.compare(i, 2, "//") == 0) out.append(chunk.substr(i, eol - i));
    i = eol;
  }
  return out;
}

void point_launches(BlockPlan& block, const std::unordered_map<std::string, std::string>& kept) {
  for (StepPlan& step : block.steps) {
    if (step.kind == StepPlan::Kind::Launch)
      if (auto found = kept.find(step.launch.kernel); found != kept.end())
        step.launch.function = found->second;
    for (BlockPlan& region : step.regions) point_launches(region, kept);
  }
}

// Whether code left in `text` (comments aside) still names something of a dropped kernel's
// (a helper another kernel calls): then nothing is dropped.
bool still_named(std::string_view text, const std::unordered_map<std::string, std::string>& kept,
                 const std::set<std::string>& kernels) {
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text.compare(i, 2, "//") == 0) {
      i = text.find('\n', i);
      if (i == std::string_view::npos) return false;
      continue;
    }
    if (!is_identifier_char(text[i]) || (i > 0 && is_identifier_char(text[i - 1]))) continue;
    std::size_t end = i;
    while (end < text.size() && is_identifier_char(text[end])) ++end;
    const std::string identifier(text.substr(i, end - i));
    if (!kernels.count(identifier))
      for (const auto& [dropped, _] : kept)
        if (names_at(identifier, 0, dropped)) return true;
    i = end - 1;
  }
  return false;
}

}  // namespace

std::string share_identical_kernels(const std::string& kernels, BlockPlan& plan) {
  const std::string_view text = kernels;
  std::unordered_map<std::string, std::string> first_by_code;  // comparable code -> kept name
  std::unordered_map<std::string, std::string> kept;           // dropped name -> kept name
  std::set<std::string> names;
  std::string out;
  out.reserve(text.size());
  std::size_t copied = 0;  // text before this is in `out`; a kernel's chunk starts here too
  for (std::size_t at = text.find("__kernel"); at != std::string_view::npos;
       at = text.find("__kernel", at + 1)) {
    if (at < copied || (at > 0 && text[at - 1] != '\n')) continue;
    const std::optional<KernelSpan> span = kernel_at(text, at);
    if (!span) continue;
    names.insert(span->name);
    const std::string_view chunk = text.substr(copied, span->end - copied);
    auto [first, inserted] = first_by_code.try_emplace(comparable(chunk, span->name), span->name);
    if (!inserted) {
      out += comment_lines(chunk);
      out += "// " + span->name + " runs as " + first->second + ", whose code is the same\n";
      kept.emplace(span->name, first->second);
    } else {
      out.append(chunk);
    }
    copied = span->end;
  }
  if (kept.empty()) return kernels;
  out.append(text.substr(copied));
  if (still_named(out, kept, names)) return kernels;
  point_launches(plan, kept);
  return out;
}

}  // namespace weft::opencl::detail
