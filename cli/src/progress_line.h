// A line on stderr for work that takes a while: nothing for work done within `after` (half a
// second), else "weft: compiling ... " when that time has passed and "... done in 1.2 s" when
// the work ends, so a long compile never looks like a hang.
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <ostream>
#include <string>
#include <thread>

namespace weft::cli {

class ProgressLine {
 public:
  explicit ProgressLine(std::string what, std::ostream& out,
                        std::chrono::milliseconds after = std::chrono::milliseconds(500));
  ~ProgressLine();  // ends the line (when it was shown)
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;

 private:
  std::string what_;
  std::ostream& out_;
  std::chrono::steady_clock::time_point start_;
  std::mutex mutex_;
  std::condition_variable done_;
  bool finished_ = false;
  bool shown_ = false;
  std::thread watcher_;
};

}  // namespace weft::cli
