// WEFT_DUMP_IR: where the lowering pipeline (weft/compile/pipeline.h) writes the IR after each
// pass, and the text it writes for the passes that do not rewrite the graph.
#pragma once

#include <atomic>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>

#include "weft/compile/schedule.h"

namespace weft::detail {

// One function's dump: the directory DIR/<function>-<n> under WEFT_DUMP_IR.
class IrDumpDirectory {
 public:
  // Makes the next free DIR/<function>-<n> (n from 1; free across processes too); null when
  // WEFT_DUMP_IR is unset or empty, or when the directory cannot be made: then one warning per
  // DIR, and the program runs on.
  static std::shared_ptr<IrDumpDirectory> open(std::string_view function);

  const std::string& function() const { return function_; }
  const std::filesystem::path& path() const { return path_; }

  // Writes NN-<stem>.<extension>. A file that cannot be written warns once per DIR and ends
  // this directory's dump.
  void write(int number, std::string_view stem, std::string_view extension, std::string_view text);

  IrDumpDirectory(std::filesystem::path path, std::string function)
      : path_(std::move(path)), function_(std::move(function)) {}

 private:
  std::filesystem::path path_;
  std::string function_;
  std::atomic<bool> failed_ = false;
};

// A function name as one safe path component: letters, digits, '_', '-' and '.' kept, any other
// byte becomes '_', a leading '.' too (no "..", no hidden files), at most 80 bytes, "function"
// when empty.
std::string dump_directory_name(std::string_view function);

// The optimised graph's text followed by comments listing each block's fusion groups (Fusion),
// or its steps (Schedule). Comments keep the file IR text the parser reads.
std::string fusion_text(const ScheduleBlock& schedule);
std::string schedule_text(const ScheduleBlock& schedule);

}  // namespace weft::detail
