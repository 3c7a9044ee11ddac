#include "progress_line.h"

#include <cstdio>

namespace weft::cli {

ProgressLine::ProgressLine(std::string what, std::ostream& out, std::chrono::milliseconds after)
    : what_(std::move(what)), out_(out), start_(std::chrono::steady_clock::now()) {
  watcher_ = std::thread([this, after] {
    std::unique_lock lock(mutex_);
    if (done_.wait_for(lock, after, [&] { return finished_; })) return;
    shown_ = true;
    out_ << "weft: " << what_ << " ..." << std::flush;
  });
}

ProgressLine::~ProgressLine() {
  {
    std::lock_guard lock(mutex_);
    finished_ = true;
  }
  done_.notify_all();
  watcher_.join();
  if (!shown_) return;
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  char took[32];
  std::snprintf(took, sizeof took, "%.2f s", seconds);
  out_ << " done in " << took << "\n" << std::flush;
}

}  // namespace weft::cli
