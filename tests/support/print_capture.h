// Captures weft's debug prints (debug_print, hcb::id_print) line by line, safely from the
// receiver threads that write them, for tests that check what was printed and in which order.
#pragma once

#include <mutex>
#include <ostream>
#include <streambuf>
#include <string>
#include <vector>

#include "weft/callback.h"
#include "weft/debug.h"

namespace weft::testing {

class PrintCapture {
 public:
  PrintCapture() { set_debug_print_stream(&stream_); }
  ~PrintCapture() {
    // Prints still pending would write into a destroyed stream.
    try {
      effects_barrier();
    } catch (...) {
    }
    set_debug_print_stream(nullptr);
  }
  PrintCapture(const PrintCapture&) = delete;
  PrintCapture& operator=(const PrintCapture&) = delete;

  // Every complete line printed so far (call effects_barrier first to see them all).
  std::vector<std::string> lines() const { return buffer_.lines(); }
  void clear() { buffer_.clear(); }

 private:
  class LineBuffer : public std::streambuf {
   public:
    std::vector<std::string> lines() const {
      std::lock_guard lock(mutex_);
      return lines_;
    }
    void clear() {
      std::lock_guard lock(mutex_);
      lines_.clear();
    }

   protected:
    int_type overflow(int_type c) override {
      if (c == traits_type::eof()) return traits_type::not_eof(c);
      const char ch = traits_type::to_char_type(c);
      xsputn(&ch, 1);
      return c;
    }
    std::streamsize xsputn(const char* s, std::streamsize n) override {
      std::lock_guard lock(mutex_);
      for (std::streamsize i = 0; i < n; ++i) {
        if (s[i] == '\n') {
          lines_.push_back(std::move(partial_));
          partial_.clear();
        } else {
          partial_ += s[i];
        }
      }
      return n;
    }

   private:
    mutable std::mutex mutex_;
    std::vector<std::string> lines_;
    std::string partial_;
  };

  LineBuffer buffer_;
  std::ostream stream_{&buffer_};
};

}  // namespace weft::testing
