// Released device buffers kept for reuse. On CPU devices a fresh allocation pays a page fault
// on the first touch of every page, which for a memory-bound kernel writing a new output can
// cost more than the kernel; outputs of repeated calls reuse the memory of released ones.
#pragma once

#include <CL/cl.h>

#include <cstddef>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "weft/opencl/cl_handle.h"
#include "weft/telemetry/counter_gauge.h"

namespace weft::opencl {

class BufferPool {
 public:
  struct Entry {
    ClMem mem;
    std::vector<ClEvent> pending;  // commands that may still use the memory
  };

  // `device` names the device in the pool's counter track (buffer_pool_bytes).
  BufferPool(std::size_t capacity_bytes, std::string device)
      : pooled_("buffer_pool_bytes", std::move(device)), capacity_(capacity_bytes) {}

  // A released buffer of exactly `bytes` (allocation size), if one is pooled.
  std::optional<Entry> take(std::size_t bytes);
  // Keeps `mem` for reuse unless the pool is full or a command using it failed (a failed
  // event in a later wait list would fail that later, unrelated command).
  void give(std::size_t bytes, ClMem mem, std::vector<ClEvent> pending);
  std::size_t pooled_bytes() const;

 private:
  std::mutex mutex_;
  std::multimap<std::size_t, Entry> entries_;
  telemetry::CounterGauge pooled_;  // bytes pooled; changed under mutex_
  std::size_t capacity_;
};

// Drops completed events; returns false if any of them failed.
bool prune_completed(std::vector<ClEvent>& events);

}  // namespace weft::opencl
