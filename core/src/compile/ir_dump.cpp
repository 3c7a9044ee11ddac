#include "compile/ir_dump.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <mutex>
#include <set>
#include <sstream>
#include <system_error>

#include "weft/ir/text.h"
#include "weft/log.h"

namespace weft::detail {
namespace {

constexpr std::string_view kComponent = "codegen";
constexpr std::size_t kMaxNameBytes = 80;

std::mutex& dump_mutex() {
  static std::mutex mutex;
  return mutex;
}

// One warning per WEFT_DUMP_IR value: a directory that cannot be written says so once, however
// many functions the program compiles.
void warn_once(const std::string& root, const std::string& what) {
  static std::set<std::string> warned;
  {
    std::lock_guard lock(dump_mutex());
    if (!warned.insert(root).second) return;
  }
  log::warning(kComponent, "WEFT_DUMP_IR=" + root + ": " + what +
                               "; the IR is not dumped, and the program runs on");
}

std::string node_list(const std::vector<ValueId>& nodes) {
  std::string s;
  for (ValueId v : nodes) s += " " + std::to_string(v);
  return s;
}

std::string region_title(const ScheduleBlock& parent, const ScheduleStep& step, std::size_t r) {
  const Node& node = parent.fusion.graph.node(step.node);
  return "region " + std::to_string(r) + " of " + std::string(op_name(node.op)) + " node " +
         std::to_string(step.node);
}

void describe_groups(const ScheduleBlock& block, const std::string& title,
                     const std::string& indent, std::ostringstream& out) {
  const FusionPlan& fusion = block.fusion;
  out << "# " << indent << title << ", fusion groups: " << fusion.groups.size() << "\n";
  for (std::size_t i = 0; i < fusion.groups.size(); ++i) {
    const FusionGroup& group = fusion.groups[i];
    const Node& root = fusion.graph.node(group.root);
    out << "# " << indent << "  kernel " << i << ": " << FusionGroup::kind_name(group.kind)
        << ", root " << op_name(root.op) << " node " << group.root << ", size " << group.size
        << "; nodes" << node_list(group.members) << "; reads"
        << (group.inputs.empty() ? " nothing" : node_list(group.inputs));
    if (!group.side_outputs.empty()) out << "; also writes" << node_list(group.side_outputs);
    out << "\n";
  }
  for (const ScheduleStep& step : block.steps)
    for (std::size_t r = 0; r < step.regions.size(); ++r)
      describe_groups(step.regions[r], region_title(block, step, r), indent + "  ", out);
}

void describe_steps(const ScheduleBlock& block, const std::string& title, const std::string& indent,
                    std::ostringstream& out) {
  out << "# " << indent << title << ", steps: " << block.steps.size() << "\n";
  for (const ScheduleStep& step : block.steps) {
    out << "# " << indent << "  " << step_kind_name(step.kind);
    if (step.kind == ScheduleStep::Kind::Kernel) {
      const FusionGroup& group = block.fusion.groups[static_cast<std::size_t>(step.group)];
      out << " " << step.group << " (" << FusionGroup::kind_name(group.kind) << ", root node "
          << group.root << ")";
    } else {
      out << " node " << step.node << " (" << op_name(block.fusion.graph.node(step.node).op) << ")";
    }
    out << "\n";
    for (std::size_t r = 0; r < step.regions.size(); ++r)
      describe_steps(step.regions[r], region_title(block, step, r), indent + "    ", out);
  }
}

}  // namespace

std::string dump_directory_name(std::string_view function) {
  std::string name;
  for (char c : function.substr(0, kMaxNameBytes)) {
    const bool kept = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                      c == '_' || c == '-' || (c == '.' && !name.empty());
    name += kept ? c : '_';
  }
  return name.empty() ? "function" : name;
}

std::shared_ptr<IrDumpDirectory> IrDumpDirectory::open(std::string_view function) {
  const char* root_text = std::getenv("WEFT_DUMP_IR");
  if (!root_text || !*root_text) return nullptr;
  const std::string root = root_text;
  const std::string name = dump_directory_name(function);
  std::error_code error;
  std::filesystem::create_directories(root, error);
  if (error) {
    warn_once(root, "cannot make the directory (" + error.message() + ")");
    return nullptr;
  }
  // The next number to try per name: each process starts at 1 and skips what others made.
  static std::map<std::string, int, std::less<>> next_number;
  std::string failure;
  {
    std::lock_guard lock(dump_mutex());
    int& n = next_number[name];
    for (n = std::max(n, 1);; ++n) {
      std::filesystem::path path = std::filesystem::path(root) / (name + "-" + std::to_string(n));
      if (std::filesystem::create_directory(path, error)) {
        ++n;
        return std::make_shared<IrDumpDirectory>(std::move(path), std::string(function));
      }
      if (error) {
        failure = "cannot make " + path.string() + " (" + error.message() + ")";
        break;
      }
    }
  }
  warn_once(root, failure);
  return nullptr;
}

void IrDumpDirectory::write(int number, std::string_view stem, std::string_view extension,
                            std::string_view text) {
  if (failed_) return;
  char prefix[16];
  std::snprintf(prefix, sizeof prefix, "%02d-", number);
  const std::filesystem::path file =
      path_ / (prefix + std::string(stem) + "." + std::string(extension));
  std::ofstream out(file, std::ios::binary | std::ios::trunc);
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
  out.close();
  if (!out) {
    failed_ = true;
    warn_once(path_.parent_path().string(), "cannot write " + file.string());
  }
}

std::string fusion_text(const ScheduleBlock& schedule) {
  std::ostringstream out;
  out << print_graph(schedule.fusion.graph);
  out << "# Fusion groups (node numbers are node indices within each graph, as in the generated "
         "source's comments, not the printed %numbers):\n";
  describe_groups(schedule, "function", "", out);
  return out.str();
}

std::string schedule_text(const ScheduleBlock& schedule) {
  std::ostringstream out;
  out << print_graph(schedule.fusion.graph);
  out << "# Steps in the order they run (node numbers are node indices within each graph, as in "
         "the generated source's comments, not the printed %numbers):\n";
  describe_steps(schedule, "function", "", out);
  return out.str();
}

}  // namespace weft::detail
