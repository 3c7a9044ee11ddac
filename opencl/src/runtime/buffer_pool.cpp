#include "weft/opencl/buffer_pool.h"

#include <algorithm>

namespace weft::opencl {

bool prune_completed(std::vector<ClEvent>& events) {
  bool ok = true;
  std::erase_if(events, [&ok](const ClEvent& e) {
    cl_int status = CL_COMPLETE;
    if (clGetEventInfo(e.get(), CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof(status), &status,
                       nullptr) != CL_SUCCESS)
      return false;  // unknown: keep waiting on it
    if (status < 0) ok = false;
    return status == CL_COMPLETE || status < 0;
  });
  return ok;
}

std::optional<BufferPool::Entry> BufferPool::take(std::size_t bytes) {
  std::lock_guard lock(mutex_);
  auto it = entries_.find(bytes);
  if (it == entries_.end()) return std::nullopt;
  Entry entry = std::move(it->second);
  entries_.erase(it);
  pooled_.add(-static_cast<std::int64_t>(bytes));
  return entry;
}

void BufferPool::give(std::size_t bytes, ClMem mem, std::vector<ClEvent> pending) {
  if (!prune_completed(pending)) return;  // releasing `mem` frees it once its commands end
  std::lock_guard lock(mutex_);
  const auto pooled = static_cast<std::size_t>(pooled_.value());
  if (pooled + bytes > capacity_) return;
  pooled_.add(static_cast<std::int64_t>(bytes));
  entries_.emplace(bytes, Entry{std::move(mem), std::move(pending)});
}

std::size_t BufferPool::pooled_bytes() const {
  return static_cast<std::size_t>(pooled_.value());
}

}  // namespace weft::opencl
